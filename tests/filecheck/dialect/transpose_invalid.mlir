// RUN: xlair-opt %s --split-input-file --verify-diagnostics

// Constraints of xla.transpose (Transpose), checked by its shape rule.

// not a permutation
func.func @transpose_0(%arg0: tensor<2x3xf32>) -> tensor<3x2xf32> {
  // expected-error@+1 {{'xla.transpose' permutation must be a permutation of [0, 2); got [0, 0] [transpose_c2]}}
  %0 = "xla.transpose"(%arg0) {permutation = array<i64: 0, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

// permutation of the wrong length
func.func @transpose_1(%arg0: tensor<2x3xf32>) -> tensor<3x2xf32> {
  // expected-error@+1 {{'xla.transpose' permutation must be a permutation of [0, 2); got [1, 0, 2] [transpose_c2]}}
  %0 = "xla.transpose"(%arg0) {permutation = array<i64: 1, 0, 2>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}
