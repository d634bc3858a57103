// RUN: xlair-opt %s -p xla-to-linalg | filecheck %s

// CHECK-LABEL: func.func @matmul
// CHECK: linalg.fill
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<2x3xf32>, tensor<3x4xf32>) outs(%{{.*}} : tensor<2x4xf32>)
func.func @matmul(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x4xf32> {
  %r = "xla.dot"(%a, %b) : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  return %r : tensor<2x4xf32>
}
// Vector forms use the named vector contractions (no unit dimensions are made up).
// CHECK-LABEL: func.func @vecvec
// CHECK: linalg.dot ins(%{{.*}}, %{{.*}} : tensor<3xf32>, tensor<3xf32>) outs(%{{.*}} : tensor<f32>)
// CHECK-NOT: xla.
func.func @vecvec(%a: tensor<3xf32>, %b: tensor<3xf32>) -> tensor<f32> {
  %r = "xla.dot"(%a, %b) : (tensor<3xf32>, tensor<3xf32>) -> tensor<f32>
  return %r : tensor<f32>
}
// CHECK-LABEL: func.func @matvec
// CHECK: linalg.matvec ins(%{{.*}}, %{{.*}} : tensor<2x3xf32>, tensor<3xf32>) outs(%{{.*}} : tensor<2xf32>)
func.func @matvec(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2xf32> {
  %r = "xla.dot"(%a, %b) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2xf32>
  return %r : tensor<2xf32>
}
// CHECK-LABEL: func.func @vecmat
// CHECK: linalg.vecmat ins(%{{.*}}, %{{.*}} : tensor<3xf32>, tensor<3x4xf32>) outs(%{{.*}} : tensor<4xf32>)
func.func @vecmat(%a: tensor<3xf32>, %b: tensor<3x4xf32>) -> tensor<4xf32> {
  %r = "xla.dot"(%a, %b) : (tensor<3xf32>, tensor<3x4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}
