// RUN: xlair-opt %s -p xla-to-linalg | filecheck %s

// CHECK-LABEL: func.func @f32
// On the CPU (or no target), f32 tanh is computed in f32 without math.tanh (within 1 ULP;
// lowering/elementwise.py): an odd polynomial below 0.625, 1 - 2 / (exp(2|x|) + 1) above,
// 1 beyond 9.5, the sign copied back; the exp is xlair's own (`_exp_f32`).
// CHECK: linalg.generic
// CHECK: math.absf %{{.*}} : f32
// CHECK-NOT: math.tanh
// CHECK-NOT: math.exp
// CHECK: math.fma %{{.*}} : f32
// CHECK: arith.divf %{{.*}} : f32
// CHECK: math.copysign %{{.*}} : f32
// CHECK-NOT: xla.
// CHECK: return
func.func @f32(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = "xla.tanh"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// CHECK-LABEL: func.func @f16
// F16 (and BF16) are computed in f64 (lowering/libm.py) and rounded once: to f32 rounded to
// odd (so that the second rounding cannot round twice), then to f16.
// CHECK: arith.extf %{{.*}} : f16 to f64
// CHECK-NOT: math.tanh
// CHECK: arith.truncf %{{.*}} : f64 to f32
// CHECK: arith.ori
// CHECK: arith.truncf %{{.*}} : f32 to f16
// CHECK: return
func.func @f16(%a: tensor<4xf16>) -> tensor<4xf16> {
  %r = "xla.tanh"(%a) : (tensor<4xf16>) -> tensor<4xf16>
  return %r : tensor<4xf16>
}
