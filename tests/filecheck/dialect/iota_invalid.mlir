// RUN: xlair-opt %s --split-input-file --verify-diagnostics

// Constraints of xla.iota (Iota), checked by its shape rule.

// dimension out of range
func.func @iota_0() -> tensor<2x4xi32> {
  // expected-error@+1 {{'xla.iota' iota_dimension must be dimensions of the shape's rank 2, in [0, 2); got [2] [iota_c1]}}
  %0 = "xla.iota"() {iota_dimension = 2 : i64, shape = tensor<2x4xi32>} : () -> tensor<2x4xi32>
  return %0 : tensor<2x4xi32>
}

// -----

// PRED iota
func.func @iota_1() -> tensor<2x4xi1> {
  // expected-error@+1 {{'xla.iota' type must be an integer, floating-point or complex type; got PRED [spec:Iota]}}
  %0 = "xla.iota"() {iota_dimension = 1 : i64, shape = tensor<2x4xi1>} : () -> tensor<2x4xi1>
  return %0 : tensor<2x4xi1>
}
