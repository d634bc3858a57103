// RUN: xlair-opt %s -p xla-to-linalg | filecheck %s

// CHECK-LABEL: func.func @u32
// CHECK: linalg.generic
// CHECK: arith.ori
// CHECK-NOT: xla.
// CHECK: return
func.func @u32(%a: tensor<4xui32>, %b: tensor<4xui32>) -> tensor<4xui32> {
  %r = "xla.or"(%a, %b) : (tensor<4xui32>, tensor<4xui32>) -> tensor<4xui32>
  return %r : tensor<4xui32>
}
