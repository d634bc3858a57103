// RUN: xlair-opt %s -p xla-to-linalg | filecheck %s

// CHECK-LABEL: func.func @main
// CHECK: tensor.collapse_shape %{{.*}} {{\[\[}}0], [1, 2]] : tensor<4x2x3xf32> into tensor<4x6xf32>
// CHECK-NOT: xla.
func.func @main(%a: tensor<4x2x3xf32>) -> tensor<4x6xf32> {
  %r = "xla.collapse"(%a) {dimensions = array<i64: 1, 2>} : (tensor<4x2x3xf32>) -> tensor<4x6xf32>
  return %r : tensor<4x6xf32>
}
