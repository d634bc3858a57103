// RUN: xlair-opt %s --split-input-file --verify-diagnostics

// Constraints of xla.sqrt (Element-wise unary functions), checked by its shape rule.

// s32 is not an element type of sqrt
func.func @sqrt_type(%a: tensor<2x3xi32>) -> tensor<2x3xi32> {
  // expected-error@+1 {{'xla.sqrt' operand must have floating-point or complex element type; got s32[2,3] [sqrt_i1]}}
  %0 = "xla.sqrt"(%a) : (tensor<2x3xi32>) -> tensor<2x3xi32>
  return %0 : tensor<2x3xi32>
}

// -----

// a tuple operand
func.func @sqrt_tuple(%a: tuple<tensor<2x3xf16>>) -> tensor<2x3xf16> {
  // expected-error@+1 {{'xla.sqrt' operand must be an array; got (f16[2,3]) [sqrt_i1]}}
  %0 = "xla.sqrt"(%a) : (tuple<tensor<2x3xf16>>) -> tensor<2x3xf16>
  return %0 : tensor<2x3xf16>
}
