// RUN: xlair-opt %s -p xla-to-linalg | filecheck %s

// CHECK-LABEL: func.func @f32
// CHECK: linalg.generic
// CHECK: math.log1p
// CHECK-NOT: xla.
// CHECK: return
func.func @f32(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = "xla.log1p"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}
