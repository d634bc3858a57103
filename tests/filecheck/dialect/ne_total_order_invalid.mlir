// RUN: xlair-opt %s --split-input-file --verify-diagnostics

// Constraints of xla.ne_total_order (Element-wise comparison operations), checked by its shape rule.

// operands of different element types
func.func @ne_total_order_mixed(%a: tensor<2x3xi32>, %b: tensor<2x3xi1>) -> tensor<2x3xi1> {
  // expected-error@+1 {{'xla.ne_total_order' rhs must have the element type of lhs (S32); got pred[2,3] [compare_c1]}}
  %0 = "xla.ne_total_order"(%a, %b) : (tensor<2x3xi32>, tensor<2x3xi1>) -> tensor<2x3xi1>
  return %0 : tensor<2x3xi1>
}

// -----

// operands of incompatible shapes
func.func @ne_total_order_shapes(%a: tensor<2x3xi32>, %b: tensor<3x2xi32>) -> tensor<2x3xi1> {
  // expected-error@+1 {{'xla.ne_total_order' rhs must have the dimensions of lhs (s32[2,3]) up to size-1 dimensions; got s32[3,2] [spec:ElementWiseComparisonOperations]}}
  %0 = "xla.ne_total_order"(%a, %b) : (tensor<2x3xi32>, tensor<3x2xi32>) -> tensor<2x3xi1>
  return %0 : tensor<2x3xi1>
}

// -----

// c64 is not an element type of ne_total_order
func.func @ne_total_order_type(%a: tensor<2x3xcomplex<f32>>, %b: tensor<2x3xcomplex<f32>>) -> tensor<2x3xi1> {
  // expected-error@+1 {{'xla.ne_total_order' lhs must have PRED, signed integer, unsigned integer or floating-point element type; got c64[2,3] [compare_i1]}}
  %0 = "xla.ne_total_order"(%a, %b) : (tensor<2x3xcomplex<f32>>, tensor<2x3xcomplex<f32>>) -> tensor<2x3xi1>
  return %0 : tensor<2x3xi1>
}
