// RUN: xlair-opt %s --split-input-file --verify-diagnostics

// Constraints of xla.batch_norm_inference (BatchNormInference), checked by its shape rule.

// negative feature_index
func.func @batch_norm_inference_0(%arg0: tensor<2x3x4xf32>, %arg1: tensor<4xf32>, %arg2: tensor<4xf32>, %arg3: tensor<4xf32>, %arg4: tensor<4xf32>) -> tensor<2x3x4xf32> {
  // expected-error@+1 {{'xla.batch_norm_inference' feature_index must be a non-negative number; got -1 [batch_norm_inference_c1]}}
  %0 = "xla.batch_norm_inference"(%arg0, %arg1, %arg2, %arg3, %arg4) {epsilon = 1.000000e-03 : f64, feature_index = -1 : i64} : (tensor<2x3x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}

// -----

// variance of the wrong size
func.func @batch_norm_inference_1(%arg0: tensor<2x3x4xf32>, %arg1: tensor<4xf32>, %arg2: tensor<4xf32>, %arg3: tensor<4xf32>, %arg4: tensor<3xf32>) -> tensor<2x3x4xf32> {
  // expected-error@+1 {{'xla.batch_norm_inference' variance must have the feature count of operand (4) elements; got f32[3] [batch_norm_inference_c6]}}
  %0 = "xla.batch_norm_inference"(%arg0, %arg1, %arg2, %arg3, %arg4) {epsilon = 1.000000e-03 : f64, feature_index = 2 : i64} : (tensor<2x3x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<3xf32>) -> tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}
