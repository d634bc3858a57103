// RUN: xlair-opt %s -p xla-to-linalg | filecheck %s

// CHECK-LABEL: func.func @f32
// CHECK: linalg.generic
// CHECK: arith.mulf
// CHECK-NOT: xla.
// CHECK: return
func.func @f32(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %r = "xla.mul"(%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// CHECK-LABEL: func.func @s32
// CHECK: linalg.generic
// CHECK: arith.muli
// CHECK-NOT: xla.
// CHECK: return
func.func @s32(%a: tensor<4xi32>, %b: tensor<4xi32>) -> tensor<4xi32> {
  %r = "xla.mul"(%a, %b) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return %r : tensor<4xi32>
}

// CHECK-LABEL: func.func @pred
// CHECK: linalg.generic
// CHECK: arith.andi
// CHECK-NOT: xla.
// CHECK: return
func.func @pred(%a: tensor<4xi1>, %b: tensor<4xi1>) -> tensor<4xi1> {
  %r = "xla.mul"(%a, %b) : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  return %r : tensor<4xi1>
}
