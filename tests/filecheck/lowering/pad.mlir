// RUN: xlair-opt %s -p xla-to-linalg | filecheck %s

// Fill with the padding value, then insert the kept elements with the interior stride.
// Dimension 0: low 1, high 2; dimension 1: low -1 (one element cut), interior 1.
// CHECK-LABEL: func.func @main
// CHECK: tensor.extract %{{.*}}[] : tensor<f32>
// CHECK: linalg.fill
// CHECK: tensor.extract_slice %{{.*}}[0, 1] [2, 2] [1, 1]
// CHECK: tensor.insert_slice %{{.*}} into %{{.*}}[1, 1] [2, 2] [1, 2]
// CHECK-NOT: xla.
func.func @main(%a: tensor<2x3xf32>, %v: tensor<f32>) -> tensor<5x4xf32> {
  %r = "xla.pad"(%a, %v) {padding_config = [array<i64: 1, 2, 0>, array<i64: -1, 0, 1>]} : (tensor<2x3xf32>, tensor<f32>) -> tensor<5x4xf32>
  return %r : tensor<5x4xf32>
}
