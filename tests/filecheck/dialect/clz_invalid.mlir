// RUN: xlair-opt %s --split-input-file --verify-diagnostics

// Constraints of xla.clz (Element-wise unary functions), checked by its shape rule.

// f32 is not an element type of clz
func.func @clz_type(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'xla.clz' operand must have signed integer or unsigned integer element type; got f32[2,3] [count_leading_zeros_i1]}}
  %0 = "xla.clz"(%a) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// a tuple operand
func.func @clz_tuple(%a: tuple<tensor<2x3xi8>>) -> tensor<2x3xi8> {
  // expected-error@+1 {{'xla.clz' operand must be an array; got (s8[2,3]) [count_leading_zeros_i1]}}
  %0 = "xla.clz"(%a) : (tuple<tensor<2x3xi8>>) -> tensor<2x3xi8>
  return %0 : tensor<2x3xi8>
}
