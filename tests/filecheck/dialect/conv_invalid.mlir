// RUN: xlair-opt %s --split-input-file --verify-diagnostics

// Constraints of xla.conv (Conv (convolution)), checked by its shape rule.

// kernel element type differs
func.func @conv_0(%arg0: tensor<1x2x5x5xf32>, %arg1: tensor<3x2x3x3xi32>) -> tensor<1x3x5x5xf32> {
  // expected-error@+1 {{'xla.conv' rhs must have the element type of lhs (F32); got s32[3,2,3,3] [convolution_c27]}}
  %0 = "xla.conv"(%arg0, %arg1) {batch_group_count = 1 : i64, feature_group_count = 1 : i64, padding = "SAME", window_strides = array<i64: 1, 1>} : (tensor<1x2x5x5xf32>, tensor<3x2x3x3xi32>) -> tensor<1x3x5x5xf32>
  return %0 : tensor<1x3x5x5xf32>
}

// -----

// one stride for two spatial dimensions
func.func @conv_1(%arg0: tensor<1x2x5x5xf32>, %arg1: tensor<3x2x3x3xf32>) -> tensor<1x3x5x5xf32> {
  // expected-error@+1 {{'xla.conv' window_strides must have 2 elements (one per spatial dimension (2)); got [1] [convolution_c2]}}
  %0 = "xla.conv"(%arg0, %arg1) {batch_group_count = 1 : i64, feature_group_count = 1 : i64, padding = "SAME", window_strides = array<i64: 1>} : (tensor<1x2x5x5xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x5x5xf32>
  return %0 : tensor<1x3x5x5xf32>
}
