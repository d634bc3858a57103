// RUN: xlair-opt %s -p xla-to-linalg | filecheck %s

// CHECK-LABEL: func.func @scalar_bounds
// CHECK: linalg.generic
// CHECK: arith.maxsi
// CHECK: arith.minsi
// CHECK-NOT: xla.
func.func @scalar_bounds(%lo: tensor<i32>, %x: tensor<3xi32>, %hi: tensor<i32>) -> tensor<3xi32> {
  %r = "xla.clamp"(%lo, %x, %hi) : (tensor<i32>, tensor<3xi32>, tensor<i32>) -> tensor<3xi32>
  return %r : tensor<3xi32>
}
