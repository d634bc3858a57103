// RUN: xlair-opt %s --split-input-file --verify-diagnostics

// Constraints of xla.while (While), checked by its shape rule.

// condition returns s32
func.func @while_0(%arg0: tensor<i32>, %arg1: tensor<3xf32>) -> tuple<tensor<i32>, tensor<3xf32>> {
  %0 = "xla.tuple"(%arg0, %arg1) : (tensor<i32>, tensor<3xf32>) -> tuple<tensor<i32>, tensor<3xf32>>
  // expected-error@+1 {{'xla.while' condition must return a PRED scalar; got ((s32[], f32[3])) -> s32[] [while_c1]}}
  %1 = "xla.while"(%0) ({
  ^bb0(%arg2: tuple<tensor<i32>, tensor<3xf32>>):
    %2 = "xla.get_tuple_element"(%arg2) {index = 0 : i64} : (tuple<tensor<i32>, tensor<3xf32>>) -> tensor<i32>
    %3 = "xla.constant"() {value = dense<4> : tensor<i32>} : () -> tensor<i32>
    "xla.return"(%3) : (tensor<i32>) -> ()
  }, {
  ^bb0(%arg2: tuple<tensor<i32>, tensor<3xf32>>):
    %2 = "xla.get_tuple_element"(%arg2) {index = 0 : i64} : (tuple<tensor<i32>, tensor<3xf32>>) -> tensor<i32>
    %3 = "xla.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
    %4 = "xla.add"(%2, %3) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %5 = "xla.get_tuple_element"(%arg2) {index = 1 : i64} : (tuple<tensor<i32>, tensor<3xf32>>) -> tensor<3xf32>
    %6 = "xla.get_tuple_element"(%arg2) {index = 1 : i64} : (tuple<tensor<i32>, tensor<3xf32>>) -> tensor<3xf32>
    %7 = "xla.mul"(%5, %6) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    %8 = "xla.tuple"(%4, %7) : (tensor<i32>, tensor<3xf32>) -> tuple<tensor<i32>, tensor<3xf32>>
    "xla.return"(%8) : (tuple<tensor<i32>, tensor<3xf32>>) -> ()
  }) : (tuple<tensor<i32>, tensor<3xf32>>) -> tuple<tensor<i32>, tensor<3xf32>>
  return %1 : tuple<tensor<i32>, tensor<3xf32>>
}

// -----

// body returns another shape
func.func @while_1(%arg0: tensor<i32>, %arg1: tensor<3xf32>) -> tuple<tensor<i32>, tensor<3xf32>> {
  %0 = "xla.tuple"(%arg0, %arg1) : (tensor<i32>, tensor<3xf32>) -> tuple<tensor<i32>, tensor<3xf32>>
  // expected-error@+1 {{'xla.while' body must return the type of init ((s32[], f32[3])); got ((s32[], f32[3])) -> f32[3] [while_c2]}}
  %1 = "xla.while"(%0) ({
  ^bb0(%arg2: tuple<tensor<i32>, tensor<3xf32>>):
    %2 = "xla.get_tuple_element"(%arg2) {index = 0 : i64} : (tuple<tensor<i32>, tensor<3xf32>>) -> tensor<i32>
    %3 = "xla.constant"() {value = dense<4> : tensor<i32>} : () -> tensor<i32>
    %4 = "xla.lt"(%2, %3) : (tensor<i32>, tensor<i32>) -> tensor<i1>
    "xla.return"(%4) : (tensor<i1>) -> ()
  }, {
  ^bb0(%arg2: tuple<tensor<i32>, tensor<3xf32>>):
    %2 = "xla.get_tuple_element"(%arg2) {index = 0 : i64} : (tuple<tensor<i32>, tensor<3xf32>>) -> tensor<i32>
    %3 = "xla.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
    %4 = "xla.add"(%2, %3) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %5 = "xla.get_tuple_element"(%arg2) {index = 1 : i64} : (tuple<tensor<i32>, tensor<3xf32>>) -> tensor<3xf32>
    %6 = "xla.get_tuple_element"(%arg2) {index = 1 : i64} : (tuple<tensor<i32>, tensor<3xf32>>) -> tensor<3xf32>
    %7 = "xla.mul"(%5, %6) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    "xla.return"(%7) : (tensor<3xf32>) -> ()
  }) : (tuple<tensor<i32>, tensor<3xf32>>) -> tuple<tensor<i32>, tensor<3xf32>>
  return %1 : tuple<tensor<i32>, tensor<3xf32>>
}
