// RUN: xlair-opt %s --split-input-file --verify-diagnostics

// Constraints of xla.clamp (Clamp), checked by its shape rule.

// bound of a third shape
func.func @clamp_0(%arg0: tensor<f32>, %arg1: tensor<2x3xf32>, %arg2: tensor<3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'xla.clamp' max must be a scalar or have the shape of operand (f32[2,3]); got f32[3] [clamp_c2]}}
  %0 = "xla.clamp"(%arg0, %arg1, %arg2) : (tensor<f32>, tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// bound of another element type
func.func @clamp_1(%arg0: tensor<i32>, %arg1: tensor<2x3xf32>, %arg2: tensor<f32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'xla.clamp' min must have the element type of operand (F32); got s32[] [clamp_c3]}}
  %0 = "xla.clamp"(%arg0, %arg1, %arg2) : (tensor<i32>, tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
