// RUN: xlair-opt %s -p xla-to-linalg | filecheck %s

// CHECK-LABEL: func.func @f32
// CHECK: linalg.generic
// CHECK: arith.bitcast
// CHECK: arith.shrsi
// CHECK: arith.xori
// CHECK: arith.cmpi ne
// CHECK-NOT: xla.
// CHECK: return
func.func @f32(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xi1> {
  %r = "xla.ne_total_order"(%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  return %r : tensor<4xi1>
}
