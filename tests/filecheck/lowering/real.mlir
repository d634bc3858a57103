// RUN: xlair-opt %s -p xla-to-linalg | filecheck %s

// CHECK-LABEL: func.func @c64
// CHECK: linalg.generic
// CHECK: complex.re
// CHECK-NOT: xla.
// CHECK: return
func.func @c64(%a: tensor<4xcomplex<f32>>) -> tensor<4xf32> {
  %r = "xla.real"(%a) : (tensor<4xcomplex<f32>>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}
