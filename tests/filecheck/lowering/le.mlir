// RUN: xlair-opt %s -p xla-to-linalg | filecheck %s

// CHECK-LABEL: func.func @f32
// CHECK: linalg.generic
// CHECK: arith.cmpf ole
// CHECK-NOT: xla.
// CHECK: return
func.func @f32(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xi1> {
  %r = "xla.le"(%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  return %r : tensor<4xi1>
}

// CHECK-LABEL: func.func @s32
// CHECK: linalg.generic
// CHECK: arith.cmpi sle
// CHECK-NOT: xla.
// CHECK: return
func.func @s32(%a: tensor<4xi32>, %b: tensor<4xi32>) -> tensor<4xi1> {
  %r = "xla.le"(%a, %b) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
  return %r : tensor<4xi1>
}

// CHECK-LABEL: func.func @u32
// CHECK: linalg.generic
// CHECK: arith.cmpi ule
// CHECK-NOT: xla.
// CHECK: return
func.func @u32(%a: tensor<4xui32>, %b: tensor<4xui32>) -> tensor<4xi1> {
  %r = "xla.le"(%a, %b) : (tensor<4xui32>, tensor<4xui32>) -> tensor<4xi1>
  return %r : tensor<4xi1>
}
