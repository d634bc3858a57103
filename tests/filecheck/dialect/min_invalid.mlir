// RUN: xlair-opt %s --split-input-file --verify-diagnostics

// Constraints of xla.min (Element-wise binary arithmetic operations), checked by its shape rule.

// operands of different element types
func.func @min_mixed(%a: tensor<2x3xi32>, %b: tensor<2x3xi1>) -> tensor<2x3xi32> {
  // expected-error@+1 {{'xla.min' rhs must have the element type of lhs (S32); got pred[2,3] [minimum_c1]}}
  %0 = "xla.min"(%a, %b) : (tensor<2x3xi32>, tensor<2x3xi1>) -> tensor<2x3xi32>
  return %0 : tensor<2x3xi32>
}

// -----

// operands of incompatible shapes
func.func @min_shapes(%a: tensor<2x3xi32>, %b: tensor<3x2xi32>) -> tensor<2x3xi32> {
  // expected-error@+1 {{'xla.min' rhs must have the dimensions of lhs (s32[2,3]) up to size-1 dimensions; got s32[3,2] [spec:ElementWiseBinaryArithmeticOperations]}}
  %0 = "xla.min"(%a, %b) : (tensor<2x3xi32>, tensor<3x2xi32>) -> tensor<2x3xi32>
  return %0 : tensor<2x3xi32>
}
