// RUN: xlair-opt %s -p xla-to-linalg | filecheck %s

// CHECK-LABEL: func.func @main
// CHECK: tensor.empty() : tensor<3x5xf32>
// CHECK: tensor.insert_slice %{{.*}} into %{{.*}}[0, 0] [3, 2] [1, 1]
// CHECK: tensor.insert_slice %{{.*}} into %{{.*}}[0, 2] [3, 3] [1, 1]
// CHECK-NOT: xla.
func.func @main(%a: tensor<3x2xf32>, %b: tensor<3x3xf32>) -> tensor<3x5xf32> {
  %r = "xla.concatenate"(%a, %b) {dimension = 1 : i64} : (tensor<3x2xf32>, tensor<3x3xf32>) -> tensor<3x5xf32>
  return %r : tensor<3x5xf32>
}
