// RUN: xlair-opt %s --split-input-file --verify-diagnostics

// Constraints of xla.slice (Slice), checked by its shape rule.

// limit past the end
func.func @slice_0(%arg0: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'xla.slice' limit_indices must be <= the operand's dimensions (f32[2,3]); got [2, 4] [slice_c3]}}
  %0 = "xla.slice"(%arg0) {limit_indices = array<i64: 2, 4>, start_indices = array<i64: 0, 1>, strides = array<i64: 1, 1>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// zero stride
func.func @slice_1(%arg0: tensor<2x3xf32>) -> tensor<2x2xf32> {
  // expected-error@+1 {{'xla.slice' strides must be positive; got [1, 0] [slice_c4]}}
  %0 = "xla.slice"(%arg0) {limit_indices = array<i64: 2, 3>, start_indices = array<i64: 0, 1>, strides = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}
