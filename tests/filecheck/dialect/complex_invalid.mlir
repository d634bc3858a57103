// RUN: xlair-opt %s --split-input-file --verify-diagnostics

// Constraints of xla.complex (Element-wise binary arithmetic operations), checked by its shape rule.

// operands of different element types
func.func @complex_mixed(%a: tensor<2x3xf32>, %b: tensor<2x3xi1>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'xla.complex' rhs must have floating-point element type; got pred[2,3] [complex_i2]}}
  %0 = "xla.complex"(%a, %b) : (tensor<2x3xf32>, tensor<2x3xi1>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// operands of incompatible shapes
func.func @complex_shapes(%a: tensor<2x3xf32>, %b: tensor<3x2xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'xla.complex' rhs must have the dimensions of lhs (f32[2,3]) up to size-1 dimensions; got f32[3,2] [spec:ElementWiseBinaryArithmeticOperations]}}
  %0 = "xla.complex"(%a, %b) : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// s32 is not an element type of complex
func.func @complex_type(%a: tensor<2x3xi32>, %b: tensor<2x3xi32>) -> tensor<2x3xi32> {
  // expected-error@+1 {{'xla.complex' lhs must have floating-point element type; got s32[2,3] [complex_i1]}}
  %0 = "xla.complex"(%a, %b) : (tensor<2x3xi32>, tensor<2x3xi32>) -> tensor<2x3xi32>
  return %0 : tensor<2x3xi32>
}
