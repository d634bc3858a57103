// RUN: xlair-opt %s --split-input-file --verify-diagnostics

// Constraints of xla.reduce (Reduce), checked by its shape rule.

// repeated dimension
func.func @reduce_0(%arg0: tensor<2x3xf32>, %arg1: tensor<f32>) -> tensor<2xf32> {
  // expected-error@+1 {{'xla.reduce' dimensions must not repeat; got [1, 1] [reduce_c5]}}
  %0 = "xla.reduce"(%arg0, %arg1) ({
  ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
    %1 = "xla.add"(%arg2, %arg3) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "xla.return"(%1) : (tensor<f32>) -> ()
  }) {dimensions = array<i64: 1, 1>, operandSegmentSizes = array<i32: 1, 1>} : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// init value of another type
func.func @reduce_1(%arg0: tensor<2x3xf32>, %arg1: tensor<i32>) -> tensor<2xf32> {
  // expected-error@+1 {{'xla.reduce' init_values[0] must have the element type of operands[0] (F32); got s32[] [reduce_c2]}}
  %0 = "xla.reduce"(%arg0, %arg1) ({
  ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
    %1 = "xla.add"(%arg2, %arg3) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "xla.return"(%1) : (tensor<f32>) -> ()
  }) {dimensions = array<i64: 1>, operandSegmentSizes = array<i32: 1, 1>} : (tensor<2x3xf32>, tensor<i32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
