// RUN: xlair-opt %s -p xla-to-iree-input | filecheck %s

// A called computation is one private function; tuple arguments and results travel as leaves.
// CHECK-LABEL: func.func @main
// CHECK: call @swap(%{{.*}}, %{{.*}}) : (tensor<i32>, tensor<2xf32>) -> (tensor<2xf32>, tensor<i32>)
// CHECK: call @swap(
// CHECK-LABEL: func.func private @swap(%{{.*}}: tensor<i32>, %{{.*}}: tensor<2xf32>) -> (tensor<2xf32>, tensor<i32>)
// CHECK-NOT: xla.
func.func @main(%a: tensor<i32>, %b: tensor<2xf32>) -> tuple<tensor<2xf32>, tensor<i32>> {
  %t = "xla.tuple"(%a, %b) : (tensor<i32>, tensor<2xf32>) -> tuple<tensor<i32>, tensor<2xf32>>
  %0 = "xla.call"(%t) {computation = @swap} : (tuple<tensor<i32>, tensor<2xf32>>) -> tuple<tensor<2xf32>, tensor<i32>>
  %1 = "xla.get_tuple_element"(%0) {index = 0 : i64} : (tuple<tensor<2xf32>, tensor<i32>>) -> tensor<2xf32>
  %2 = "xla.get_tuple_element"(%0) {index = 1 : i64} : (tuple<tensor<2xf32>, tensor<i32>>) -> tensor<i32>
  %u = "xla.tuple"(%2, %1) : (tensor<i32>, tensor<2xf32>) -> tuple<tensor<i32>, tensor<2xf32>>
  %3 = "xla.call"(%u) {computation = @swap} : (tuple<tensor<i32>, tensor<2xf32>>) -> tuple<tensor<2xf32>, tensor<i32>>
  return %3 : tuple<tensor<2xf32>, tensor<i32>>
}
func.func private @swap(%t: tuple<tensor<i32>, tensor<2xf32>>) -> tuple<tensor<2xf32>, tensor<i32>> {
  %0 = "xla.get_tuple_element"(%t) {index = 0 : i64} : (tuple<tensor<i32>, tensor<2xf32>>) -> tensor<i32>
  %1 = "xla.get_tuple_element"(%t) {index = 1 : i64} : (tuple<tensor<i32>, tensor<2xf32>>) -> tensor<2xf32>
  %2 = "xla.tuple"(%1, %0) : (tensor<2xf32>, tensor<i32>) -> tuple<tensor<2xf32>, tensor<i32>>
  return %2 : tuple<tensor<2xf32>, tensor<i32>>
}
