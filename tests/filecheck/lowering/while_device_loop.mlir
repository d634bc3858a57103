// RUN: xlair-opt %s -p 'xla-to-iree-input{target=cpu}' | filecheck %s
// RUN: xlair-opt %s -p 'xla-to-iree-input{target=cpu loops=host}' | filecheck %s --check-prefix=HOST

// On the CPU a counted loop with small tensors runs on the device (lowering/device_loops.py):
// the scf.for is the body of one flow.dispatch.region, its linalg ops scalar loops of
// tensor.extract / tensor.insert, its unit dimensions dropped (the row read by the
// DynamicSlice is a tensor<4xf32>), each trip working on a copy of the state and writing the
// new state into the iteration argument.  `loops=host` keeps the host loop.
// CHECK-LABEL: func.func @main
// CHECK: %[[R:.*]] = flow.dispatch.region -> (tensor<4xf32>)
// CHECK-NEXT: scf.for %{{.*}} = %c1 to %{{.*}} step %c1 iter_args(%[[S:.*]] = %{{.*}}) -> (tensor<4xf32>)
// CHECK-NOT: linalg.
// CHECK: tensor.extract %[[S]]
// CHECK-NOT: linalg.
// CHECK: tensor.extract_slice %{{.*}} : tensor<8x4xf32> to tensor<4xf32>
// CHECK-NOT: linalg.
// CHECK: arith.addf
// CHECK-NOT: linalg.
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %[[S]])
// CHECK: flow.return
// HOST-NOT: flow.dispatch.region
// HOST: scf.for
// HOST: linalg.generic
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
