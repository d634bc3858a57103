// RUN: xlair-opt %s -p xla-to-linalg | filecheck %s

// lhs dilation 2 and padding (1, -1) in H: the input goes into a zero-filled tensor with
// stride 2 (the cut row dropped first, the padded extent cut to what the windows reach);
// padding (0, 2) in W is cut to the 10 columns the dilated windows read; rhs dilation becomes
// the named op's dilations attribute.
// CHECK-LABEL: func.func @dilated
// CHECK: %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<1x4x15x10xf32>)
// CHECK: %[[S:.*]] = tensor.extract_slice %arg0[0, 0, 0, 0] [1, 4, 7, 8] [1, 1, 1, 1]
// CHECK: %[[X:.*]] = tensor.insert_slice %[[S]] into %[[Z]][0, 0, 1, 0] [1, 4, 7, 8] [1, 1, 2, 1]
// CHECK: linalg.conv_2d_nchw_fchw {dilations = dense<[1, 2]> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%[[X]], %arg1 : tensor<1x4x15x10xf32>, tensor<6x4x3x3xf32>) outs(%{{.*}} : tensor<1x6x13x6xf32>)
// CHECK-NOT: xla.
func.func @dilated(%arg0: tensor<1x4x8x8xf32>, %arg1: tensor<6x4x3x3xf32>) -> tensor<1x6x13x6xf32> {
  %0 = "xla.conv_with_general_padding"(%arg0, %arg1) {batch_group_count = 1 : i64, feature_group_count = 1 : i64, lhs_dilation = array<i64: 2, 1>, padding = [array<i64: 1, -1>, array<i64: 0, 2>], rhs_dilation = array<i64: 1, 2>, window_strides = array<i64: 1, 1>} : (tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>) -> tensor<1x6x13x6xf32>
  return %0 : tensor<1x6x13x6xf32>
}
