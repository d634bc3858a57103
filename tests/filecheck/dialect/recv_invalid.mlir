// RUN: xlair-opt %s --split-input-file --verify-diagnostics

// Constraints of xla.recv (Recv), checked by its shape rule.

// a negative channel
func.func @recv_0() -> tensor<2xf32> {
  // expected-error@+1 {{'xla.recv' channel_handle must not be negative; got -2 [recv_i2]}}
  %0 = "xla.recv"() {channel_handle = -2 : i64, shape = tensor<2xf32>} : () -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
