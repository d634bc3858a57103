// RUN: xlair-opt %s --split-input-file --verify-diagnostics

// Constraints of xla.pow (Element-wise binary arithmetic operations), checked by its shape rule.

// operands of different element types
func.func @pow_mixed(%a: tensor<2x3xi32>, %b: tensor<2x3xi1>) -> tensor<2x3xi32> {
  // expected-error@+1 {{'xla.pow' rhs must have signed integer, unsigned integer, floating-point or complex element type; got pred[2,3] [power_i2]}}
  %0 = "xla.pow"(%a, %b) : (tensor<2x3xi32>, tensor<2x3xi1>) -> tensor<2x3xi32>
  return %0 : tensor<2x3xi32>
}

// -----

// operands of incompatible shapes
func.func @pow_shapes(%a: tensor<2x3xi32>, %b: tensor<3x2xi32>) -> tensor<2x3xi32> {
  // expected-error@+1 {{'xla.pow' rhs must have the dimensions of lhs (s32[2,3]) up to size-1 dimensions; got s32[3,2] [spec:ElementWiseBinaryArithmeticOperations]}}
  %0 = "xla.pow"(%a, %b) : (tensor<2x3xi32>, tensor<3x2xi32>) -> tensor<2x3xi32>
  return %0 : tensor<2x3xi32>
}

// -----

// pred is not an element type of pow
func.func @pow_type(%a: tensor<2x3xi1>, %b: tensor<2x3xi1>) -> tensor<2x3xi1> {
  // expected-error@+1 {{'xla.pow' lhs must have signed integer, unsigned integer, floating-point or complex element type; got pred[2,3] [power_i1]}}
  %0 = "xla.pow"(%a, %b) : (tensor<2x3xi1>, tensor<2x3xi1>) -> tensor<2x3xi1>
  return %0 : tensor<2x3xi1>
}
