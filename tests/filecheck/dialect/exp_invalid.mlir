// RUN: xlair-opt %s --split-input-file --verify-diagnostics

// Constraints of xla.exp (Element-wise unary functions), checked by its shape rule.

// s32 is not an element type of exp
func.func @exp_type(%a: tensor<2x3xi32>) -> tensor<2x3xi32> {
  // expected-error@+1 {{'xla.exp' operand must have floating-point or complex element type; got s32[2,3] [exponential_i1]}}
  %0 = "xla.exp"(%a) : (tensor<2x3xi32>) -> tensor<2x3xi32>
  return %0 : tensor<2x3xi32>
}

// -----

// a tuple operand
func.func @exp_tuple(%a: tuple<tensor<2x3xf16>>) -> tensor<2x3xf16> {
  // expected-error@+1 {{'xla.exp' operand must be an array; got (f16[2,3]) [exponential_i1]}}
  %0 = "xla.exp"(%a) : (tuple<tensor<2x3xf16>>) -> tensor<2x3xf16>
  return %0 : tensor<2x3xf16>
}
