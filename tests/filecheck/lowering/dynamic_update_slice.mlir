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

// An update spanning a dimension: its start clamps to [0, 0], so the offset is the constant 0
// (only the other start is clamped), and an update spanning every dimension is the result.
// CHECK-LABEL: func.func @spans_rows
// CHECK: arith.minsi
// CHECK-NOT: arith.minsi
// CHECK: tensor.insert_slice %{{.*}} into %{{.*}}[0, %{{.*}}] [4, 2] [1, 1] : tensor<4x2xf32> into tensor<4x6xf32>
func.func @spans_rows(%a: tensor<4x6xf32>, %u: tensor<4x2xf32>, %i: tensor<i32>, %j: tensor<i32>) -> tensor<4x6xf32> {
  %r = "xla.dynamic_update_slice"(%a, %u, %i, %j) : (tensor<4x6xf32>, tensor<4x2xf32>, tensor<i32>, tensor<i32>) -> tensor<4x6xf32>
  return %r : tensor<4x6xf32>
}

// CHECK-LABEL: func.func @spans_all
// CHECK-NOT: tensor.insert_slice
// CHECK: return %arg1 : tensor<1x3xf32>
func.func @spans_all(%a: tensor<1x3xf32>, %u: tensor<1x3xf32>, %i: tensor<i32>, %j: tensor<i32>) -> tensor<1x3xf32> {
  %r = "xla.dynamic_update_slice"(%a, %u, %i, %j) : (tensor<1x3xf32>, tensor<1x3xf32>, tensor<i32>, tensor<i32>) -> tensor<1x3xf32>
  return %r : tensor<1x3xf32>
}
