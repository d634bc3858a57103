// RUN: xlair-opt %s -p xla-to-linalg | filecheck %s

// Batch groups have no named op: lhs batch split into [groups, batch / groups], kernel output
// features into [groups, features / groups], one linalg.generic with the group as a loop.
// CHECK: #[[X:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d3, d0, d1 + d5, d2 + d6, d7)>
// CHECK: #[[W:.*]] = affine_map<(d0, d1, d2, d3, d4, d5, d6, d7) -> (d5, d6, d7, d3, d4)>

// NHWC / HWIO with SAME padding at stride 2: no transposes, the named
// linalg.conv_2d_nhwc_hwcf that IREE has tuned kernels for.
// CHECK-LABEL: func.func @nhwc
// CHECK: %[[P:.*]] = tensor.pad %arg0 low[0, 0, 0, 0] high[0, 1, 1, 0]
// CHECK: linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%[[P]], %arg1 : tensor<1x9x9x4xf32>, tensor<3x3x4x6xf32>) outs(%{{.*}} : tensor<1x4x4x6xf32>)
// CHECK-NOT: linalg.transpose
// CHECK: return
func.func @nhwc(%arg0: tensor<1x8x8x4xf32>, %arg1: tensor<3x3x4x6xf32>) -> tensor<1x4x4x6xf32> {
  %0 = "xla.conv_general_dilated"(%arg0, %arg1) {batch_group_count = 1 : i64, dimension_numbers = {input_batch_dimension = 0 : i64, input_feature_dimension = 3 : i64, input_spatial_dimensions = array<i64: 1, 2>, kernel_input_feature_dimension = 2 : i64, kernel_output_feature_dimension = 3 : i64, kernel_spatial_dimensions = array<i64: 0, 1>, output_batch_dimension = 0 : i64, output_feature_dimension = 3 : i64, output_spatial_dimensions = array<i64: 1, 2>}, feature_group_count = 1 : i64, lhs_dilation = array<i64: 1, 1>, padding = "SAME", rhs_dilation = array<i64: 1, 1>, window_strides = array<i64: 2, 2>} : (tensor<1x8x8x4xf32>, tensor<3x3x4x6xf32>) -> tensor<1x4x4x6xf32>
  return %0 : tensor<1x4x4x6xf32>
}

// Depthwise (feature groups = channels, multiplier 1): the [3, 3, 1, 4] kernel collapses to
// [3, 3, 4] for linalg.depthwise_conv_2d_nhwc_hwc.
// CHECK-LABEL: func.func @depthwise
// CHECK: %[[K:.*]] = tensor.collapse_shape %arg1 {{\[\[}}0], [1], [2, 3]] : tensor<3x3x1x4xf32> into tensor<3x3x4xf32>
// CHECK: linalg.depthwise_conv_2d_nhwc_hwc {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%arg0, %[[K]] : tensor<1x8x8x4xf32>, tensor<3x3x4xf32>) outs(%{{.*}} : tensor<1x6x6x4xf32>)
func.func @depthwise(%arg0: tensor<1x8x8x4xf32>, %arg1: tensor<3x3x1x4xf32>) -> tensor<1x6x6x4xf32> {
  %0 = "xla.conv_general_dilated"(%arg0, %arg1) {batch_group_count = 1 : i64, dimension_numbers = {input_batch_dimension = 0 : i64, input_feature_dimension = 3 : i64, input_spatial_dimensions = array<i64: 1, 2>, kernel_input_feature_dimension = 2 : i64, kernel_output_feature_dimension = 3 : i64, kernel_spatial_dimensions = array<i64: 0, 1>, output_batch_dimension = 0 : i64, output_feature_dimension = 3 : i64, output_spatial_dimensions = array<i64: 1, 2>}, feature_group_count = 4 : i64, lhs_dilation = array<i64: 1, 1>, padding = "VALID", rhs_dilation = array<i64: 1, 1>, window_strides = array<i64: 1, 1>} : (tensor<1x8x8x4xf32>, tensor<3x3x1x4xf32>) -> tensor<1x6x6x4xf32>
  return %0 : tensor<1x6x6x4xf32>
}

// CHECK-LABEL: func.func @batch_groups
// CHECK: tensor.expand_shape %arg0 {{\[\[}}0], [1, 2], [3], [4]] output_shape [2, 1, 5, 5, 3]
// CHECK: tensor.expand_shape %arg1 {{\[\[}}0], [1], [2], [3, 4]] output_shape [2, 2, 3, 2, 2]
// CHECK: linalg.generic {indexing_maps = [#[[X]], #[[W]], #{{.*}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]}
// CHECK: tensor.collapse_shape %{{.*}} {{\[\[}}0], [1], [2], [3, 4]] : tensor<1x4x4x2x2xf32> into tensor<1x4x4x4xf32>
// CHECK-NOT: xla.
func.func @batch_groups(%arg0: tensor<2x5x5x3xf32>, %arg1: tensor<2x2x3x4xf32>) -> tensor<1x4x4x4xf32> {
  %0 = "xla.conv_general_dilated"(%arg0, %arg1) {batch_group_count = 2 : i64, dimension_numbers = {input_batch_dimension = 0 : i64, input_feature_dimension = 3 : i64, input_spatial_dimensions = array<i64: 1, 2>, kernel_input_feature_dimension = 2 : i64, kernel_output_feature_dimension = 3 : i64, kernel_spatial_dimensions = array<i64: 0, 1>, output_batch_dimension = 0 : i64, output_feature_dimension = 3 : i64, output_spatial_dimensions = array<i64: 1, 2>}, feature_group_count = 1 : i64, lhs_dilation = array<i64: 1, 1>, padding = "VALID", rhs_dilation = array<i64: 1, 1>, window_strides = array<i64: 1, 1>} : (tensor<2x5x5x3xf32>, tensor<2x2x3x4xf32>) -> tensor<1x4x4x4xf32>
  return %0 : tensor<1x4x4x4xf32>
}
