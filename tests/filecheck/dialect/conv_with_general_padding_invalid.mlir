// RUN: xlair-opt %s --split-input-file --verify-diagnostics

// Constraints of xla.conv_with_general_padding (ConvWithGeneralPadding (convolution)), checked by its shape rule.

// zero dilation
func.func @conv_with_general_padding_0(%arg0: tensor<1x2x5xf32>, %arg1: tensor<3x2x2xf32>) -> tensor<1x3x4xf32> {
  // expected-error@+1 {{'xla.conv_with_general_padding' lhs_dilation must be positive; got [0] [convolution_c6]}}
  %0 = "xla.conv_with_general_padding"(%arg0, %arg1) {batch_group_count = 1 : i64, feature_group_count = 1 : i64, lhs_dilation = array<i64: 0>, padding = [array<i64: 1, 0>], rhs_dilation = array<i64: 2>, window_strides = array<i64: 1>} : (tensor<1x2x5xf32>, tensor<3x2x2xf32>) -> tensor<1x3x4xf32>
  return %0 : tensor<1x3x4xf32>
}

// -----

// two pads for one spatial dimension
func.func @conv_with_general_padding_1(%arg0: tensor<1x2x5xf32>, %arg1: tensor<3x2x2xf32>) -> tensor<1x3x4xf32> {
  // expected-error@+1 {{'xla.conv_with_general_padding' padding must have 1 elements (one per spatial dimension (1)); got [[1, 0], [0, 0]] [convolution_c4]}}
  %0 = "xla.conv_with_general_padding"(%arg0, %arg1) {batch_group_count = 1 : i64, feature_group_count = 1 : i64, lhs_dilation = array<i64: 1>, padding = [array<i64: 1, 0>, array<i64: 0, 0>], rhs_dilation = array<i64: 2>, window_strides = array<i64: 1>} : (tensor<1x2x5xf32>, tensor<3x2x2xf32>) -> tensor<1x3x4xf32>
  return %0 : tensor<1x3x4xf32>
}
