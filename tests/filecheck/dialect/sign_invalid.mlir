// RUN: xlair-opt %s --split-input-file --verify-diagnostics

// Constraints of xla.sign (Element-wise unary functions), checked by its shape rule.

// pred is not an element type of sign
func.func @sign_type(%a: tensor<2x3xi1>) -> tensor<2x3xi1> {
  // expected-error@+1 {{'xla.sign' operand must have signed integer, unsigned integer, floating-point or complex element type; got pred[2,3] [sign_i1]}}
  %0 = "xla.sign"(%a) : (tensor<2x3xi1>) -> tensor<2x3xi1>
  return %0 : tensor<2x3xi1>
}

// -----

// a tuple operand
func.func @sign_tuple(%a: tuple<tensor<2x3xi8>>) -> tensor<2x3xi8> {
  // expected-error@+1 {{'xla.sign' operand must be an array; got (s8[2,3]) [sign_i1]}}
  %0 = "xla.sign"(%a) : (tuple<tensor<2x3xi8>>) -> tensor<2x3xi8>
  return %0 : tensor<2x3xi8>
}
