// RUN: xlair-opt %s --split-input-file --verify-diagnostics

// Constraints of xla.dot_general (DotGeneral), checked by its shape rule.

// contracting dimension out of range
func.func @dot_general_0(%arg0: tensor<2x2x3xf32>, %arg1: tensor<2x3x4xf32>) -> tensor<2x2x4xf32> {
  // expected-error@+1 {{'xla.dot_general' dimension_numbers.lhs_contracting_dimensions must be dimensions of the operand's rank 3, in [0, 3); got [3] [dot_general_c6]}}
  %0 = "xla.dot_general"(%arg0, %arg1) {dimension_numbers = {lhs_batch_dimensions = array<i64: 0>, lhs_contracting_dimensions = array<i64: 3>, rhs_batch_dimensions = array<i64: 0>, rhs_contracting_dimensions = array<i64: 1>}} : (tensor<2x2x3xf32>, tensor<2x3x4xf32>) -> tensor<2x2x4xf32>
  return %0 : tensor<2x2x4xf32>
}

// -----

// batch dimension lists differ in length
func.func @dot_general_1(%arg0: tensor<2x2x3xf32>, %arg1: tensor<2x3x4xf32>) -> tensor<2x2x4xf32> {
  // expected-error@+1 {{'xla.dot_general' dimension_numbers.rhs_batch_dimensions must have as many dimensions as lhs_batch_dimensions ([0]); got [] [dot_general_c1]}}
  %0 = "xla.dot_general"(%arg0, %arg1) {dimension_numbers = {lhs_batch_dimensions = array<i64: 0>, lhs_contracting_dimensions = array<i64: 2>, rhs_batch_dimensions = array<i64>, rhs_contracting_dimensions = array<i64: 1>}} : (tensor<2x2x3xf32>, tensor<2x3x4xf32>) -> tensor<2x2x4xf32>
  return %0 : tensor<2x2x4xf32>
}
