// RUN: xlair-opt %s --split-input-file --verify-diagnostics

// Constraints of xla.rev (Rev (reverse)), checked by its shape rule.

// dimension out of range
func.func @rev_0(%arg0: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'xla.rev' dimensions must be dimensions of the operand's rank 2, in [0, 2); got [2] [reverse_c3]}}
  %0 = "xla.rev"(%arg0) {dimensions = array<i64: 2>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// repeated dimension
func.func @rev_1(%arg0: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'xla.rev' dimensions must not repeat; got [1, 1] [reverse_c2]}}
  %0 = "xla.rev"(%arg0) {dimensions = array<i64: 1, 1>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
