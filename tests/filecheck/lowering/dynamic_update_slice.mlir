// RUN: xlair-opt %s -p xla-to-linalg | filecheck %s

// CHECK-LABEL: func.func @main
// CHECK: arith.minsi
// CHECK: arith.maxsi
// CHECK: tensor.insert_slice %{{.*}} into %{{.*}}[%{{.*}}] [2] [1] : tensor<2xf32> into tensor<5xf32>
// CHECK-NOT: xla.
func.func @main(%a: tensor<5xf32>, %u: tensor<2xf32>, %i: tensor<i32>) -> tensor<5xf32> {
  %r = "xla.dynamic_update_slice"(%a, %u, %i) : (tensor<5xf32>, tensor<2xf32>, tensor<i32>) -> tensor<5xf32>
  return %r : tensor<5xf32>
}
