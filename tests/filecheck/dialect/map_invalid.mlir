// RUN: xlair-opt %s --split-input-file --verify-diagnostics

// Constraints of xla.map (Map), checked by its shape rule.

// computation of the wrong arity
func.func @map_0(%arg0: tensor<2x3xf32>, %arg1: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'xla.map' computation must take parameters [f32[], f32[]]; got (f32[]) -> f32[] [map_c4]}}
  %0 = "xla.map"(%arg0, %arg1) ({
  ^bb0(%arg2: tensor<f32>):
    "xla.return"(%arg2) : (tensor<f32>) -> ()
  }) {dimensions = array<i64: 0, 1>, operandSegmentSizes = array<i32: 2, 0>} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// dimensions out of order
func.func @map_1(%arg0: tensor<2x3xf32>, %arg1: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'xla.map' dimensions must be every dimension in order, [0, 2) (XLA maps over all dimensions); got [1, 0] [map_c3]}}
  %0 = "xla.map"(%arg0, %arg1) ({
  ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
    %1 = "xla.add"(%arg2, %arg3) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "xla.return"(%1) : (tensor<f32>) -> ()
  }) {dimensions = array<i64: 1, 0>, operandSegmentSizes = array<i32: 2, 0>} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
