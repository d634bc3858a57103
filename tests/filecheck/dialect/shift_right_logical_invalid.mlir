// RUN: xlair-opt %s --split-input-file --verify-diagnostics

// Constraints of xla.shift_right_logical (Element-wise binary arithmetic operations), checked by its shape rule.

// operands of different element types
func.func @shift_right_logical_mixed(%a: tensor<2x3xi32>, %b: tensor<2x3xi1>) -> tensor<2x3xi32> {
  // expected-error@+1 {{'xla.shift_right_logical' rhs must have signed integer or unsigned integer element type; got pred[2,3] [shift_right_logical_i2]}}
  %0 = "xla.shift_right_logical"(%a, %b) : (tensor<2x3xi32>, tensor<2x3xi1>) -> tensor<2x3xi32>
  return %0 : tensor<2x3xi32>
}

// -----

// operands of incompatible shapes
func.func @shift_right_logical_shapes(%a: tensor<2x3xi32>, %b: tensor<3x2xi32>) -> tensor<2x3xi32> {
  // expected-error@+1 {{'xla.shift_right_logical' rhs must have the dimensions of lhs (s32[2,3]) up to size-1 dimensions; got s32[3,2] [spec:ElementWiseBinaryArithmeticOperations]}}
  %0 = "xla.shift_right_logical"(%a, %b) : (tensor<2x3xi32>, tensor<3x2xi32>) -> tensor<2x3xi32>
  return %0 : tensor<2x3xi32>
}

// -----

// f32 is not an element type of shift_right_logical
func.func @shift_right_logical_type(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'xla.shift_right_logical' lhs must have signed integer or unsigned integer element type; got f32[2,3] [shift_right_logical_i1]}}
  %0 = "xla.shift_right_logical"(%a, %b) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
