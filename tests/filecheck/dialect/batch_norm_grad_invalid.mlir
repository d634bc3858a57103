// RUN: xlair-opt %s --split-input-file --verify-diagnostics

// Constraints of xla.batch_norm_grad (BatchNormGrad), checked by its shape rule.

// feature_index out of range
func.func @batch_norm_grad_0(%arg0: tensor<2x3x4xf32>, %arg1: tensor<4xf32>, %arg2: tensor<4xf32>, %arg3: tensor<4xf32>, %arg4: tensor<2x3x4xf32>) -> tuple<tensor<2x3x4xf32>, tensor<4xf32>, tensor<4xf32>> {
  // expected-error@+1 {{'xla.batch_norm_grad' feature_index must be the index of a dimension of operand, smaller than its rank 3; got 3 [batch_norm_grad_c1]}}
  %0 = "xla.batch_norm_grad"(%arg0, %arg1, %arg2, %arg3, %arg4) {epsilon = 1.000000e-03 : f64, feature_index = 3 : i64} : (tensor<2x3x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<2x3x4xf32>) -> tuple<tensor<2x3x4xf32>, tensor<4xf32>, tensor<4xf32>>
  return %0 : tuple<tensor<2x3x4xf32>, tensor<4xf32>, tensor<4xf32>>
}

// -----

// grad_output shape differs from operand
func.func @batch_norm_grad_1(%arg0: tensor<2x3x4xf32>, %arg1: tensor<4xf32>, %arg2: tensor<4xf32>, %arg3: tensor<4xf32>, %arg4: tensor<2x3x5xf32>) -> tuple<tensor<2x3x4xf32>, tensor<4xf32>, tensor<4xf32>> {
  // expected-error@+1 {{'xla.batch_norm_grad' grad_output must have the shape of operand (f32[2,3,4]); got f32[2,3,5] [batch_norm_grad_c3]}}
  %0 = "xla.batch_norm_grad"(%arg0, %arg1, %arg2, %arg3, %arg4) {epsilon = 1.000000e-03 : f64, feature_index = 2 : i64} : (tensor<2x3x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<2x3x5xf32>) -> tuple<tensor<2x3x4xf32>, tensor<4xf32>, tensor<4xf32>>
  return %0 : tuple<tensor<2x3x4xf32>, tensor<4xf32>, tensor<4xf32>>
}
