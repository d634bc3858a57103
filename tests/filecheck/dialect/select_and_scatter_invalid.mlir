// RUN: xlair-opt %s --split-input-file --verify-diagnostics

// Constraints of xla.select_and_scatter (SelectAndScatter), checked by its shape rule.

// select returns f32, not PRED
func.func @select_and_scatter_0(%arg0: tensor<4x6xf32>, %arg1: tensor<2x2xf32>, %arg2: tensor<f32>) -> tensor<4x6xf32> {
  // expected-error@+1 {{'xla.select_and_scatter' select must return a PRED scalar; got (f32[], f32[]) -> f32[] [select_and_scatter_c9]}}
  %0 = "xla.select_and_scatter"(%arg0, %arg1, %arg2) ({
  ^bb0(%arg3: tensor<f32>, %arg4: tensor<f32>):
    %1 = "xla.max"(%arg3, %arg4) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "xla.return"(%1) : (tensor<f32>) -> ()
  }, {
  ^bb0(%arg3: tensor<f32>, %arg4: tensor<f32>):
    %1 = "xla.add"(%arg3, %arg4) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "xla.return"(%1) : (tensor<f32>) -> ()
  }) {padding = "VALID", window_dimensions = array<i64: 2, 3>, window_strides = array<i64: 2, 3>} : (tensor<4x6xf32>, tensor<2x2xf32>, tensor<f32>) -> tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// -----

// source not the window grid
func.func @select_and_scatter_1(%arg0: tensor<4x6xf32>, %arg1: tensor<2x3xf32>, %arg2: tensor<f32>) -> tensor<4x6xf32> {
  // expected-error@+1 {{'xla.select_and_scatter' source must have the shape of the ReduceWindow of operand over the window (f32[2,2]); got f32[2,3] [select_and_scatter_c2]}}
  %0 = "xla.select_and_scatter"(%arg0, %arg1, %arg2) ({
  ^bb0(%arg3: tensor<f32>, %arg4: tensor<f32>):
    %1 = "xla.ge"(%arg3, %arg4) : (tensor<f32>, tensor<f32>) -> tensor<i1>
    "xla.return"(%1) : (tensor<i1>) -> ()
  }, {
  ^bb0(%arg3: tensor<f32>, %arg4: tensor<f32>):
    %1 = "xla.add"(%arg3, %arg4) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "xla.return"(%1) : (tensor<f32>) -> ()
  }) {padding = "VALID", window_dimensions = array<i64: 2, 3>, window_strides = array<i64: 2, 3>} : (tensor<4x6xf32>, tensor<2x3xf32>, tensor<f32>) -> tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}
