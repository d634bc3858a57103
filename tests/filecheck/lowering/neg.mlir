// RUN: xlair-opt %s -p xla-to-linalg | filecheck %s

// CHECK-LABEL: func.func @f32
// CHECK: linalg.generic
// CHECK: arith.negf
// CHECK-NOT: xla.
// CHECK: return
func.func @f32(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = "xla.neg"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// CHECK-LABEL: func.func @s32
// CHECK: linalg.generic
// CHECK: arith.subi
// CHECK-NOT: xla.
// CHECK: return
func.func @s32(%a: tensor<4xi32>) -> tensor<4xi32> {
  %r = "xla.neg"(%a) : (tensor<4xi32>) -> tensor<4xi32>
  return %r : tensor<4xi32>
}
