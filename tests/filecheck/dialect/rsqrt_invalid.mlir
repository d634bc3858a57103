// RUN: xlair-opt %s --split-input-file --verify-diagnostics

// Constraints of xla.rsqrt (Element-wise unary functions), checked by its shape rule.

// s32 is not an element type of rsqrt
func.func @rsqrt_type(%a: tensor<2x3xi32>) -> tensor<2x3xi32> {
  // expected-error@+1 {{'xla.rsqrt' operand must have floating-point or complex element type; got s32[2,3] [rsqrt_i1]}}
  %0 = "xla.rsqrt"(%a) : (tensor<2x3xi32>) -> tensor<2x3xi32>
  return %0 : tensor<2x3xi32>
}

// -----

// a tuple operand
func.func @rsqrt_tuple(%a: tuple<tensor<2x3xf16>>) -> tensor<2x3xf16> {
  // expected-error@+1 {{'xla.rsqrt' operand must be an array; got (f16[2,3]) [rsqrt_i1]}}
  %0 = "xla.rsqrt"(%a) : (tuple<tensor<2x3xf16>>) -> tensor<2x3xf16>
  return %0 : tensor<2x3xf16>
}
