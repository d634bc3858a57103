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
