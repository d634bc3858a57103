// RUN: xlair-opt %s -p xla-to-iree-input | filecheck %s

// A While that counts (the condition `state[0] < bound`, the body returning `state[0] + 1`,
// the bound a state element the body returns unchanged: JAX's fori_loop with traced bounds)
// is an scf.for over max(0, bound - start) trips computed once; no condition is read back per
// trip, and in the body the counter is the host value start + iv, so the DynamicSlice at it
// slices at a host index.  The first trip is peeled off before the loop, its results behind
// barriers (lowering/control_flow.py `_lower_counted`, docs/iree-limits.md); the counter's
// final value is start + trips.
// CHECK-LABEL: func.func @main
// CHECK: %[[START:.*]] = arith.extsi
// CHECK: %[[STOP:.*]] = arith.extsi
// CHECK: %[[MORE:.*]] = arith.cmpi sgt, %[[STOP]], %[[START]]
// CHECK: %[[DIFF:.*]] = arith.subi %[[STOP]], %[[START]]
// CHECK: %[[TRIPS:.*]] = arith.select %[[MORE]], %[[DIFF]]
// CHECK: scf.if %[[MORE]]
// CHECK: tensor.extract_slice
// CHECK: util.optimization_barrier
// CHECK: %[[N:.*]] = arith.index_cast %[[TRIPS]] : i64 to index
// CHECK: scf.for %[[IV:.*]] = %c1 to %[[N]] step %c1
// CHECK: %[[I:.*]] = arith.index_cast %[[IV]] : index to i64
// CHECK: arith.addi %[[START]], %[[I]]
// CHECK-NOT: tensor<i1>
// CHECK: scf.yield
// CHECK: arith.addi %[[START]], %[[TRIPS]]
// CHECK-NOT: scf.while
// CHECK-NOT: xla.
func.func @main(%t: tensor<8x4xf32>, %lo: tensor<i32>, %hi: tensor<i32>) -> tuple<tensor<i32>, tensor<i32>, tensor<8x4xf32>, tensor<4xf32>> {
  %z = "xla.constant"() {value = dense<0.0> : tensor<4xf32>} : () -> tensor<4xf32>
  %init = "xla.tuple"(%lo, %hi, %t, %z) : (tensor<i32>, tensor<i32>, tensor<8x4xf32>, tensor<4xf32>) -> tuple<tensor<i32>, tensor<i32>, tensor<8x4xf32>, tensor<4xf32>>
  %r = "xla.while"(%init) ({
  ^bb0(%s: tuple<tensor<i32>, tensor<i32>, tensor<8x4xf32>, tensor<4xf32>>):
    %i = "xla.get_tuple_element"(%s) {index = 0 : i64} : (tuple<tensor<i32>, tensor<i32>, tensor<8x4xf32>, tensor<4xf32>>) -> tensor<i32>
    %n = "xla.get_tuple_element"(%s) {index = 1 : i64} : (tuple<tensor<i32>, tensor<i32>, tensor<8x4xf32>, tensor<4xf32>>) -> tensor<i32>
    %c = "xla.lt"(%i, %n) : (tensor<i32>, tensor<i32>) -> tensor<i1>
    "xla.return"(%c) : (tensor<i1>) -> ()
  }, {
  ^bb0(%s: tuple<tensor<i32>, tensor<i32>, tensor<8x4xf32>, tensor<4xf32>>):
    %i = "xla.get_tuple_element"(%s) {index = 0 : i64} : (tuple<tensor<i32>, tensor<i32>, tensor<8x4xf32>, tensor<4xf32>>) -> tensor<i32>
    %n = "xla.get_tuple_element"(%s) {index = 1 : i64} : (tuple<tensor<i32>, tensor<i32>, tensor<8x4xf32>, tensor<4xf32>>) -> tensor<i32>
    %tt = "xla.get_tuple_element"(%s) {index = 2 : i64} : (tuple<tensor<i32>, tensor<i32>, tensor<8x4xf32>, tensor<4xf32>>) -> tensor<8x4xf32>
    %acc = "xla.get_tuple_element"(%s) {index = 3 : i64} : (tuple<tensor<i32>, tensor<i32>, tensor<8x4xf32>, tensor<4xf32>>) -> tensor<4xf32>
    %zero = "xla.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
    %row = "xla.dynamic_slice"(%tt, %i, %zero) {size_indices = array<i64: 1, 4>} : (tensor<8x4xf32>, tensor<i32>, tensor<i32>) -> tensor<1x4xf32>
    %r4 = "xla.reshape"(%row) {new_sizes = array<i64: 4>} : (tensor<1x4xf32>) -> tensor<4xf32>
    %acc2 = "xla.add"(%acc, %r4) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %one = "xla.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
    %i2 = "xla.add"(%i, %one) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %u = "xla.tuple"(%i2, %n, %tt, %acc2) : (tensor<i32>, tensor<i32>, tensor<8x4xf32>, tensor<4xf32>) -> tuple<tensor<i32>, tensor<i32>, tensor<8x4xf32>, tensor<4xf32>>
    "xla.return"(%u) : (tuple<tensor<i32>, tensor<i32>, tensor<8x4xf32>, tensor<4xf32>>) -> ()
  }) : (tuple<tensor<i32>, tensor<i32>, tensor<8x4xf32>, tensor<4xf32>>) -> tuple<tensor<i32>, tensor<i32>, tensor<8x4xf32>, tensor<4xf32>>
  return %r : tuple<tensor<i32>, tensor<i32>, tensor<8x4xf32>, tensor<4xf32>>
}
