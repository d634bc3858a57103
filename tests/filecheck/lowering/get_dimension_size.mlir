// RUN: xlair-opt %s -p xla-to-linalg | filecheck %s

// Static dimension: a constant.  Dynamic dimension: the (clamped) size that was set.
// CHECK-LABEL: func.func @static
// CHECK: arith.constant dense<7> : tensor<i32>
func.func @static(%v: tensor<3x7xf32>) -> tensor<i32> {
  %r = "xla.get_dimension_size"(%v) {dimension = 1 : i64} : (tensor<3x7xf32>) -> tensor<i32>
  return %r : tensor<i32>
}
// CHECK-LABEL: func.func @dynamic
// CHECK: arith.maxsi
// CHECK: arith.minsi
// CHECK-NOT: xla.
func.func @dynamic(%v: tensor<3x7xf32>, %n: tensor<i32>) -> tensor<i32> {
  %d = "xla.set_dimension_size"(%v, %n) {dimension = 1 : i64} : (tensor<3x7xf32>, tensor<i32>) -> tensor<3x7xf32>
  %r = "xla.get_dimension_size"(%d) {dimension = 1 : i64} : (tensor<3x7xf32>) -> tensor<i32>
  return %r : tensor<i32>
}
