// RUN: xlair-opt %s --split-input-file --verify-diagnostics

// Constraints of xla.set_dimension_size (SetDimensionSize), checked by its shape rule.

// dimension out of range
func.func @set_dimension_size_0(%arg0: tensor<2x3xf32>, %arg1: tensor<i32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'xla.set_dimension_size' dimension must be dimensions of the operand's rank 2, in [0, 2); got [2] [spec:SetDimensionSize]}}
  %0 = "xla.set_dimension_size"(%arg0, %arg1) {dimension = 2 : i64} : (tensor<2x3xf32>, tensor<i32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// float size
func.func @set_dimension_size_1(%arg0: tensor<2x3xf32>, %arg1: tensor<f32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'xla.set_dimension_size' size must have integer (S32) element type; got f32[] [spec:SetDimensionSize]}}
  %0 = "xla.set_dimension_size"(%arg0, %arg1) {dimension = 1 : i64} : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
