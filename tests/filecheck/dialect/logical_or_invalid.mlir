// RUN: xlair-opt %s --split-input-file --verify-diagnostics

// Constraints of xla.logical_or (Element-wise binary arithmetic operations), checked by its shape rule.

// operands of different element types
func.func @logical_or_mixed(%a: tensor<2x3xi1>, %b: tensor<2x3xi32>) -> tensor<2x3xi1> {
  // expected-error@+1 {{'xla.logical_or' rhs must have PRED element type; got s32[2,3] [or_i2]}}
  %0 = "xla.logical_or"(%a, %b) : (tensor<2x3xi1>, tensor<2x3xi32>) -> tensor<2x3xi1>
  return %0 : tensor<2x3xi1>
}

// -----

// operands of incompatible shapes
func.func @logical_or_shapes(%a: tensor<2x3xi1>, %b: tensor<3x2xi1>) -> tensor<2x3xi1> {
  // expected-error@+1 {{'xla.logical_or' rhs must have the dimensions of lhs (pred[2,3]) up to size-1 dimensions; got pred[3,2] [spec:ElementWiseBinaryArithmeticOperations]}}
  %0 = "xla.logical_or"(%a, %b) : (tensor<2x3xi1>, tensor<3x2xi1>) -> tensor<2x3xi1>
  return %0 : tensor<2x3xi1>
}

// -----

// f32 is not an element type of logical_or
func.func @logical_or_type(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'xla.logical_or' lhs must have PRED element type; got f32[2,3] [or_i1]}}
  %0 = "xla.logical_or"(%a, %b) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
