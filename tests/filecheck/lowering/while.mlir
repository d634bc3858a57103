// RUN: xlair-opt %s -p xla-to-iree-input | filecheck %s

// A loop that does not count (its counter steps by 2; see while_counted.mlir for one that
// does; its counter starts from a parameter, so that the entry test is not folded on the host)
// is a do-while behind an entry test (see lowering/control_flow.py); the tuple
// state travels as scf.while's iteration values, one per leaf.  The results are read, so
// none keeps its util.optimization_barrier (see while_unread.mlir).
// CHECK-LABEL: func.func @main
// CHECK: arith.cmpi slt
// CHECK: %[[R:.*]]:2 = scf.if %{{.*}} -> (tensor<i32>, tensor<4xf32>)
// CHECK: scf.while (%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) : (tensor<i32>, tensor<4xf32>) -> (tensor<i32>, tensor<4xf32>)
// CHECK: arith.addi
// CHECK: arith.addf
// CHECK: arith.cmpi slt
// CHECK: scf.condition
// CHECK: } do {
// CHECK: scf.yield
// CHECK: } else {
// CHECK: scf.yield
// CHECK-NOT: util.optimization_barrier
// CHECK: return %[[R]]#0, %[[R]]#1
// CHECK-NOT: xla.
func.func @main(%v: tensor<4xf32>, %z: tensor<i32>) -> tuple<tensor<i32>, tensor<4xf32>> {
  %init = "xla.tuple"(%z, %v) : (tensor<i32>, tensor<4xf32>) -> tuple<tensor<i32>, tensor<4xf32>>
  %r = "xla.while"(%init) ({
  ^bb0(%s: tuple<tensor<i32>, tensor<4xf32>>):
    %i = "xla.get_tuple_element"(%s) {index = 0 : i64} : (tuple<tensor<i32>, tensor<4xf32>>) -> tensor<i32>
    %n = "xla.constant"() {value = dense<10> : tensor<i32>} : () -> tensor<i32>
    %c = "xla.lt"(%i, %n) : (tensor<i32>, tensor<i32>) -> tensor<i1>
    "xla.return"(%c) : (tensor<i1>) -> ()
  }, {
  ^bb0(%s: tuple<tensor<i32>, tensor<4xf32>>):
    %i = "xla.get_tuple_element"(%s) {index = 0 : i64} : (tuple<tensor<i32>, tensor<4xf32>>) -> tensor<i32>
    %x = "xla.get_tuple_element"(%s) {index = 1 : i64} : (tuple<tensor<i32>, tensor<4xf32>>) -> tensor<4xf32>
    %one = "xla.constant"() {value = dense<2> : tensor<i32>} : () -> tensor<i32>
    %i2 = "xla.add"(%i, %one) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %x2 = "xla.add"(%x, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %t = "xla.tuple"(%i2, %x2) : (tensor<i32>, tensor<4xf32>) -> tuple<tensor<i32>, tensor<4xf32>>
    "xla.return"(%t) : (tuple<tensor<i32>, tensor<4xf32>>) -> ()
  }) : (tuple<tensor<i32>, tensor<4xf32>>) -> tuple<tensor<i32>, tensor<4xf32>>
  return %r : tuple<tensor<i32>, tensor<4xf32>>
}
