// RUN: xlair-opt %s --split-input-file --verify-diagnostics

// Constraints of xla.logical_not (Element-wise unary functions), checked by its shape rule.

// f32 is not an element type of logical_not
func.func @logical_not_type(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'xla.logical_not' operand must have PRED element type; got f32[2,3] [spec:ElementWiseUnaryFunctions]}}
  %0 = "xla.logical_not"(%a) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// a tuple operand
func.func @logical_not_tuple(%a: tuple<tensor<2x3xi1>>) -> tensor<2x3xi1> {
  // expected-error@+1 {{'xla.logical_not' operand must be an array; got (pred[2,3]) [spec:ElementWiseUnaryFunctions]}}
  %0 = "xla.logical_not"(%a) : (tuple<tensor<2x3xi1>>) -> tensor<2x3xi1>
  return %0 : tensor<2x3xi1>
}
