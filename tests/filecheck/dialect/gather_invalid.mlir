// RUN: xlair-opt %s --split-input-file --verify-diagnostics

// Constraints of xla.gather (Gather), checked by its shape rule.

// slice larger than the operand
func.func @gather_0(%arg0: tensor<3x4xf32>, %arg1: tensor<2x1xi32>) -> tensor<2x4xf32> {
  // expected-error@+1 {{'xla.gather' slice_sizes must be in [0, dimension size] per dimension (f32[3,4]); got [1, 5] [gather_c21]}}
  %0 = "xla.gather"(%arg0, %arg1) {dimension_numbers = {collapsed_slice_dims = array<i64: 0>, index_vector_dim = 1 : i64, offset_dims = array<i64: 1>, operand_batching_dims = array<i64>, start_index_map = array<i64: 0>, start_indices_batching_dims = array<i64>}, indices_are_sorted = false, slice_sizes = array<i64: 1, 5>, unique_indices = false} : (tensor<3x4xf32>, tensor<2x1xi32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// index_vector_dim out of range
func.func @gather_1(%arg0: tensor<3x4xf32>, %arg1: tensor<2x1xi32>) -> tensor<2x4xf32> {
  // expected-error@+1 {{'xla.gather' dimension_numbers.index_vector_dim must be in [0, rank of start_indices] = [0, 2]; got 3 [gather_c2]}}
  %0 = "xla.gather"(%arg0, %arg1) {dimension_numbers = {collapsed_slice_dims = array<i64: 0>, index_vector_dim = 3 : i64, offset_dims = array<i64: 1>, operand_batching_dims = array<i64>, start_index_map = array<i64: 0>, start_indices_batching_dims = array<i64>}, indices_are_sorted = false, slice_sizes = array<i64: 1, 4>, unique_indices = false} : (tensor<3x4xf32>, tensor<2x1xi32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}
