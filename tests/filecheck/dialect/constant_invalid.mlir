// RUN: xlair-opt %s --split-input-file --verify-diagnostics

// Constraints of xla.constant (Constant), checked by its shape rule.

// not an array literal
func.func @constant_0() -> tensor<2x2xf32> {
  // expected-error@+1 {{'xla.constant' value must be an array literal; got '5 : i32' [ir:attributes]}}
  %0 = "xla.constant"() {value = 5 : i32} : () -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}
