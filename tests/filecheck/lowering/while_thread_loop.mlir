// RUN: xlair-opt %s -p 'xla-to-iree-input{target=cuda}' | filecheck %s
// RUN: xlair-opt %s -p 'xla-to-iree-input{target=rocm}' | filecheck %s
// RUN: xlair-opt %s -p 'xla-to-iree-input{target=cuda loops=host}' | filecheck %s --check-prefix=HOST
// RUN: xlair-opt %s -p 'xla-to-iree-input{target=vulkan}' | filecheck %s --check-prefix=HOST

// On CUDA and ROCm a loop with small state runs on the device in the GPU's form
// (lowering/device_loops.py _thread): the body of a linalg.generic with one parallel dimension,
// one point per element of the largest result, marked xlair.thread_loop; each point copies the
// loop's initial state into a tensor of its own (a bufferization.alloc_tensor: IREE's CSE merges
// equal tensor.empty ops, and CUDA's bufferization failed on the copies that made), runs the loop (its linalg ops scalar loops of
// tensor.extract / tensor.insert) and yields its element of the result.  No flow.dispatch.region
// (IREE's GPU codegen gives one without a linalg op no pipeline).  `loops=host` and Vulkan keep
// the host loop.
// CHECK-LABEL: func.func @main
// CHECK-NOT: flow.dispatch.region
// CHECK: linalg.generic {indexing_maps = [#{{.*}}], iterator_types = ["parallel"]} outs(%{{.*}} : tensor<4xf32>) attrs = {xlair.thread_loop}
// CHECK-NEXT: ^bb0(%{{.*}}: f32):
// CHECK-NEXT: %[[P:.*]] = linalg.index 0 : index
// CHECK-NOT: tensor.empty
// CHECK: bufferization.alloc_tensor() : tensor<4xf32>
// CHECK-NOT: tensor.empty
// CHECK: %[[INIT:.*]] = scf.for {{.*}} -> (tensor<4xf32>)
// CHECK: tensor.insert
// CHECK: %[[LOOP:.*]] = scf.for %{{.*}} = %c1 to %{{.*}} step %c1 iter_args(%{{.*}} = %[[INIT]]) -> (tensor<4xf32>)
// CHECK-NOT: linalg.generic
// CHECK: arith.addf
// CHECK-NOT: linalg.generic
// CHECK-NOT: tensor.empty
// CHECK: %[[E:.*]] = tensor.extract %[[LOOP]][%{{.*}}] : tensor<4xf32>
// CHECK-NEXT: linalg.yield %[[E]] : f32
// CHECK: return
// HOST-NOT: xlair.thread_loop
// HOST: scf.for
// HOST: linalg.generic
// HOST-NOT: xlair.thread_loop
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
