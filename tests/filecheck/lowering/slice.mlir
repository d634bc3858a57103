// RUN: xlair-opt %s -p xla-to-linalg | filecheck %s

// CHECK-LABEL: func.func @main
// CHECK: tensor.extract_slice %{{.*}}[1, 0] [2, 2] [1, 2] : tensor<4x3xf32> to tensor<2x2xf32>
// CHECK-NOT: xla.
func.func @main(%a: tensor<4x3xf32>) -> tensor<2x2xf32> {
  %r = "xla.slice"(%a) {start_indices = array<i64: 1, 0>, limit_indices = array<i64: 3, 3>, strides = array<i64: 1, 2>} : (tensor<4x3xf32>) -> tensor<2x2xf32>
  return %r : tensor<2x2xf32>
}
