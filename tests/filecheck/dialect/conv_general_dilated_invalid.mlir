// RUN: xlair-opt %s --split-input-file --verify-diagnostics

// Constraints of xla.conv_general_dilated (ConvWithGeneralPadding (convolution)), checked by its shape rule.

// dimension numbers repeat a dimension
func.func @conv_general_dilated_0(%arg0: tensor<1x6x6x2xf32>, %arg1: tensor<3x3x2x4xf32>) -> tensor<1x3x3x4xf32> {
  // expected-error@+1 {{'xla.conv_general_dilated' dimension_numbers.input_*_dimension(s) must be distinct dimensions of lhs; got [0, 0, 1, 2] [convolution_c13]}}
  %0 = "xla.conv_general_dilated"(%arg0, %arg1) {batch_group_count = 1 : i64, dimension_numbers = {input_batch_dimension = 0 : i64, input_feature_dimension = 0 : i64, input_spatial_dimensions = array<i64: 1, 2>, kernel_input_feature_dimension = 2 : i64, kernel_output_feature_dimension = 3 : i64, kernel_spatial_dimensions = array<i64: 0, 1>, output_batch_dimension = 0 : i64, output_feature_dimension = 3 : i64, output_spatial_dimensions = array<i64: 1, 2>}, feature_group_count = 1 : i64, lhs_dilation = array<i64: 1, 1>, padding = [array<i64: 1, 1>, array<i64: 1, 1>], rhs_dilation = array<i64: 1, 1>, window_strides = array<i64: 2, 2>} : (tensor<1x6x6x2xf32>, tensor<3x3x2x4xf32>) -> tensor<1x3x3x4xf32>
  return %0 : tensor<1x3x3x4xf32>
}

// -----

// zero dilation
func.func @conv_general_dilated_1(%arg0: tensor<1x6x6x2xf32>, %arg1: tensor<3x3x2x4xf32>) -> tensor<1x3x3x4xf32> {
  // expected-error@+1 {{'xla.conv_general_dilated' rhs_dilation must be positive; got [0, 1] [convolution_c8]}}
  %0 = "xla.conv_general_dilated"(%arg0, %arg1) {batch_group_count = 1 : i64, dimension_numbers = {input_batch_dimension = 0 : i64, input_feature_dimension = 3 : i64, input_spatial_dimensions = array<i64: 1, 2>, kernel_input_feature_dimension = 2 : i64, kernel_output_feature_dimension = 3 : i64, kernel_spatial_dimensions = array<i64: 0, 1>, output_batch_dimension = 0 : i64, output_feature_dimension = 3 : i64, output_spatial_dimensions = array<i64: 1, 2>}, feature_group_count = 1 : i64, lhs_dilation = array<i64: 1, 1>, padding = [array<i64: 1, 1>, array<i64: 1, 1>], rhs_dilation = array<i64: 0, 1>, window_strides = array<i64: 2, 2>} : (tensor<1x6x6x2xf32>, tensor<3x3x2x4xf32>) -> tensor<1x3x3x4xf32>
  return %0 : tensor<1x3x3x4xf32>
}
