// RUN: xlair-opt %s --split-input-file --verify-diagnostics

// Constraints of xla.concatenate (Concatenate), checked by its shape rule.

// dimension out of range
func.func @concatenate_0(%arg0: tensor<2x3xf32>, %arg1: tensor<2x3xf32>) -> tensor<4x3xf32> {
  // expected-error@+1 {{'xla.concatenate' dimension must be dimensions of the operand's rank 2, in [0, 2); got [2] [concatenate_c4]}}
  %0 = "xla.concatenate"(%arg0, %arg1) {dimension = 2 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

// other dimensions differ
func.func @concatenate_1(%arg0: tensor<2x3xf32>, %arg1: tensor<2x4xf32>) -> tensor<4x3xf32> {
  // expected-error@+1 {{'xla.concatenate' operands[1] must match operands[0] (f32[2,3]) in every dimension but 0; got f32[2,4] [concatenate_c2]}}
  %0 = "xla.concatenate"(%arg0, %arg1) {dimension = 0 : i64} : (tensor<2x3xf32>, tensor<2x4xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}
