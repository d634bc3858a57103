// RUN: xlair-opt %s --split-input-file --verify-diagnostics

// Constraints of xla.collapse (Collapse), checked by its shape rule.

// not consecutive
func.func @collapse_0(%arg0: tensor<2x3x4xf32>) -> tensor<24xf32> {
  // expected-error@+1 {{'xla.collapse' dimensions must be an in-order, consecutive subset of the operand's dimensions; got [0, 2] [spec:Collapse]}}
  %0 = "xla.collapse"(%arg0) {dimensions = array<i64: 0, 2>} : (tensor<2x3x4xf32>) -> tensor<24xf32>
  return %0 : tensor<24xf32>
}
