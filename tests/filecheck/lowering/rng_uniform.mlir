// RUN: xlair-opt %s -p xla-to-linalg | filecheck %s

// The generator state is a mutable global of the module (key, counter), set by the exported
// @xlair_rng_seed; each RngUniform loads it, fills its output with Philox-4x32 words (one
// counter per 4 elements, mantissa bits scaled into [a, b)) and stores the advanced counter.
// CHECK: util.global private mutable @xlair_rng_state = dense<[24301, 0]> : tensor<2xi64>
// CHECK-LABEL: func.func @uniform
// CHECK: util.global.load @xlair_rng_state : tensor<2xi64>
// CHECK: linalg.generic
// CHECK: arith.divui %{{.*}}, %c4_i64 : i64
// CHECK: arith.muli %{{.*}}, %c3528531795_i64 : i64
// CHECK: arith.uitofp
// CHECK: arith.cmpf olt
// CHECK: arith.addi %{{.*}}, %c1_i64 : i64
// CHECK: util.global.store %{{.*}}, @xlair_rng_state : tensor<2xi64>
// CHECK-LABEL: func.func @xlair_rng_seed(%{{.*}}: tensor<i64>)
// CHECK: util.global.store %{{.*}}, @xlair_rng_state
// CHECK-NOT: xla.
func.func @uniform(%a: tensor<f32>, %b: tensor<f32>) -> tensor<3xf32> {
  %r = "xla.rng_uniform"(%a, %b) {shape = tensor<3xf32>} : (tensor<f32>, tensor<f32>) -> tensor<3xf32>
  return %r : tensor<3xf32>
}
