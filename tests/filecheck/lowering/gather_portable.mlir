// RUN: xlair-opt %s -p xla-to-linalg | filecheck %s

// Without a CPU target: one linalg.generic over the result; the start index is read for the
// batch position, clamped to [0, 1000 - 1] (the slice must fit), and the row element read
// with tensor.extract.
// CHECK-LABEL: func.func @rows
// CHECK-NOT: iree_linalg_ext
// CHECK: linalg.generic {indexing_maps = [#{{.*}}], iterator_types = ["parallel", "parallel"]} outs(%{{.*}} : tensor<10x64xf32>)
// CHECK: %[[B:.*]] = linalg.index 0 : index
// CHECK: %[[I:.*]] = tensor.extract %arg1[%[[B]], %c0] : tensor<10x1xi32>
// CHECK: %[[W:.*]] = arith.extsi %[[I]] : i32 to i64
// CHECK: %[[HI:.*]] = arith.minsi %[[W]], %c999_i64 : i64
// CHECK: %[[LO:.*]] = arith.maxsi %[[HI]], %c0_i64 : i64
// CHECK: %[[R:.*]] = arith.index_cast %[[LO]] : i64 to index
// CHECK: %[[C:.*]] = linalg.index 1 : index
// CHECK: tensor.extract %arg0[%[[R]], %[[C]]] : tensor<1000x64xf32>
// CHECK-NOT: xla.
func.func @rows(%arg0: tensor<1000x64xf32>, %arg1: tensor<10x1xi32>) -> tensor<10x64xf32> {
  %0 = "xla.gather"(%arg0, %arg1) {dimension_numbers = {collapsed_slice_dims = array<i64: 0>, index_vector_dim = 1 : i64, offset_dims = array<i64: 1>, start_index_map = array<i64: 0>}, slice_sizes = array<i64: 1, 64>} : (tensor<1000x64xf32>, tensor<10x1xi32>) -> tensor<10x64xf32>
  return %0 : tensor<10x64xf32>
}

// Operand batching dimensions index the operand with the batch coordinate itself.
// CHECK-LABEL: func.func @batching
// CHECK: %[[B0:.*]] = linalg.index 0 : index
// CHECK: %[[B1:.*]] = linalg.index 1 : index
// CHECK: %[[I:.*]] = tensor.extract %arg1[%[[B0]], %[[B1]], %c0] : tensor<4x3x1xi8>
// CHECK: tensor.extract %arg0[%[[B1]], %{{.*}}, %{{.*}}] : tensor<3x5x4xf32>
func.func @batching(%arg0: tensor<3x5x4xf32>, %arg1: tensor<4x3x1xi8>) -> tensor<4x3x4xf32> {
  %0 = "xla.gather"(%arg0, %arg1) {dimension_numbers = {collapsed_slice_dims = array<i64: 1>, index_vector_dim = 2 : i64, offset_dims = array<i64: 2>, start_index_map = array<i64: 1>, operand_batching_dims = array<i64: 0>, start_indices_batching_dims = array<i64: 1>}, slice_sizes = array<i64: 1, 1, 4>} : (tensor<3x5x4xf32>, tensor<4x3x1xi8>) -> tensor<4x3x4xf32>
  return %0 : tensor<4x3x4xf32>
}
