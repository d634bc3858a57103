// RUN: xlair-opt %s --split-input-file --verify-diagnostics

// Constraints of xla.rng_normal (RngNormal), checked by its shape rule.

// mu not a scalar
func.func @rng_normal_0(%arg0: tensor<2xf32>, %arg1: tensor<f32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'xla.rng_normal' mu must be a scalar; got f32[2] [rng_i1]}}
  %0 = "xla.rng_normal"(%arg0, %arg1) {shape = tensor<2x3xf32>} : (tensor<2xf32>, tensor<f32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// shape of another type
func.func @rng_normal_1(%arg0: tensor<f32>, %arg1: tensor<f32>) -> tensor<2x3xf64> {
  // expected-error@+1 {{'xla.rng_normal' shape must have the element type of the parameters (F32); got f64[2,3] [rng_c1]}}
  %0 = "xla.rng_normal"(%arg0, %arg1) {shape = tensor<2x3xf64>} : (tensor<f32>, tensor<f32>) -> tensor<2x3xf64>
  return %0 : tensor<2x3xf64>
}
