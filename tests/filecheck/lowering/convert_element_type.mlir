// RUN: xlair-opt %s -p xla-to-linalg | filecheck %s

// CHECK-LABEL: func.func @s32_to_f32
// CHECK: arith.sitofp
func.func @s32_to_f32(%a: tensor<3xi32>) -> tensor<3xf32> {
  %r = "xla.convert_element_type"(%a) {new_element_type = f32} : (tensor<3xi32>) -> tensor<3xf32>
  return %r : tensor<3xf32>
}
// float -> int saturates and maps NaN to 0: compares and selects around fptosi
// CHECK-LABEL: func.func @f32_to_s8
// CHECK: arith.cmpf oge
// CHECK: arith.cmpf uno
// CHECK: arith.fptosi
// CHECK: arith.select
func.func @f32_to_s8(%a: tensor<3xf32>) -> tensor<3xi8> {
  %r = "xla.convert_element_type"(%a) {new_element_type = i8} : (tensor<3xf32>) -> tensor<3xi8>
  return %r : tensor<3xi8>
}
// CHECK-LABEL: func.func @u8_to_s32
// CHECK: arith.extui
// CHECK-NOT: xla.
func.func @u8_to_s32(%a: tensor<3xui8>) -> tensor<3xi32> {
  %r = "xla.convert_element_type"(%a) {new_element_type = i32} : (tensor<3xui8>) -> tensor<3xi32>
  return %r : tensor<3xi32>
}

// Regression (issue 17): `iree-lld: error: undefined symbol: __truncsfbf2`.  An integer -> bf16
// conversion became sitofp / truncf to bf16, which LLVM turns into a compiler-rt call on CPUs
// without AVX512-BF16.  The integer goes to f32, which is rounded to bf16 with integer ops on
// its bits (to nearest even: + 0x7FFF + the lowest kept bit, then >> 16; NaN made quiet).
// CHECK-LABEL: func.func @s32_to_bf16
// CHECK: arith.sitofp %{{.*}} : i32 to f32
// CHECK: arith.bitcast %{{.*}} : f32 to i32
// CHECK: arith.shrui
// CHECK: arith.addi
// CHECK: arith.cmpf uno
// CHECK: arith.trunci %{{.*}} : i32 to i16
// CHECK: arith.bitcast %{{.*}} : i16 to bf16
// CHECK-NOT: to bf16
// CHECK: return
func.func @s32_to_bf16(%a: tensor<3xi32>) -> tensor<3xbf16> {
  %r = "xla.convert_element_type"(%a) {new_element_type = bf16} : (tensor<3xi32>) -> tensor<3xbf16>
  return %r : tensor<3xbf16>
}
// f64 -> f16 rounds once: f32 rounded to odd, then f16 (IREE's own f64 -> f16 rounds twice
// without AVX512-FP16)
// CHECK-LABEL: func.func @f64_to_f16
// CHECK: arith.truncf %{{.*}} : f64 to f32
// CHECK: arith.ori
// CHECK: arith.truncf %{{.*}} : f32 to f16
func.func @f64_to_f16(%a: tensor<3xf64>) -> tensor<3xf16> {
  %r = "xla.convert_element_type"(%a) {new_element_type = f16} : (tensor<3xf64>) -> tensor<3xf16>
  return %r : tensor<3xf16>
}
