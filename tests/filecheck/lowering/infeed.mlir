// RUN: xlair-opt %s -p xla-to-linalg | filecheck %s

// Infeed with a token returns the data's leaves and a token (tensor<i1>); unsigned types are
// signless; an infeed whose value is unused still reads (the call stays).
// CHECK-DAG: func.func private @xlair_host.infeed_{{[0-9]}}(tensor<i1>) -> (tensor<2xf32>, tensor<i32>, tensor<i1>)
// CHECK-DAG: func.func private @xlair_host.infeed_{{[0-9]}}() -> tensor<f32>
// CHECK-LABEL: func.func @read(%{{.*}}: tensor<i1>) -> (tensor<2xf32>, tensor<i32>, tensor<i1>)
// CHECK: %[[R:.*]]:3 = call @xlair_host.infeed_{{[0-9]}}(%{{.*}}) : (tensor<i1>)
// CHECK: call @xlair_host.infeed_{{[0-9]}}() : () -> tensor<f32>
// CHECK: return %[[R]]#0, %[[R]]#1, %[[R]]#2
func.func @read(%t: !xla.token) -> (tensor<2xf32>, tensor<ui32>, !xla.token) {
  %0 = "xla.infeed"(%t) {shape = tuple<tensor<2xf32>, tensor<ui32>>} : (!xla.token) -> tuple<tuple<tensor<2xf32>, tensor<ui32>>, !xla.token>
  %1 = "xla.get_tuple_element"(%0) {index = 0 : i64} : (tuple<tuple<tensor<2xf32>, tensor<ui32>>, !xla.token>) -> tuple<tensor<2xf32>, tensor<ui32>>
  %2 = "xla.get_tuple_element"(%1) {index = 0 : i64} : (tuple<tensor<2xf32>, tensor<ui32>>) -> tensor<2xf32>
  %3 = "xla.get_tuple_element"(%1) {index = 1 : i64} : (tuple<tensor<2xf32>, tensor<ui32>>) -> tensor<ui32>
  %4 = "xla.get_tuple_element"(%0) {index = 1 : i64} : (tuple<tuple<tensor<2xf32>, tensor<ui32>>, !xla.token>) -> !xla.token
  %5 = "xla.infeed"() {shape = tensor<f32>} : () -> tensor<f32>
  return %2, %3, %4 : tensor<2xf32>, tensor<ui32>, !xla.token
}
