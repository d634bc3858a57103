// RUN: xlair-opt %s --split-input-file --verify-diagnostics

// Constraints of xla.sub (Element-wise binary arithmetic operations), checked by its shape rule.

// operands of different element types
func.func @sub_mixed(%a: tensor<2x3xi32>, %b: tensor<2x3xi1>) -> tensor<2x3xi32> {
  // expected-error@+1 {{'xla.sub' rhs must have signed integer, unsigned integer, floating-point or complex element type; got pred[2,3] [subtract_i2]}}
  %0 = "xla.sub"(%a, %b) : (tensor<2x3xi32>, tensor<2x3xi1>) -> tensor<2x3xi32>
  return %0 : tensor<2x3xi32>
}

// -----

// operands of incompatible shapes
func.func @sub_shapes(%a: tensor<2x3xi32>, %b: tensor<3x2xi32>) -> tensor<2x3xi32> {
  // expected-error@+1 {{'xla.sub' rhs must have the dimensions of lhs (s32[2,3]) up to size-1 dimensions; got s32[3,2] [spec:ElementWiseBinaryArithmeticOperations]}}
  %0 = "xla.sub"(%a, %b) : (tensor<2x3xi32>, tensor<3x2xi32>) -> tensor<2x3xi32>
  return %0 : tensor<2x3xi32>
}

// -----

// pred is not an element type of sub
func.func @sub_type(%a: tensor<2x3xi1>, %b: tensor<2x3xi1>) -> tensor<2x3xi1> {
  // expected-error@+1 {{'xla.sub' lhs must have signed integer, unsigned integer, floating-point or complex element type; got pred[2,3] [subtract_i1]}}
  %0 = "xla.sub"(%a, %b) : (tensor<2x3xi1>, tensor<2x3xi1>) -> tensor<2x3xi1>
  return %0 : tensor<2x3xi1>
}
