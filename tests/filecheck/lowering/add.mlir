// RUN: xlair-opt %s -p xla-to-linalg | filecheck %s

// CHECK-LABEL: func.func @f32
// CHECK: linalg.generic
// CHECK: arith.addf
// CHECK-NOT: xla.
// CHECK: return
func.func @f32(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %r = "xla.add"(%a, %b) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// CHECK-LABEL: func.func @s32
// CHECK: linalg.generic
// CHECK: arith.addi
// CHECK-NOT: xla.
// CHECK: return
func.func @s32(%a: tensor<4xi32>, %b: tensor<4xi32>) -> tensor<4xi32> {
  %r = "xla.add"(%a, %b) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return %r : tensor<4xi32>
}

// CHECK-LABEL: func.func @pred
// CHECK: linalg.generic
// CHECK: arith.ori
// CHECK-NOT: xla.
// CHECK: return
func.func @pred(%a: tensor<4xi1>, %b: tensor<4xi1>) -> tensor<4xi1> {
  %r = "xla.add"(%a, %b) : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  return %r : tensor<4xi1>
}

// CHECK-LABEL: func.func @c64
// CHECK: linalg.generic
// CHECK: arith.addf
// CHECK-NOT: xla.
// CHECK: return
func.func @c64(%a: tensor<4xcomplex<f32>>, %b: tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>> {
  %r = "xla.add"(%a, %b) : (tensor<4xcomplex<f32>>, tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>>
  return %r : tensor<4xcomplex<f32>>
}
