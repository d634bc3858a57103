// RUN: xlair-opt %s -p xla-to-linalg | filecheck %s

// CHECK-LABEL: func.func @f32
// CHECK: linalg.generic
// CHECK: math.absf
// CHECK-NOT: xla.
// CHECK: return
func.func @f32(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = "xla.abs"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// CHECK-LABEL: func.func @s32
// CHECK: linalg.generic
// CHECK: math.absi
// CHECK-NOT: xla.
// CHECK: return
func.func @s32(%a: tensor<4xi32>) -> tensor<4xi32> {
  %r = "xla.abs"(%a) : (tensor<4xi32>) -> tensor<4xi32>
  return %r : tensor<4xi32>
}

// CHECK-LABEL: func.func @c64
// CHECK: linalg.generic
// CHECK: complex.re
// CHECK: math.sqrt
// CHECK-NOT: xla.
// CHECK: return
func.func @c64(%a: tensor<4xcomplex<f32>>) -> tensor<4xf32> {
  %r = "xla.abs"(%a) : (tensor<4xcomplex<f32>>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}
