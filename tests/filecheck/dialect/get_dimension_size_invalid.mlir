// RUN: xlair-opt %s --split-input-file --verify-diagnostics

// Constraints of xla.get_dimension_size (GetDimensionSize), checked by its shape rule.

// dimension out of range
func.func @get_dimension_size_0(%arg0: tensor<2x3xf32>) -> tensor<i32> {
  // expected-error@+1 {{'xla.get_dimension_size' dimension must be dimensions of the operand's rank 2, in [0, 2); got [2] [get_dimension_size_c1]}}
  %0 = "xla.get_dimension_size"(%arg0) {dimension = 2 : i64} : (tensor<2x3xf32>) -> tensor<i32>
  return %0 : tensor<i32>
}
