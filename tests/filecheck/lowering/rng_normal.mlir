// RUN: xlair-opt %s -p xla-to-linalg | filecheck %s

// Two RngNormal ops share the one state: load, generate (Box-Muller: sqrt(-2 log u1) cos(2 pi u2)),
// store, in program order, so the second op draws after the first.
// CHECK: util.global private mutable @xlair_rng_state
// CHECK-NOT: util.global
// CHECK-LABEL: func.func @normal
// CHECK: util.global.load @xlair_rng_state
// CHECK: math.log
// CHECK: math.sqrt
// CHECK: math.cos
// CHECK: util.global.store
// CHECK: util.global.load @xlair_rng_state
// CHECK: util.global.store
// CHECK-NOT: xla.
func.func @normal(%m: tensor<f32>, %s: tensor<f32>) -> tensor<4x5xf32> {
  %r = "xla.rng_normal"(%m, %s) {shape = tensor<4x5xf32>} : (tensor<f32>, tensor<f32>) -> tensor<4x5xf32>
  %q = "xla.rng_normal"(%m, %s) {shape = tensor<4x5xf32>} : (tensor<f32>, tensor<f32>) -> tensor<4x5xf32>
  %t = "xla.add"(%r, %q) : (tensor<4x5xf32>, tensor<4x5xf32>) -> tensor<4x5xf32>
  return %t : tensor<4x5xf32>
}
