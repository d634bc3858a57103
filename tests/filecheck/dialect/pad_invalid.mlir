// RUN: xlair-opt %s --split-input-file --verify-diagnostics

// Constraints of xla.pad (Pad), checked by its shape rule.

// padding value not a scalar
func.func @pad_0(%arg0: tensor<2x3xf32>, %arg1: tensor<2xf32>) -> tensor<3x7xf32> {
  // expected-error@+1 {{'xla.pad' padding_value must be a scalar; got f32[2] [pad_i2]}}
  %0 = "xla.pad"(%arg0, %arg1) {padding_config = [array<i64: 1, 0, 0>, array<i64: 0, 2, 1>]} : (tensor<2x3xf32>, tensor<2xf32>) -> tensor<3x7xf32>
  return %0 : tensor<3x7xf32>
}

// -----

// negative interior padding
func.func @pad_1(%arg0: tensor<2x3xf32>, %arg1: tensor<f32>) -> tensor<3x7xf32> {
  // expected-error@+1 {{'xla.pad' padding_config interior_padding must not be negative (dimension 1); got [[1, 0, 0], [0, 2, -1]] [pad_c3]}}
  %0 = "xla.pad"(%arg0, %arg1) {padding_config = [array<i64: 1, 0, 0>, array<i64: 0, 2, -1>]} : (tensor<2x3xf32>, tensor<f32>) -> tensor<3x7xf32>
  return %0 : tensor<3x7xf32>
}
