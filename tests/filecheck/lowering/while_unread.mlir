// RUN: xlair-opt %s -p xla-to-linalg | filecheck %s

// (xla-to-linalg alone: xla-simplify would drop the first loop, which has no effect.)
// A While whose results nothing reads (JAX's LU pivot loop in lu_factor, det, slogdet): each
// result of the scf.if leaves through a util.optimization_barrier, so that canonicalization
// keeps the scf.if's results (IREE 3.13 fails on an scf.if without results around an
// scf.while: "maximum iteration count exceeded in fixed point pipeline", docs/iree-limits.md).
// The read result of the second loop loses its barrier.  (The counters step by 2: these are
// not counted loops, while_counted.mlir; those keep the same barriers.)
// CHECK-LABEL: func.func @main
// CHECK: %[[R:.*]]:2 = scf.if %{{.*}} -> (tensor<i32>, tensor<4xf32>)
// CHECK: scf.while
// CHECK: } else {
// CHECK: util.optimization_barrier %[[R]]#0 : tensor<i32>
// CHECK: util.optimization_barrier %[[R]]#1 : tensor<4xf32>
// CHECK: %[[S:.*]]:2 = scf.if %{{.*}} -> (tensor<i32>, tensor<4xf32>)
// CHECK: scf.while
// CHECK: } else {
// CHECK: %[[B:.*]] = util.optimization_barrier %[[S]]#0 : tensor<i32>
// CHECK-NOT: util.optimization_barrier %[[S]]#1
// CHECK: return %[[S]]#1
// CHECK-NOT: xla.
func.func @main(%v: tensor<4xf32>, %z: tensor<i32>) -> tensor<4xf32> {
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
  %r2 = "xla.while"(%init) ({
  ^bb0(%s: tuple<tensor<i32>, tensor<4xf32>>):
    %i = "xla.get_tuple_element"(%s) {index = 0 : i64} : (tuple<tensor<i32>, tensor<4xf32>>) -> tensor<i32>
    %n = "xla.constant"() {value = dense<3> : tensor<i32>} : () -> tensor<i32>
    %c = "xla.lt"(%i, %n) : (tensor<i32>, tensor<i32>) -> tensor<i1>
    "xla.return"(%c) : (tensor<i1>) -> ()
  }, {
  ^bb0(%s: tuple<tensor<i32>, tensor<4xf32>>):
    %i = "xla.get_tuple_element"(%s) {index = 0 : i64} : (tuple<tensor<i32>, tensor<4xf32>>) -> tensor<i32>
    %x = "xla.get_tuple_element"(%s) {index = 1 : i64} : (tuple<tensor<i32>, tensor<4xf32>>) -> tensor<4xf32>
    %one = "xla.constant"() {value = dense<2> : tensor<i32>} : () -> tensor<i32>
    %i2 = "xla.add"(%i, %one) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %x2 = "xla.mul"(%x, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %t = "xla.tuple"(%i2, %x2) : (tensor<i32>, tensor<4xf32>) -> tuple<tensor<i32>, tensor<4xf32>>
    "xla.return"(%t) : (tuple<tensor<i32>, tensor<4xf32>>) -> ()
  }) : (tuple<tensor<i32>, tensor<4xf32>>) -> tuple<tensor<i32>, tensor<4xf32>>
  %y = "xla.get_tuple_element"(%r2) {index = 1 : i64} : (tuple<tensor<i32>, tensor<4xf32>>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}
