// RUN: xlair-opt %s -p xla-to-linalg | filecheck %s

// CHECK-LABEL: func.func @f32
// On the CPU (or no target), f32 is computed in f64 (lowering/libm.py) and rounded once.
// CHECK: linalg.generic
// CHECK: arith.extf %{{.*}} : f32 to f64
// CHECK-NOT: math.atan2
// CHECK: arith.truncf %{{.*}} : f64 to f32
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
