// RUN: xlair-opt %s --split-input-file --verify-diagnostics

// Constraints of xla.reduce_precision (ReducePrecision), checked by its shape rule.

// no exponent bits
func.func @reduce_precision_0(%arg0: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'xla.reduce_precision' exponent_bits must be at least 1 (to tell zero from infinity); got 0 [reduce_precision_c2]}}
  %0 = "xla.reduce_precision"(%arg0) {exponent_bits = 0 : i64, mantissa_bits = 10 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// negative mantissa bits
func.func @reduce_precision_1(%arg0: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'xla.reduce_precision' mantissa_bits must not be negative; got -1 [reduce_precision_c3]}}
  %0 = "xla.reduce_precision"(%arg0) {exponent_bits = 5 : i64, mantissa_bits = -1 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
