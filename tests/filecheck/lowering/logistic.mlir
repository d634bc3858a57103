// RUN: xlair-opt %s -p xla-to-linalg | filecheck %s

// CHECK-LABEL: func.func @f32
// CHECK: linalg.generic
// CHECK: arith.negf
// CHECK-NOT: math.exp
// CHECK: math.fma
// CHECK: arith.addf
// CHECK: arith.divf
// CHECK-NOT: xla.
// CHECK: return
func.func @f32(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = "xla.logistic"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}
