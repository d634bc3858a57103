// RUN: xlair-opt %s --split-input-file --verify-diagnostics

// Constraints of xla.ceil (Element-wise unary functions), checked by its shape rule.

// s32 is not an element type of ceil
func.func @ceil_type(%a: tensor<2x3xi32>) -> tensor<2x3xi32> {
  // expected-error@+1 {{'xla.ceil' operand must have floating-point element type; got s32[2,3] [ceil_i1]}}
  %0 = "xla.ceil"(%a) : (tensor<2x3xi32>) -> tensor<2x3xi32>
  return %0 : tensor<2x3xi32>
}

// -----

// a tuple operand
func.func @ceil_tuple(%a: tuple<tensor<2x3xf16>>) -> tensor<2x3xf16> {
  // expected-error@+1 {{'xla.ceil' operand must be an array; got (f16[2,3]) [ceil_i1]}}
  %0 = "xla.ceil"(%a) : (tuple<tensor<2x3xf16>>) -> tensor<2x3xf16>
  return %0 : tensor<2x3xf16>
}
