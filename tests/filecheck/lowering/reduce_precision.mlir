// RUN: xlair-opt %s -p xla-to-linalg | filecheck %s

// Bit-level rounding to 10 mantissa bits (ties to even), then the 5-bit exponent range.
// CHECK-LABEL: func.func @main
// CHECK: arith.bitcast %{{.*}} : f32 to i32
// CHECK: arith.shrui
// CHECK: arith.andi
// CHECK: arith.cmpi ugt
// CHECK: arith.cmpi ule
// CHECK: arith.select
// CHECK: arith.cmpf uno
// CHECK-NOT: xla.
func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = "xla.reduce_precision"(%a) {exponent_bits = 5 : i64, mantissa_bits = 10 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}
