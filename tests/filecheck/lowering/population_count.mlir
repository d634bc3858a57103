// RUN: xlair-opt %s -p xla-to-linalg | filecheck %s

// CHECK-LABEL: func.func @u32
// CHECK: linalg.generic
// CHECK: math.ctpop
// CHECK-NOT: xla.
// CHECK: return
func.func @u32(%a: tensor<4xui32>) -> tensor<4xui32> {
  %r = "xla.population_count"(%a) : (tensor<4xui32>) -> tensor<4xui32>
  return %r : tensor<4xui32>
}
