// RUN: xlair-opt %s -p xla-to-iree-input | filecheck %s

// Threefry: no loop, one generic computing each element's Threefry-2x32 block (20 rounds, the
// 0x1BD11BDA key parity) from its position; u32 output halves the shape on dimension 0 (even).
// CHECK-LABEL: func.func @threefry
// CHECK: tensor.extract %{{.*}}[%c0] : tensor<2xi64>
// CHECK: linalg.generic
// CHECK: arith.shrui %{{.*}}, %c1_i64 : i64
// CHECK: arith.xori %{{.*}}, %c466688986_i32 : i32
// CHECK: arith.select
// CHECK: arith.addi %{{.*}}, %c3_i64 : i64
// CHECK: tensor.from_elements %{{.*}}, %{{.*}} : tensor<2xi64>
// CHECK-NOT: xla.
func.func @threefry(%s: tensor<2xui64>) -> tuple<tensor<2xui64>, tensor<6xui32>> {
  %r = "xla.rng_bit_generator"(%s) {algorithm = "RNG_THREE_FRY", shape = tensor<6xui32>} : (tensor<2xui64>) -> tuple<tensor<2xui64>, tensor<6xui32>>
  return %r : tuple<tensor<2xui64>, tensor<6xui32>>
}

// Philox with a u64[3] state: 128-bit counter (state[1], state[2]) with carry, 64-bit output
// pairs words (two elements per block, so 3 blocks for 5 elements), floats are the bits bitcast.
// CHECK-LABEL: func.func @philox
// CHECK: linalg.generic
// CHECK: arith.divui %{{.*}}, %c2_i64 : i64
// CHECK: arith.cmpi ult
// CHECK: arith.bitcast %{{.*}} : i64 to f64
// CHECK: arith.addi %{{.*}}, %c3_i64 : i64
// CHECK: tensor.from_elements %{{.*}}, %{{.*}}, %{{.*}} : tensor<3xi64>
// CHECK-NOT: xla.
func.func @philox(%s: tensor<3xui64>) -> tuple<tensor<3xui64>, tensor<5xf64>> {
  %r = "xla.rng_bit_generator"(%s) {algorithm = "RNG_PHILOX", shape = tensor<5xf64>} : (tensor<3xui64>) -> tuple<tensor<3xui64>, tensor<5xf64>>
  return %r : tuple<tensor<3xui64>, tensor<5xf64>>
}
