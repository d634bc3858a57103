// RUN: xlair-opt %s -p xla-to-linalg | filecheck %s

// The grouped 1-D case reads its input at (out * stride + window):
// CHECK: #[[IN:.*]] = affine_map<(d0, d1, d2, d3, d4, d5) -> (d0, d1 * 2 + d4, d2, d5)>

// The spec's layout [N, C, H, W] x [O, I, H, W] with SAME padding: tensor.pad, then the named
// linalg.conv_2d_nchw_fchw on the padded input (no transposes), accumulator filled with 0.
// CHECK-LABEL: func.func @same_nchw
// CHECK: %[[P:.*]] = tensor.pad %arg0 low[0, 0, 1, 1] high[0, 0, 1, 1]
// CHECK: %[[Z:.*]] = linalg.fill
// CHECK: linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%[[P]], %arg1 : tensor<1x4x10x10xf32>, tensor<6x4x3x3xf32>) outs(%[[Z]] : tensor<1x6x8x8xf32>)
// CHECK-NOT: xla.
func.func @same_nchw(%arg0: tensor<1x4x8x8xf32>, %arg1: tensor<6x4x3x3xf32>) -> tensor<1x6x8x8xf32> {
  %0 = "xla.conv"(%arg0, %arg1) {batch_group_count = 1 : i64, feature_group_count = 1 : i64, padding = "SAME", window_strides = array<i64: 1, 1>} : (tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>) -> tensor<1x6x8x8xf32>
  return %0 : tensor<1x6x8x8xf32>
}

// Feature groups in 1-D: channels last, the groups split out of the feature dimensions, one
// linalg.generic whose input map is (out * stride + window); the result transposed back.
// CHECK-LABEL: func.func @grouped_1d
// CHECK: linalg.transpose ins(%arg0 : tensor<2x4x9xf32>) outs(%{{.*}} : tensor<2x9x4xf32>) permutation = [0, 2, 1]
// CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0], [1], [2, 3]] output_shape [2, 9, 2, 2]
// CHECK: linalg.generic {indexing_maps = [#[[IN]], #{{.*}}, #{{.*}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]}
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: tensor.collapse_shape %{{.*}} {{\[\[}}0], [1], [2, 3]] : tensor<2x4x2x3xf32> into tensor<2x4x6xf32>
// CHECK: linalg.transpose ins(%{{.*}} : tensor<2x4x6xf32>) outs(%{{.*}} : tensor<2x6x4xf32>) permutation = [0, 2, 1]
func.func @grouped_1d(%arg0: tensor<2x4x9xf32>, %arg1: tensor<6x2x3xf32>) -> tensor<2x6x4xf32> {
  %0 = "xla.conv"(%arg0, %arg1) {batch_group_count = 1 : i64, feature_group_count = 2 : i64, padding = "VALID", window_strides = array<i64: 2>} : (tensor<2x4x9xf32>, tensor<6x2x3xf32>) -> tensor<2x6x4xf32>
  return %0 : tensor<2x6x4xf32>
}
