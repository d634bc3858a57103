// RUN: xlair-opt %s --split-input-file --verify-diagnostics

// Constraints of xla.log1p (Element-wise unary functions), checked by its shape rule.

// s32 is not an element type of log1p
func.func @log1p_type(%a: tensor<2x3xi32>) -> tensor<2x3xi32> {
  // expected-error@+1 {{'xla.log1p' operand must have floating-point or complex element type; got s32[2,3] [log_plus_one_i1]}}
  %0 = "xla.log1p"(%a) : (tensor<2x3xi32>) -> tensor<2x3xi32>
  return %0 : tensor<2x3xi32>
}

// -----

// a tuple operand
func.func @log1p_tuple(%a: tuple<tensor<2x3xf16>>) -> tensor<2x3xf16> {
  // expected-error@+1 {{'xla.log1p' operand must be an array; got (f16[2,3]) [log_plus_one_i1]}}
  %0 = "xla.log1p"(%a) : (tuple<tensor<2x3xf16>>) -> tensor<2x3xf16>
  return %0 : tensor<2x3xf16>
}
