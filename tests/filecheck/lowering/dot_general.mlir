// RUN: xlair-opt %s -p xla-to-linalg | filecheck %s

// Batch dims first, then [M, K] x [K, N]: the named batch_matmul.
// CHECK-LABEL: func.func @batch
// CHECK: linalg.batch_matmul ins(%{{.*}}, %{{.*}} : tensor<2x3x4xf32>, tensor<2x4x5xf32>)
func.func @batch(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>) -> tensor<2x3x5xf32> {
  %r = "xla.dot_general"(%a, %b) {dimension_numbers = {lhs_batch_dimensions = array<i64: 0>, rhs_batch_dimensions = array<i64: 0>, lhs_contracting_dimensions = array<i64: 2>, rhs_contracting_dimensions = array<i64: 1>}} : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
  return %r : tensor<2x3x5xf32>
}
// Any other order is transposed into that form first.
// CHECK-LABEL: func.func @transposed
// CHECK: linalg.transpose ins(%{{.*}} : tensor<4x3xf32>) outs(%{{.*}} : tensor<3x4xf32>) permutation = [1, 0]
// CHECK: linalg.matmul
// CHECK-NOT: xla.
func.func @transposed(%a: tensor<4x3xf32>, %b: tensor<4x5xf32>) -> tensor<3x5xf32> {
  %r = "xla.dot_general"(%a, %b) {dimension_numbers = {lhs_contracting_dimensions = array<i64: 0>, rhs_contracting_dimensions = array<i64: 0>}} : (tensor<4x3xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
  return %r : tensor<3x5xf32>
}
// Batch dimensions and a contraction but no free ones (einsum 'bk,bk->b'): no linalg named op
// has that form, so a contraction generic (the lowering once looked up a named op for it and
// failed with KeyError: (True, False, False)).
// CHECK-LABEL: func.func @batch_only
// CHECK-NOT: linalg.batch_
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "reduction"]
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK-NOT: xla.
func.func @batch_only(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> tensor<2xf32> {
  %r = "xla.dot_general"(%a, %b) {dimension_numbers = {lhs_batch_dimensions = array<i64: 0>, rhs_batch_dimensions = array<i64: 0>, lhs_contracting_dimensions = array<i64: 1>, rhs_contracting_dimensions = array<i64: 1>}} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2xf32>
  return %r : tensor<2xf32>
}
