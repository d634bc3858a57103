// RUN: xlair-opt %s --split-input-file --verify-diagnostics

// Constraints of xla.dynamic_update_slice (DynamicUpdateSlice), checked by its shape rule.

// update larger than the operand
func.func @dynamic_update_slice_0(%arg0: tensor<2x3xf32>, %arg1: tensor<3x2xf32>, %arg2: tensor<i32>, %arg3: tensor<i32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'xla.dynamic_update_slice' update must fit in operand (f32[2,3]) in every dimension; got f32[3,2] [dynamic_update_slice_c6]}}
  %0 = "xla.dynamic_update_slice"(%arg0, %arg1, %arg2, %arg3) : (tensor<2x3xf32>, tensor<3x2xf32>, tensor<i32>, tensor<i32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// float start index
func.func @dynamic_update_slice_1(%arg0: tensor<2x3xf32>, %arg1: tensor<1x2xf32>, %arg2: tensor<f32>, %arg3: tensor<i32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'xla.dynamic_update_slice' start_indices[0] must have integer element type; got f32[] [dynamic_update_slice_i3]}}
  %0 = "xla.dynamic_update_slice"(%arg0, %arg1, %arg2, %arg3) : (tensor<2x3xf32>, tensor<1x2xf32>, tensor<f32>, tensor<i32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
