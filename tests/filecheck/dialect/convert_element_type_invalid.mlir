// RUN: xlair-opt %s --split-input-file --verify-diagnostics

// Constraints of xla.convert_element_type (ConvertElementType), checked by its shape rule.

// complex to real
func.func @convert_element_type_0(%arg0: tensor<2x3xcomplex<f32>>) -> tensor<2x3xbf16> {
  // expected-error@+1 {{'xla.convert_element_type' new_element_type must be complex when operand is complex (c64[2,3]); use Real/Imag/Abs; got BF16 [spec:ConvertElementType]}}
  %0 = "xla.convert_element_type"(%arg0) {new_element_type = bf16} : (tensor<2x3xcomplex<f32>>) -> tensor<2x3xbf16>
  return %0 : tensor<2x3xbf16>
}
