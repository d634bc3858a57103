// RUN: xlair-opt %s -p xla-to-linalg | filecheck %s

// CHECK-LABEL: func.func @matmul
// CHECK: linalg.fill
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<2x3xf32>, tensor<3x4xf32>) outs(%{{.*}} : tensor<2x4xf32>)
func.func @matmul(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x4xf32> {
  %r = "xla.dot"(%a, %b) : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  return %r : tensor<2x4xf32>
}
// A vector-vector dot is a 1x1 matmul reshaped to a scalar.
// CHECK-LABEL: func.func @vecvec
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<1x3xf32>, tensor<3x1xf32>)
// CHECK: tensor.collapse_shape
// CHECK-NOT: xla.
func.func @vecvec(%a: tensor<3xf32>, %b: tensor<3xf32>) -> tensor<f32> {
  %r = "xla.dot"(%a, %b) : (tensor<3xf32>, tensor<3xf32>) -> tensor<f32>
  return %r : tensor<f32>
}
