// RUN: xlair-opt %s --split-input-file --verify-diagnostics

// Constraints of xla.reduce_window (ReduceWindow), checked by its shape rule.

// one window size for a rank-2 operand
func.func @reduce_window_0(%arg0: tensor<4x6xf32>, %arg1: tensor<f32>) -> tensor<2x4xf32> {
  // expected-error@+1 {{'xla.reduce_window' window_dimensions must have 2 elements (one per dimension of f32[4,6]); got [2] [reduce_window_c4]}}
  %0 = "xla.reduce_window"(%arg0, %arg1) ({
  ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
    %1 = "xla.add"(%arg2, %arg3) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "xla.return"(%1) : (tensor<f32>) -> ()
  }) {operandSegmentSizes = array<i32: 1, 1>, padding = "VALID", window_dimensions = array<i64: 2>, window_strides = array<i64: 2, 1>} : (tensor<4x6xf32>, tensor<f32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// zero stride
func.func @reduce_window_1(%arg0: tensor<4x6xf32>, %arg1: tensor<f32>) -> tensor<2x4xf32> {
  // expected-error@+1 {{'xla.reduce_window' window_strides must be positive; got [2, 0] [reduce_window_c7]}}
  %0 = "xla.reduce_window"(%arg0, %arg1) ({
  ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
    %1 = "xla.add"(%arg2, %arg3) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "xla.return"(%1) : (tensor<f32>) -> ()
  }) {operandSegmentSizes = array<i32: 1, 1>, padding = "VALID", window_dimensions = array<i64: 2, 3>, window_strides = array<i64: 2, 0>} : (tensor<4x6xf32>, tensor<f32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}
