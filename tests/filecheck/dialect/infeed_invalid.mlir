// RUN: xlair-opt %s --split-input-file --verify-diagnostics

// Constraints of xla.infeed (Infeed), checked by its shape rule.

// a nested tuple shape
func.func @infeed_0() -> tuple<tuple<tensor<f32>>> {
  // expected-error@+1 {{'xla.infeed' shape must be an array or a flat tuple of arrays (tuples do not nest here); got ((f32[])) [infeed_c2]}}
  %0 = "xla.infeed"() {shape = tuple<tuple<tensor<f32>>>} : () -> tuple<tuple<tensor<f32>>>
  return %0 : tuple<tuple<tensor<f32>>>
}

// -----

// a token operand that is not a token
func.func @infeed_1(%arg0: tensor<f32>) -> tuple<tensor<f32>, !xla.token> {
  // expected-error@+1 {{'xla.infeed' token must be a token; got f32[] [infeed_i1]}}
  %0 = "xla.infeed"(%arg0) {shape = tensor<f32>} : (tensor<f32>) -> tuple<tensor<f32>, !xla.token>
  return %0 : tuple<tensor<f32>, !xla.token>
}
