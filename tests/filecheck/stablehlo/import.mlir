// RUN: xlair-opt --import-stablehlo --split-input-file %s | filecheck %s

// A while loop whose body uses a value of the enclosing function: the value rides in the
// loop state (a tuple), the counter comes back as element 0; TOTALORDER compares become the
// *_total_order ops.

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[N:.*]]: tensor<i32>) -> tensor<i32>
// CHECK: %[[INIT:.*]] = "xla.tuple"(%{{.*}}, %[[N]])
// CHECK: %[[W:.*]] = "xla.while"(%[[INIT]])
// CHECK: "xla.lt_total_order"
// CHECK: "xla.return"
// CHECK: "xla.add"
// CHECK: "xla.return"
// CHECK: %[[R:.*]] = "xla.get_tuple_element"(%[[W]]) {index = 0 : i64}
// CHECK-NEXT: return %[[R]]
func.func @main(%n: tensor<i32>) -> tensor<i32> {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %r = stablehlo.while(%i = %c0) : tensor<i32>
    cond {
      %lt = stablehlo.compare LT, %i, %n, TOTALORDER : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %lt : tensor<i1>
    } do {
      %one = stablehlo.constant dense<1> : tensor<i32>
      %i2 = stablehlo.add %i, %one : tensor<i32>
      stablehlo.return %i2 : tensor<i32>
    }
  return %r : tensor<i32>
}

// -----

// Several results become a tuple; a complex constant is made of its parts.

// CHECK-LABEL: func.func @main
// CHECK-SAME: -> tuple<tensor<2xf32>, tensor<complex<f32>>>
// CHECK: "xla.sin"
// CHECK: "xla.complex"
// CHECK: "xla.tuple"
func.func @main(%a: tensor<2xf32>) -> (tensor<2xf32>, tensor<complex<f32>>) {
  %0 = stablehlo.sine %a : tensor<2xf32>
  %1 = stablehlo.constant dense<(1.0, -2.0)> : tensor<complex<f32>>
  return %0, %1 : tensor<2xf32>, tensor<complex<f32>>
}

// -----

// Tokens, side effects and collectives: !stablehlo.token is the xla token; infeed takes its
// token and returns (data, token); custom_call keeps its target; a variadic all_reduce is one
// xla.all_reduce per operand; reduce_scatter is all_reduce, then the replica's block.

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[T:.*]]: !xla.token, %[[A:.*]]: tensor<4xf32>, %[[B:.*]]: tensor<2xf32>)
// CHECK: %[[J:.*]] = "xla.after_all"(%[[T]])
// CHECK: %[[IN:.*]] = "xla.infeed"(%[[J]]) {{.*}} -> tuple<tensor<4xf32>, !xla.token>
// CHECK: %[[D:.*]] = "xla.get_tuple_element"(%[[IN]]) {index = 0 : i64}
// CHECK: "xla.get_tuple_element"(%[[IN]]) {index = 1 : i64}
// CHECK: "xla.custom_call"(%[[D]]) {opaque = "", shape = {{.*}}, target_name = "my_target"}
// CHECK: "xla.all_reduce"(%[[A]])
// CHECK: "xla.add"
// CHECK: replica_groups = [array<i64: 0, 1>]
// CHECK: "xla.all_reduce"(%[[B]])
// CHECK: "xla.all_reduce"(%[[A]])
// CHECK: %[[ID:.*]] = "xla.replica_id"()
// CHECK: "xla.dynamic_slice"
// CHECK: "xla.dynamic_slice"{{.*}} -> tensor<2xf32>
func.func @main(%t: !stablehlo.token, %a: tensor<4xf32>, %b: tensor<2xf32>)
    -> (tensor<4xf32>, tensor<4xf32>, tensor<2xf32>, tensor<2xf32>, !stablehlo.token) {
  %j = stablehlo.after_all %t : !stablehlo.token
  %d:2 = "stablehlo.infeed"(%j) : (!stablehlo.token) -> (tensor<4xf32>, !stablehlo.token)
  %c = stablehlo.custom_call @my_target(%d#0) : (tensor<4xf32>) -> tensor<4xf32>
  %r:2 = "stablehlo.all_reduce"(%a, %b) ({
    ^bb0(%x: tensor<f32>, %y: tensor<f32>):
      %z = stablehlo.add %x, %y : tensor<f32>
      stablehlo.return %z : tensor<f32>
  }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<4xf32>, tensor<2xf32>) -> (tensor<4xf32>, tensor<2xf32>)
  %s = "stablehlo.reduce_scatter"(%a) ({
    ^bb0(%x: tensor<f32>, %y: tensor<f32>):
      %z = stablehlo.add %x, %y : tensor<f32>
      stablehlo.return %z : tensor<f32>
  }) {scatter_dimension = 0 : i64, replica_groups = dense<[[1, 0]]> : tensor<1x2xi64>} : (tensor<4xf32>) -> tensor<2xf32>
  return %c, %r#0, %r#1, %s, %d#1 : tensor<4xf32>, tensor<4xf32>, tensor<2xf32>, tensor<2xf32>, !stablehlo.token
}
