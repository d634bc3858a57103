// RUN: xlair-opt %s --split-input-file --verify-diagnostics

// Constraints of xla.get_tuple_element (GetTupleElement), checked by its shape rule.

// index out of range
func.func @get_tuple_element_0(%arg0: tuple<tensor<2x3xf32>, tensor<i32>>) -> tensor<i32> {
  // expected-error@+1 {{'xla.get_tuple_element' index must be in [0, 2) for (f32[2,3], s32[]); got 2 [get_tuple_element_c1]}}
  %0 = "xla.get_tuple_element"(%arg0) {index = 2 : i64} : (tuple<tensor<2x3xf32>, tensor<i32>>) -> tensor<i32>
  return %0 : tensor<i32>
}

// -----

// not a tuple
func.func @get_tuple_element_1(%arg0: tensor<i32>) -> tensor<i32> {
  // expected-error@+1 {{'xla.get_tuple_element' tuple_data must be a tuple; got s32[] [get_tuple_element_i1]}}
  %0 = "xla.get_tuple_element"(%arg0) {index = 1 : i64} : (tensor<i32>) -> tensor<i32>
  return %0 : tensor<i32>
}
