// RUN: xlair-opt %s -p xla-to-linalg | filecheck %s

// CHECK: split_dimension\22: 1, \22concat_dimension\22: 0, \22split_count\22: 4
// CHECK: func.func private @xlair_host.all_to_all_0(tensor<4x16xf32>) -> tensor<16x4xf32>
// CHECK: call @xlair_host.all_to_all_0
func.func @a2a(%x: tensor<4x16xf32>) -> tensor<16x4xf32> {
  %0 = "xla.all_to_all"(%x) {split_dimension = 1 : i64, concat_dimension = 0 : i64, split_count = 4 : i64, replica_groups = []} : (tensor<4x16xf32>) -> tensor<16x4xf32>
  return %0 : tensor<16x4xf32>
}
