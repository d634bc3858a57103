// RUN: xlair-opt %s --split-input-file --verify-diagnostics

// Constraints of xla.dynamic_slice (DynamicSlice), checked by its shape rule.

// one start index for a rank-2 operand
func.func @dynamic_slice_0(%arg0: tensor<2x3xf32>, %arg1: tensor<i32>, %arg2: tensor<i32>) -> tensor<1x2xf32> {
  // expected-error@+1 {{'xla.dynamic_slice' start_indices must have one scalar per operand dimension (f32[2,3]); got [s32[]] [dynamic_slice_c2]}}
  %0 = "xla.dynamic_slice"(%arg0, %arg1) {size_indices = array<i64: 1, 2>} : (tensor<2x3xf32>, tensor<i32>) -> tensor<1x2xf32>
  return %0 : tensor<1x2xf32>
}

// -----

// slice larger than the operand
func.func @dynamic_slice_1(%arg0: tensor<2x3xf32>, %arg1: tensor<i32>, %arg2: tensor<i32>) -> tensor<3x2xf32> {
  // expected-error@+1 {{'xla.dynamic_slice' size_indices must be in [0, dimension size] per dimension (f32[2,3]); got [3, 2] [dynamic_slice_c4]}}
  %0 = "xla.dynamic_slice"(%arg0, %arg1, %arg2) {size_indices = array<i64: 3, 2>} : (tensor<2x3xf32>, tensor<i32>, tensor<i32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}
