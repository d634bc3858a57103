// RUN: xlair-opt %s --split-input-file --verify-diagnostics

// Constraints of xla.broadcast (Broadcast), checked by its shape rule.

// negative size
func.func @broadcast_0(%arg0: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{'xla.broadcast' broadcast_sizes must not be negative; got [-2] [spec:Broadcast]}}
  %0 = "xla.broadcast"(%arg0) {broadcast_sizes = array<i64: -2>} : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
