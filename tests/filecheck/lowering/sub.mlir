// RUN: xlair-opt %s -p xla-to-linalg | filecheck %s

// CHECK-LABEL: func.func @f32
// CHECK: linalg.generic
// CHECK: arith.subf
// CHECK-NOT: xla.
// CHECK: return
func.func @f32(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %r = "xla.sub"(%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// CHECK-LABEL: func.func @u32
// CHECK: linalg.generic
// CHECK: arith.subi
// CHECK-NOT: xla.
// CHECK: return
func.func @u32(%a: tensor<4xui32>, %b: tensor<4xui32>) -> tensor<4xui32> {
  %r = "xla.sub"(%a, %b) : (tensor<4xui32>, tensor<4xui32>) -> tensor<4xui32>
  return %r : tensor<4xui32>
}
