// RUN: xlair-opt %s --split-input-file --verify-diagnostics

// Constraints of xla.triangular_solve (TriangularSolve), checked by its shape rule.

// b rows differ from a
func.func @triangular_solve_0(%arg0: tensor<3x3xf32>, %arg1: tensor<2x2xf32>) -> tensor<3x2xf32> {
  // expected-error@+1 {{'xla.triangular_solve' b must have shape [..., M, K] (left_side) with M = 3 from a; got f32[2,2] [triangular_solve_c3]}}
  %0 = "xla.triangular_solve"(%arg0, %arg1) {left_side = true, lower = true, transpose_a = "NO_TRANSPOSE", unit_diagonal = false} : (tensor<3x3xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

// unknown transpose
func.func @triangular_solve_1(%arg0: tensor<3x3xf32>, %arg1: tensor<3x2xf32>) -> tensor<3x2xf32> {
  // expected-error@+1 {{'xla.triangular_solve' transpose_a must be a Transpose (NO_TRANSPOSE, TRANSPOSE, ADJOINT); got '"SIDEWAYS"' [ir:attributes]}}
  %0 = "xla.triangular_solve"(%arg0, %arg1) {left_side = true, lower = true, transpose_a = "SIDEWAYS", unit_diagonal = false} : (tensor<3x3xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}
