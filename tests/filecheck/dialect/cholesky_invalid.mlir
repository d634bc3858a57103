// RUN: xlair-opt %s --split-input-file --verify-diagnostics

// Constraints of xla.cholesky (Cholesky), checked by its shape rule.

// not square
func.func @cholesky_0(%arg0: tensor<3x2xf32>) -> tensor<3x2xf32> {
  // expected-error@+1 {{'xla.cholesky' a must have square minor two dimensions (equal sizes); got f32[3,2] [cholesky_c3]}}
  %0 = "xla.cholesky"(%arg0) {lower = true} : (tensor<3x2xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

// integer matrix
func.func @cholesky_1(%arg0: tensor<3x3xi32>) -> tensor<3x3xi32> {
  // expected-error@+1 {{'xla.cholesky' a must have F32, F64, C64 or C128 element type; got s32[3,3] [cholesky_i1]}}
  %0 = "xla.cholesky"(%arg0) {lower = true} : (tensor<3x3xi32>) -> tensor<3x3xi32>
  return %0 : tensor<3x3xi32>
}
