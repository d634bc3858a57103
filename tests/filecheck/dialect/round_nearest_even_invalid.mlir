// RUN: xlair-opt %s --split-input-file --verify-diagnostics

// Constraints of xla.round_nearest_even (Element-wise unary functions), checked by its shape rule.

// s32 is not an element type of round_nearest_even
func.func @round_nearest_even_type(%a: tensor<2x3xi32>) -> tensor<2x3xi32> {
  // expected-error@+1 {{'xla.round_nearest_even' operand must have floating-point element type; got s32[2,3] [round_nearest_even_i1]}}
  %0 = "xla.round_nearest_even"(%a) : (tensor<2x3xi32>) -> tensor<2x3xi32>
  return %0 : tensor<2x3xi32>
}

// -----

// a tuple operand
func.func @round_nearest_even_tuple(%a: tuple<tensor<2x3xf16>>) -> tensor<2x3xf16> {
  // expected-error@+1 {{'xla.round_nearest_even' operand must be an array; got (f16[2,3]) [round_nearest_even_i1]}}
  %0 = "xla.round_nearest_even"(%a) : (tuple<tensor<2x3xf16>>) -> tensor<2x3xf16>
  return %0 : tensor<2x3xf16>
}
