// RUN: xlair-opt %s -p 'xla-to-linalg{target=cpu}' | filecheck %s

// What xlair hands IREE for the CPU (`xla-to-linalg{target=cpu}`); other targets get
// the portable linalg.generic form (gather_portable.mlir).

module {

// Rows of a table: a linalg.generic builds the start indices (i64, clamped to [0, 1000 - 1]
// so the slice fits), then IREE's iree_linalg_ext.gather takes whole rows, kept a dispatch of
// its own by util.optimization_barrier.
// CHECK-LABEL: func.func @rows
// CHECK: %[[IDX:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<10x1xi64>)
// CHECK: %[[B:.*]] = linalg.index 0 : index
// CHECK: %[[I:.*]] = tensor.extract %arg1[%[[B]], %c0] : tensor<10x1xi32>
// CHECK: %[[W:.*]] = arith.extsi %[[I]] : i32 to i64
// CHECK: %[[HI:.*]] = arith.minsi %[[W]], %c999_i64 : i64
// CHECK: %[[LO:.*]] = arith.maxsi %[[HI]], %c0_i64 : i64
// CHECK: linalg.yield %[[LO]] : i64
// CHECK: %[[G:.*]] = iree_linalg_ext.gather dimension_map = [0] ins(%arg0, %[[IDX]] : tensor<1000x64xf32>, tensor<10x1xi64>) outs(%{{.*}} : tensor<10x64xf32>)
// CHECK: util.optimization_barrier %[[G]] : tensor<10x64xf32>
// CHECK-NOT: xla.
func.func @rows(%arg0: tensor<1000x64xf32>, %arg1: tensor<10x1xi32>) -> tensor<10x64xf32> {
  %0 = "xla.gather"(%arg0, %arg1) {dimension_numbers = {collapsed_slice_dims = array<i64: 0>, index_vector_dim = 1 : i64, offset_dims = array<i64: 1>, operand_batching_dims = array<i64>, start_index_map = array<i64: 0>, start_indices_batching_dims = array<i64>}, indices_are_sorted = false, slice_sizes = array<i64: 1, 64>, unique_indices = false} : (tensor<1000x64xf32>, tensor<10x1xi32>) -> tensor<10x64xf32>
  return %0 : tensor<10x64xf32>
}

// An unsigned 64-bit index clamps with an unsigned min (huge values stay high).
// CHECK-LABEL: func.func @u64
// CHECK: %[[I:.*]] = tensor.extract %arg1[%{{.*}}] : tensor<3xi64>
// CHECK: arith.minui %[[I]], %c4_i64 : i64
func.func @u64(%arg0: tensor<5xf32>, %arg1: tensor<3xui64>) -> tensor<3xf32> {
  %0 = "xla.gather"(%arg0, %arg1) {dimension_numbers = {collapsed_slice_dims = array<i64: 0>, index_vector_dim = 1 : i64, offset_dims = array<i64>, start_index_map = array<i64: 0>}, slice_sizes = array<i64: 1>} : (tensor<5xf32>, tensor<3xui64>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// 2-D slices at 2-D starts: the slice offsets in indexed dimensions are spread into the
// index rows (start + offset), one batch dimension of 5 * 2 * 3 rows; the result is reshaped
// back to [5, 2, 3].
// CHECK-LABEL: func.func @windows
// CHECK: linalg.generic {{.*}} outs(%{{.*}} : tensor<30x2xi64>)
// CHECK: arith.divui
// CHECK: %[[G:.*]] = iree_linalg_ext.gather dimension_map = [0, 1] ins(%arg0, %{{.*}} : tensor<6x7xf32>, tensor<30x2xi64>) outs(%{{.*}} : tensor<30xf32>)
// CHECK: %[[B:.*]] = util.optimization_barrier %[[G]]
// CHECK: tensor.expand_shape %[[B]] {{\[\[}}0, 1, 2]] output_shape [5, 2, 3]
func.func @windows(%arg0: tensor<6x7xf32>, %arg1: tensor<5x2xi32>) -> tensor<5x2x3xf32> {
  %0 = "xla.gather"(%arg0, %arg1) {dimension_numbers = {collapsed_slice_dims = array<i64>, index_vector_dim = 1 : i64, offset_dims = array<i64: 1, 2>, start_index_map = array<i64: 0, 1>}, slice_sizes = array<i64: 2, 3>} : (tensor<6x7xf32>, tensor<5x2xi32>) -> tensor<5x2x3xf32>
  return %0 : tensor<5x2x3xf32>
}

// Nothing indexed (empty index vectors): one linalg.generic reading the operand with
// tensor.extract at the offsets.
// CHECK-LABEL: func.func @unindexed
// CHECK-NOT: iree_linalg_ext.gather
// CHECK: linalg.generic
// CHECK: tensor.extract %arg0[%{{.*}}, %{{.*}}] : tensor<6x7xf32>
func.func @unindexed(%arg0: tensor<6x7xf32>, %arg1: tensor<3x0xi32>) -> tensor<3x2x3xf32> {
  %0 = "xla.gather"(%arg0, %arg1) {dimension_numbers = {collapsed_slice_dims = array<i64>, index_vector_dim = 1 : i64, offset_dims = array<i64: 1, 2>, start_index_map = array<i64>}, slice_sizes = array<i64: 2, 3>} : (tensor<6x7xf32>, tensor<3x0xi32>) -> tensor<3x2x3xf32>
  return %0 : tensor<3x2x3xf32>
}
}
