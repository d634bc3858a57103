// RUN: xlair-opt %s --split-input-file --verify-diagnostics

// Constraints of xla.outfeed (Outfeed), checked by its shape rule.

// shape_with_layout differs from the operand
func.func @outfeed_0(%arg0: tensor<2xf32>) -> !xla.token {
  // expected-error@+1 {{'xla.outfeed' shape_with_layout must be the operand's shape (f32[2]); got f32[3] [spec:Outfeed]}}
  %0 = "xla.outfeed"(%arg0) {shape_with_layout = tensor<3xf32>, outfeed_config = ""} : (tensor<2xf32>) -> !xla.token
  return %0 : !xla.token
}
