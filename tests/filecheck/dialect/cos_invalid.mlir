// RUN: xlair-opt %s --split-input-file --verify-diagnostics

// Constraints of xla.cos (Element-wise unary functions), checked by its shape rule.

// s32 is not an element type of cos
func.func @cos_type(%a: tensor<2x3xi32>) -> tensor<2x3xi32> {
  // expected-error@+1 {{'xla.cos' operand must have floating-point or complex element type; got s32[2,3] [cosine_i1]}}
  %0 = "xla.cos"(%a) : (tensor<2x3xi32>) -> tensor<2x3xi32>
  return %0 : tensor<2x3xi32>
}

// -----

// a tuple operand
func.func @cos_tuple(%a: tuple<tensor<2x3xf16>>) -> tensor<2x3xf16> {
  // expected-error@+1 {{'xla.cos' operand must be an array; got (f16[2,3]) [cosine_i1]}}
  %0 = "xla.cos"(%a) : (tuple<tensor<2x3xf16>>) -> tensor<2x3xf16>
  return %0 : tensor<2x3xf16>
}
