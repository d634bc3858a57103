// RUN: xlair-opt %s --split-input-file --verify-diagnostics

// Constraints of xla.after_all (AfterAll), checked by its shape rule.

// an operand that is not a token
func.func @after_all_0(%arg0: tensor<f32>) -> !xla.token {
  // expected-error@+1 {{'xla.after_all' operands[0] must be a token; got f32[] [after_all_i1]}}
  %0 = "xla.after_all"(%arg0) : (tensor<f32>) -> !xla.token
  return %0 : !xla.token
}
