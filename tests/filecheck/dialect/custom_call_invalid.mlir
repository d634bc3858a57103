// RUN: xlair-opt %s --split-input-file --verify-diagnostics

// Constraints of xla.custom_call (CustomCall), checked by its shape rule.

// an empty target name
func.func @custom_call_0(%arg0: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error@+1 {{'xla.custom_call' target_name must be a non-empty name of letters, digits, '_' and '.'; got '' [custom_call_i2]}}
  %0 = "xla.custom_call"(%arg0) {target_name = "", shape = tensor<2xf32>} : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// a token argument
func.func @custom_call_1(%arg0: !xla.token) -> tensor<2xf32> {
  // expected-error@+1 {{'xla.custom_call' args[0] must be an array or a tuple of arrays; got token[] [custom_call_i1]}}
  %0 = "xla.custom_call"(%arg0) {target_name = "f", shape = tensor<2xf32>} : (!xla.token) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
