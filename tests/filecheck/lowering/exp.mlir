// RUN: xlair-opt %s -p xla-to-linalg | filecheck %s
// RUN: xlair-opt %s -p 'xla-to-linalg{target=vulkan}' | filecheck %s --check-prefix=GPU

// CHECK-LABEL: func.func @f32
// On the CPU (or no target), f32 exp is computed without math.exp (within 1 ULP;
// lowering/elementwise.py `_exp_f32`): the argument clamped to [-110, 89], n = round(x / ln 2)
// by the shifter's rounding, r = x - n ln 2 in two FMAs, a degree-6 polynomial in FMAs, and
// 2^n applied as two powers of two built from the bits of n.
// CHECK: linalg.generic
// CHECK-NOT: math.exp
// CHECK: arith.select
// CHECK: arith.select
// CHECK: math.fma
// CHECK: arith.shrsi
// CHECK: arith.shli
// CHECK: arith.mulf
// CHECK: arith.mulf
// CHECK-NOT: math.exp
// CHECK-NOT: xla.
// CHECK: return
// GPU-LABEL: func.func @f32
// GPU: math.exp %{{.*}} : f32
func.func @f32(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = "xla.exp"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// CHECK-LABEL: func.func @f16
// Other float types keep math.exp, with a NaN operand passed through by a select.
// CHECK: math.exp %{{.*}} : f16
// CHECK: arith.select
func.func @f16(%a: tensor<4xf16>) -> tensor<4xf16> {
  %r = "xla.exp"(%a) : (tensor<4xf16>) -> tensor<4xf16>
  return %r : tensor<4xf16>
}
