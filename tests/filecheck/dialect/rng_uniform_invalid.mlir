// RUN: xlair-opt %s --split-input-file --verify-diagnostics

// Constraints of xla.rng_uniform (RngUniform), checked by its shape rule.

// bounds of different types
func.func @rng_uniform_0(%arg0: tensor<f32>, %arg1: tensor<i32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'xla.rng_uniform' b must have the element type of a (F32); got s32[] [rng_c1]}}
  %0 = "xla.rng_uniform"(%arg0, %arg1) {shape = tensor<2x3xf32>} : (tensor<f32>, tensor<i32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
