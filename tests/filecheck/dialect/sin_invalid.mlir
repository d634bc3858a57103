// RUN: xlair-opt %s --split-input-file --verify-diagnostics

// Constraints of xla.sin (Element-wise unary functions), checked by its shape rule.

// s32 is not an element type of sin
func.func @sin_type(%a: tensor<2x3xi32>) -> tensor<2x3xi32> {
  // expected-error@+1 {{'xla.sin' operand must have floating-point or complex element type; got s32[2,3] [sine_i1]}}
  %0 = "xla.sin"(%a) : (tensor<2x3xi32>) -> tensor<2x3xi32>
  return %0 : tensor<2x3xi32>
}

// -----

// a tuple operand
func.func @sin_tuple(%a: tuple<tensor<2x3xf16>>) -> tensor<2x3xf16> {
  // expected-error@+1 {{'xla.sin' operand must be an array; got (f16[2,3]) [sine_i1]}}
  %0 = "xla.sin"(%a) : (tuple<tensor<2x3xf16>>) -> tensor<2x3xf16>
  return %0 : tensor<2x3xf16>
}
