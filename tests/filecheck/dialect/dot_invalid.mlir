// RUN: xlair-opt %s --split-input-file --verify-diagnostics

// Constraints of xla.dot (Dot), checked by its shape rule.

// contracting dimensions differ
func.func @dot_0(%arg0: tensor<2x3xf32>, %arg1: tensor<4x4xf32>) -> tensor<2x4xf32> {
  // expected-error@+1 {{'xla.dot' rhs must have dimension 0 equal to the last dimension of lhs (f32[2,3]): the contracted dimensions must be of the same size; got f32[4,4] [spec:Dot]}}
  %0 = "xla.dot"(%arg0, %arg1) : (tensor<2x3xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// element types differ
func.func @dot_1(%arg0: tensor<2x3xf32>, %arg1: tensor<3x4xf16>) -> tensor<2x4xf32> {
  // expected-error@+1 {{'xla.dot' rhs must have the element type of lhs (F32); got f16[3,4] [dot_general_c13]}}
  %0 = "xla.dot"(%arg0, %arg1) : (tensor<2x3xf32>, tensor<3x4xf16>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}
