// RUN: xlair-opt %s -p xla-to-linalg | filecheck %s

// CHECK-LABEL: func.func @f32
// CHECK: linalg.generic
// CHECK: math.absf
// CHECK: arith.cmpf one
// CHECK-NOT: xla.
// CHECK: return
func.func @f32(%a: tensor<4xf32>) -> tensor<4xi1> {
  %r = "xla.is_finite"(%a) : (tensor<4xf32>) -> tensor<4xi1>
  return %r : tensor<4xi1>
}
