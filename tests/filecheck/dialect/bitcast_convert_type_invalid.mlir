// RUN: xlair-opt %s --split-input-file --verify-diagnostics

// Constraints of xla.bitcast_convert_type (BitcastConvertType), checked by its shape rule.

// wider type over a last dimension not of the ratio
func.func @bitcast_convert_type_0(%arg0: tensor<2x3xf32>) -> tensor<2x3x2xui64> {
  // expected-error@+1 {{'xla.bitcast_convert_type' operand must have a last dimension of size 2 (64/32 bits) to bitcast to U64; got f32[2,3] [bitcast_convert_c1]}}
  %0 = "xla.bitcast_convert_type"(%arg0) {new_element_type = ui64} : (tensor<2x3xf32>) -> tensor<2x3x2xui64>
  return %0 : tensor<2x3x2xui64>
}
