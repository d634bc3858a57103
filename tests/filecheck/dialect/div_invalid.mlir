// RUN: xlair-opt %s --split-input-file --verify-diagnostics

// Constraints of xla.div (Element-wise binary arithmetic operations), checked by its shape rule.

// operands of different element types
func.func @div_mixed(%a: tensor<2x3xi32>, %b: tensor<2x3xi1>) -> tensor<2x3xi32> {
  // expected-error@+1 {{'xla.div' rhs must have signed integer, unsigned integer, floating-point or complex element type; got pred[2,3] [divide_i2]}}
  %0 = "xla.div"(%a, %b) : (tensor<2x3xi32>, tensor<2x3xi1>) -> tensor<2x3xi32>
  return %0 : tensor<2x3xi32>
}

// -----

// operands of incompatible shapes
func.func @div_shapes(%a: tensor<2x3xi32>, %b: tensor<3x2xi32>) -> tensor<2x3xi32> {
  // expected-error@+1 {{'xla.div' rhs must have the dimensions of lhs (s32[2,3]) up to size-1 dimensions; got s32[3,2] [spec:ElementWiseBinaryArithmeticOperations]}}
  %0 = "xla.div"(%a, %b) : (tensor<2x3xi32>, tensor<3x2xi32>) -> tensor<2x3xi32>
  return %0 : tensor<2x3xi32>
}

// -----

// pred is not an element type of div
func.func @div_type(%a: tensor<2x3xi1>, %b: tensor<2x3xi1>) -> tensor<2x3xi1> {
  // expected-error@+1 {{'xla.div' lhs must have signed integer, unsigned integer, floating-point or complex element type; got pred[2,3] [divide_i1]}}
  %0 = "xla.div"(%a, %b) : (tensor<2x3xi1>, tensor<2x3xi1>) -> tensor<2x3xi1>
  return %0 : tensor<2x3xi1>
}
