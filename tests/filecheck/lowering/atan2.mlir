// RUN: xlair-opt %s -p xla-to-linalg | filecheck %s

// CHECK-LABEL: func.func @f32
// CHECK: linalg.generic
// CHECK: math.atan2
// CHECK-NOT: xla.
// CHECK: return
func.func @f32(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %r = "xla.atan2"(%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// CHECK-LABEL: func.func @f64
// CHECK: linalg.generic
// CHECK: arith.divf
// CHECK: arith.select
// CHECK-NOT: xla.
// CHECK: return
func.func @f64(%a: tensor<4xf64>, %b: tensor<4xf64>) -> tensor<4xf64> {
  %r = "xla.atan2"(%a, %b) : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
  return %r : tensor<4xf64>
}
