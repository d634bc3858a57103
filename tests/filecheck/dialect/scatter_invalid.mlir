// RUN: xlair-opt %s --split-input-file --verify-diagnostics

// Constraints of xla.scatter (Scatter), checked by its shape rule.

// update window larger than the operand
func.func @scatter_0(%arg0: tensor<3x4xf32>, %arg1: tensor<2x1xi32>, %arg2: tensor<2x5xf32>) -> tensor<3x4xf32> {
  // expected-error@+1 {{'xla.scatter' updates window dimension 1 (size 5) must not exceed operand dimension 1 (4); got f32[2,5] [scatter_c4]}}
  %0 = "xla.scatter"(%arg0, %arg1, %arg2) ({
  ^bb0(%arg3: tensor<f32>, %arg4: tensor<f32>):
    %1 = "xla.add"(%arg3, %arg4) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "xla.return"(%1) : (tensor<f32>) -> ()
  }) {dimension_numbers = {index_vector_dim = 1 : i64, input_batching_dims = array<i64>, inserted_window_dims = array<i64: 0>, scatter_dims_to_operand_dims = array<i64: 0>, scatter_indices_batching_dims = array<i64>, update_window_dims = array<i64: 1>}, indices_are_sorted = false, operandSegmentSizes = array<i32: 1, 1, 1>, unique_indices = false} : (tensor<3x4xf32>, tensor<2x1xi32>, tensor<2x5xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

// index_vector_dim out of range
func.func @scatter_1(%arg0: tensor<3x4xf32>, %arg1: tensor<2x1xi32>, %arg2: tensor<2x4xf32>) -> tensor<3x4xf32> {
  // expected-error@+1 {{'xla.scatter' dimension_numbers.index_vector_dim must be in [0, rank of scatter_indices] = [0, 2]; got 3 [scatter_c22]}}
  %0 = "xla.scatter"(%arg0, %arg1, %arg2) ({
  ^bb0(%arg3: tensor<f32>, %arg4: tensor<f32>):
    %1 = "xla.add"(%arg3, %arg4) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "xla.return"(%1) : (tensor<f32>) -> ()
  }) {dimension_numbers = {index_vector_dim = 3 : i64, input_batching_dims = array<i64>, inserted_window_dims = array<i64: 0>, scatter_dims_to_operand_dims = array<i64: 0>, scatter_indices_batching_dims = array<i64>, update_window_dims = array<i64: 1>}, indices_are_sorted = false, operandSegmentSizes = array<i32: 1, 1, 1>, unique_indices = false} : (tensor<3x4xf32>, tensor<2x1xi32>, tensor<2x4xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}
