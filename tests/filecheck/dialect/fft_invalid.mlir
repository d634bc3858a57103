// RUN: xlair-opt %s --split-input-file --verify-diagnostics

// Constraints of xla.fft (Fft), checked by its shape rule.

// length differs from the operand's last dimension
func.func @fft_0(%arg0: tensor<2x6xcomplex<f32>>) -> tensor<2x6xcomplex<f32>> {
  // expected-error@+1 {{'xla.fft' fft_length must match the innermost dimensions of operand [6] for FFT; got [5] [spec:Fft]}}
  %0 = "xla.fft"(%arg0) {fft_length = array<i64: 5>, fft_type = "FFT"} : (tensor<2x6xcomplex<f32>>) -> tensor<2x6xcomplex<f32>>
  return %0 : tensor<2x6xcomplex<f32>>
}

// -----

// FFT of a real array
func.func @fft_1(%arg0: tensor<2x6xf32>) -> tensor<2x6xf32> {
  // expected-error@+1 {{'xla.fft' operand must have complex (C64 or C128) element type for FFT; got f32[2,6] [fft_c2]}}
  %0 = "xla.fft"(%arg0) {fft_length = array<i64: 6>, fft_type = "FFT"} : (tensor<2x6xf32>) -> tensor<2x6xf32>
  return %0 : tensor<2x6xf32>
}
