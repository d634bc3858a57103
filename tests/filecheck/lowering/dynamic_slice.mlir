// RUN: xlair-opt %s -p xla-to-linalg | filecheck %s

// Start indices are clamped to [0, dim - size] before slicing.
// CHECK-LABEL: func.func @main
// CHECK: tensor.extract %{{.*}}[] : tensor<i32>
// CHECK: arith.minsi
// CHECK: arith.maxsi
// CHECK: arith.index_cast
// CHECK: tensor.extract_slice %{{.*}}[%{{.*}}, %{{.*}}] [2, 2] [1, 1] : tensor<4x3xf32> to tensor<2x2xf32>
// CHECK-NOT: xla.
func.func @main(%a: tensor<4x3xf32>, %i: tensor<i32>, %j: tensor<i32>) -> tensor<2x2xf32> {
  %r = "xla.dynamic_slice"(%a, %i, %j) {size_indices = array<i64: 2, 2>} : (tensor<4x3xf32>, tensor<i32>, tensor<i32>) -> tensor<2x2xf32>
  return %r : tensor<2x2xf32>
}
