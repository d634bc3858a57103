// RUN: xlair-opt %s -p xla-to-linalg | filecheck %s

// CHECK-LABEL: func.func @same_width
// CHECK: arith.bitcast %{{.*}} : i32 to f32
func.func @same_width(%a: tensor<3xi32>) -> tensor<3xf32> {
  %r = "xla.bitcast_convert_type"(%a) {new_element_type = f32} : (tensor<3xi32>) -> tensor<3xf32>
  return %r : tensor<3xf32>
}
// A wider element becomes a new minor dimension of narrower ones.
// CHECK-LABEL: func.func @f32_to_u8
// CHECK: linalg.index 1
// CHECK: arith.shrui
// CHECK: arith.trunci %{{.*}} : i32 to i8
func.func @f32_to_u8(%a: tensor<3xf32>) -> tensor<3x4xui8> {
  %r = "xla.bitcast_convert_type"(%a) {new_element_type = ui8} : (tensor<3xf32>) -> tensor<3x4xui8>
  return %r : tensor<3x4xui8>
}
// CHECK-LABEL: func.func @u8_to_f32
// CHECK: iterator_types = ["parallel", "reduction"]
// CHECK: arith.shli
// CHECK: arith.ori
// CHECK: arith.bitcast %{{.*}} : i32 to f32
// CHECK-NOT: xla.
func.func @u8_to_f32(%a: tensor<3x4xui8>) -> tensor<3xf32> {
  %r = "xla.bitcast_convert_type"(%a) {new_element_type = f32} : (tensor<3x4xui8>) -> tensor<3xf32>
  return %r : tensor<3xf32>
}
