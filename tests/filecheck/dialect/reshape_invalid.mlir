// RUN: xlair-opt %s --split-input-file --verify-diagnostics

// Constraints of xla.reshape (Reshape), checked by its shape rule.

// element count changes
func.func @reshape_0(%arg0: tensor<2x3xf32>) -> tensor<4x2xf32> {
  // expected-error@+1 {{'xla.reshape' new_sizes must have as many elements as operand (f32[2,3], 6); got [4, 2] [reshape_c2]}}
  %0 = "xla.reshape"(%arg0) {new_sizes = array<i64: 4, 2>} : (tensor<2x3xf32>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}
