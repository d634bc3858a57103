// RUN: xlair-opt %s --split-input-file --verify-diagnostics

// Constraints of xla.select (Select), checked by its shape rule.

// integer predicate
func.func @select_0(%arg0: tensor<2x3xi32>, %arg1: tensor<2x3xf32>, %arg2: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'xla.select' pred must have PRED element type; got s32[2,3] [select_i1]}}
  %0 = "xla.select"(%arg0, %arg1, %arg2) : (tensor<2x3xi32>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// branches of different shapes
func.func @select_1(%arg0: tensor<2x3xi1>, %arg1: tensor<2x3xf32>, %arg2: tensor<3x2xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'xla.select' on_false must have the shape of on_true (f32[2,3]); got f32[3,2] [select_c2]}}
  %0 = "xla.select"(%arg0, %arg1, %arg2) : (tensor<2x3xi1>, tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
