// RUN: xlair-opt %s -p xla-to-linalg | filecheck %s

// CHECK-LABEL: func.func @f32
// CHECK: linalg.generic
// CHECK: math.powf
// CHECK-NOT: xla.
// CHECK: return
func.func @f32(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %r = "xla.pow"(%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// CHECK-LABEL: func.func @s32
// CHECK: linalg.generic
// CHECK: scf.for
// CHECK: arith.muli
// CHECK: arith.shrui
// CHECK-NOT: xla.
// CHECK: return
func.func @s32(%a: tensor<4xi32>, %b: tensor<4xi32>) -> tensor<4xi32> {
  %r = "xla.pow"(%a, %b) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return %r : tensor<4xi32>
}
