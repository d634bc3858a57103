// RUN: xlair-opt %s --split-input-file --verify-diagnostics

// Constraints of xla.batch_norm_training (BatchNormTraining), checked by its shape rule.

// feature_index out of range
func.func @batch_norm_training_0(%arg0: tensor<2x3x4xf32>, %arg1: tensor<4xf32>, %arg2: tensor<4xf32>) -> tuple<tensor<2x3x4xf32>, tensor<4xf32>, tensor<4xf32>> {
  // expected-error@+1 {{'xla.batch_norm_training' feature_index must be the index of a dimension of operand, smaller than its rank 3; got 3 [batch_norm_training_c1]}}
  %0 = "xla.batch_norm_training"(%arg0, %arg1, %arg2) {epsilon = 1.000000e-03 : f64, feature_index = 3 : i64} : (tensor<2x3x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tuple<tensor<2x3x4xf32>, tensor<4xf32>, tensor<4xf32>>
  return %0 : tuple<tensor<2x3x4xf32>, tensor<4xf32>, tensor<4xf32>>
}

// -----

// scale of the wrong size
func.func @batch_norm_training_1(%arg0: tensor<2x3x4xf32>, %arg1: tensor<3xf32>, %arg2: tensor<4xf32>) -> tuple<tensor<2x3x4xf32>, tensor<4xf32>, tensor<4xf32>> {
  // expected-error@+1 {{'xla.batch_norm_training' scale must have the feature count of operand (4) elements; got f32[3] [batch_norm_training_c3]}}
  %0 = "xla.batch_norm_training"(%arg0, %arg1, %arg2) {epsilon = 1.000000e-03 : f64, feature_index = 2 : i64} : (tensor<2x3x4xf32>, tensor<3xf32>, tensor<4xf32>) -> tuple<tensor<2x3x4xf32>, tensor<4xf32>, tensor<4xf32>>
  return %0 : tuple<tensor<2x3x4xf32>, tensor<4xf32>, tensor<4xf32>>
}
