// RUN: xlair-opt %s -p xla-simplify | filecheck %s

// A weight gradient as JAX emits it: the product, then its transpose.  xla-simplify computes
// the transposed product directly, with the operands swapped (IREE fused the transpose into
// the matmul's dispatch and failed: "exceeded stack allocation limit").
// CHECK-LABEL: func.func @weight_grad
// CHECK: %[[R:.*]] = "xla.dot_general"(%arg1, %arg0) {dimension_numbers = {lhs_batch_dimensions = array<i64>, lhs_contracting_dimensions = array<i64: 0>, rhs_batch_dimensions = array<i64>, rhs_contracting_dimensions = array<i64: 0>}} : (tensor<64x784xf32>, tensor<64x256xf32>) -> tensor<784x256xf32>
// CHECK-NOT: xla.transpose
// CHECK: return %[[R]]
func.func @weight_grad(%g: tensor<64x256xf32>, %x: tensor<64x784xf32>) -> tensor<784x256xf32> {
  %p = "xla.dot_general"(%g, %x) {dimension_numbers = {lhs_contracting_dimensions = array<i64: 0>, rhs_contracting_dimensions = array<i64: 0>}} : (tensor<64x256xf32>, tensor<64x784xf32>) -> tensor<256x784xf32>
  %t = "xla.transpose"(%p) {permutation = array<i64: 1, 0>} : (tensor<256x784xf32>) -> tensor<784x256xf32>
  return %t : tensor<784x256xf32>
}

// Batch dimensions stay first; each free group keeps its order.
// CHECK-LABEL: func.func @batched
// CHECK: "xla.dot_general"(%arg1, %arg0) {dimension_numbers = {lhs_batch_dimensions = array<i64: 0>, lhs_contracting_dimensions = array<i64: 1>, rhs_batch_dimensions = array<i64: 0>, rhs_contracting_dimensions = array<i64: 2>}} : (tensor<2x4x5x6xf32>, tensor<2x3x4xf32>) -> tensor<2x5x6x3xf32>
// CHECK-NOT: xla.transpose
func.func @batched(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5x6xf32>) -> tensor<2x5x6x3xf32> {
  %p = "xla.dot_general"(%a, %b) {dimension_numbers = {lhs_batch_dimensions = array<i64: 0>, rhs_batch_dimensions = array<i64: 0>, lhs_contracting_dimensions = array<i64: 2>, rhs_contracting_dimensions = array<i64: 1>}} : (tensor<2x3x4xf32>, tensor<2x4x5x6xf32>) -> tensor<2x3x5x6xf32>
  %t = "xla.transpose"(%p) {permutation = array<i64: 0, 2, 3, 1>} : (tensor<2x3x5x6xf32>) -> tensor<2x5x6x3xf32>
  return %t : tensor<2x5x6x3xf32>
}

// Not rewritten: the product has another use, or the permutation is not a swap of the free groups.
// CHECK-LABEL: func.func @kept
// CHECK: xla.transpose
// CHECK: xla.transpose
func.func @kept(%a: tensor<3x4xf32>, %b: tensor<4x5xf32>, %c: tensor<2x3x4xf32>, %d: tensor<2x4x5xf32>) -> (tensor<5x3xf32>, tensor<3x5xf32>, tensor<3x2x5xf32>) {
  %p = "xla.dot_general"(%a, %b) {dimension_numbers = {lhs_contracting_dimensions = array<i64: 1>, rhs_contracting_dimensions = array<i64: 0>}} : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
  %t = "xla.transpose"(%p) {permutation = array<i64: 1, 0>} : (tensor<3x5xf32>) -> tensor<5x3xf32>
  %q = "xla.dot_general"(%c, %d) {dimension_numbers = {lhs_batch_dimensions = array<i64: 0>, rhs_batch_dimensions = array<i64: 0>, lhs_contracting_dimensions = array<i64: 2>, rhs_contracting_dimensions = array<i64: 1>}} : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
  %u = "xla.transpose"(%q) {permutation = array<i64: 1, 0, 2>} : (tensor<2x3x5xf32>) -> tensor<3x2x5xf32>
  return %t, %p, %u : tensor<5x3xf32>, tensor<3x5xf32>, tensor<3x2x5xf32>
}

// A transpose of an element-wise op of a product moves onto the op's operands, where it folds
// into the product (JAX's Cholesky of a @ a.T + c; IREE crashed in MaterializeDeviceEncoding).
// CHECK-LABEL: func.func @through_elementwise
// CHECK: %[[P:.*]] = "xla.dot_general"(%arg1, %arg0)
// CHECK: %[[C:.*]] = "xla.transpose"(%arg2) {permutation = array<i64: 1, 0>} : (tensor<3x5xf32>) -> tensor<5x3xf32>
// CHECK: %[[S:.*]] = "xla.add"(%[[P]], %[[C]]) : (tensor<5x3xf32>, tensor<5x3xf32>) -> tensor<5x3xf32>
// CHECK: return %[[S]]
func.func @through_elementwise(%a: tensor<3x4xf32>, %b: tensor<4x5xf32>, %c: tensor<3x5xf32>) -> tensor<5x3xf32> {
  %p = "xla.dot_general"(%a, %b) {dimension_numbers = {lhs_contracting_dimensions = array<i64: 1>, rhs_contracting_dimensions = array<i64: 0>}} : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
  %s = "xla.add"(%p, %c) : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %t = "xla.transpose"(%s) {permutation = array<i64: 1, 0>} : (tensor<3x5xf32>) -> tensor<5x3xf32>
  return %t : tensor<5x3xf32>
}

// Kept: the sum has another use.
// CHECK-LABEL: func.func @sum_used_twice
// CHECK: "xla.dot_general"(%arg0, %arg1)
// CHECK: xla.add
// CHECK: xla.transpose
func.func @sum_used_twice(%a: tensor<3x4xf32>, %b: tensor<4x5xf32>, %c: tensor<3x5xf32>) -> (tensor<5x3xf32>, tensor<3x5xf32>) {
  %p = "xla.dot_general"(%a, %b) {dimension_numbers = {lhs_contracting_dimensions = array<i64: 1>, rhs_contracting_dimensions = array<i64: 0>}} : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
  %s = "xla.add"(%p, %c) : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
  %t = "xla.transpose"(%s) {permutation = array<i64: 1, 0>} : (tensor<3x5xf32>) -> tensor<5x3xf32>
  return %t, %s : tensor<5x3xf32>, tensor<3x5xf32>
}
