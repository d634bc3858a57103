// RUN: xlair-opt %s --split-input-file --verify-diagnostics

// Constraints of xla.send (Send), checked by its shape rule.

// a negative channel
func.func @send_0(%arg0: tensor<2xf32>) -> !xla.token {
  // expected-error@+1 {{'xla.send' channel_handle must not be negative; got -1 [send_i3]}}
  %0 = "xla.send"(%arg0) {channel_handle = -1 : i64} : (tensor<2xf32>) -> !xla.token
  return %0 : !xla.token
}

// -----

// a tuple operand
func.func @send_1(%arg0: tuple<tensor<2xf32>>) -> !xla.token {
  // expected-error@+1 {{'xla.send' operand must be an array; got (f32[2]) [send_i1]}}
  %0 = "xla.send"(%arg0) {channel_handle = 1 : i64} : (tuple<tensor<2xf32>>) -> !xla.token
  return %0 : !xla.token
}
