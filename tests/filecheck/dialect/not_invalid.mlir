// RUN: xlair-opt %s --split-input-file --verify-diagnostics

// Constraints of xla.not (Element-wise unary functions), checked by its shape rule.

// f32 is not an element type of not
func.func @not_type(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'xla.not' operand must have PRED, signed integer or unsigned integer element type; got f32[2,3] [spec:ElementWiseUnaryFunctions]}}
  %0 = "xla.not"(%a) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// a tuple operand
func.func @not_tuple(%a: tuple<tensor<2x3xui64>>) -> tensor<2x3xui64> {
  // expected-error@+1 {{'xla.not' operand must be an array; got (u64[2,3]) [spec:ElementWiseUnaryFunctions]}}
  %0 = "xla.not"(%a) : (tuple<tensor<2x3xui64>>) -> tensor<2x3xui64>
  return %0 : tensor<2x3xui64>
}
