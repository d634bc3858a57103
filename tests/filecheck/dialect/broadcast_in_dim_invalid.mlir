// RUN: xlair-opt %s --split-input-file --verify-diagnostics

// Constraints of xla.broadcast_in_dim (BroadcastInDim), checked by its shape rule.

// dimension out of range
func.func @broadcast_in_dim_0(%arg0: tensor<3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'xla.broadcast_in_dim' broadcast_dimensions must be dimensions of the output's rank 2, in [0, 2); got [2] [broadcast_in_dim_c3]}}
  %0 = "xla.broadcast_in_dim"(%arg0) {broadcast_dimensions = array<i64: 2>, out_dim_size = array<i64: 2, 3>} : (tensor<3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// operand dimension of size 3 into a result dimension of size 2
func.func @broadcast_in_dim_1(%arg0: tensor<3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'xla.broadcast_in_dim' operand dimension 0 (size 3) must be 1 or out_dim_size[0] (2); got f32[3] [broadcast_in_dim_c5]}}
  %0 = "xla.broadcast_in_dim"(%arg0) {broadcast_dimensions = array<i64: 0>, out_dim_size = array<i64: 2, 3>} : (tensor<3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
