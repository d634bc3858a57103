// RUN: xlair-opt %s -p xla-to-iree-input | filecheck %s

// Tuple parameters and results are flattened into their leaves; get_tuple_element of a tuple folds.
// CHECK-LABEL: func.func @main(%{{.*}}: tensor<2xf32>, %{{.*}}: tensor<i32>) -> (tensor<i32>, tensor<2xf32>)
// CHECK-NOT: tuple
// CHECK-NOT: xla.
func.func @main(%t: tuple<tensor<2xf32>, tensor<i32>>) -> tuple<tensor<i32>, tensor<2xf32>> {
  %a = "xla.get_tuple_element"(%t) {index = 0 : i64} : (tuple<tensor<2xf32>, tensor<i32>>) -> tensor<2xf32>
  %b = "xla.get_tuple_element"(%t) {index = 1 : i64} : (tuple<tensor<2xf32>, tensor<i32>>) -> tensor<i32>
  %r = "xla.tuple"(%b, %a) : (tensor<i32>, tensor<2xf32>) -> tuple<tensor<i32>, tensor<2xf32>>
  return %r : tuple<tensor<i32>, tensor<2xf32>>
}
