// RUN: xlair-opt %s --split-input-file --verify-diagnostics

// Constraints of xla.xor (Element-wise binary arithmetic operations), checked by its shape rule.

// operands of different element types
func.func @xor_mixed(%a: tensor<2x3xi32>, %b: tensor<2x3xi1>) -> tensor<2x3xi32> {
  // expected-error@+1 {{'xla.xor' rhs must have the element type of lhs (S32); got pred[2,3] [xor_c1]}}
  %0 = "xla.xor"(%a, %b) : (tensor<2x3xi32>, tensor<2x3xi1>) -> tensor<2x3xi32>
  return %0 : tensor<2x3xi32>
}

// -----

// operands of incompatible shapes
func.func @xor_shapes(%a: tensor<2x3xi32>, %b: tensor<3x2xi32>) -> tensor<2x3xi32> {
  // expected-error@+1 {{'xla.xor' rhs must have the dimensions of lhs (s32[2,3]) up to size-1 dimensions; got s32[3,2] [spec:ElementWiseBinaryArithmeticOperations]}}
  %0 = "xla.xor"(%a, %b) : (tensor<2x3xi32>, tensor<3x2xi32>) -> tensor<2x3xi32>
  return %0 : tensor<2x3xi32>
}

// -----

// f32 is not an element type of xor
func.func @xor_type(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'xla.xor' lhs must have PRED, signed integer or unsigned integer element type; got f32[2,3] [xor_i1]}}
  %0 = "xla.xor"(%a, %b) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
