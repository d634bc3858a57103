// RUN: xlair-opt %s -p xla-to-linalg | filecheck %s

// CHECK: all_gather_dim\22: 1, \22shard_count\22: 2
// CHECK: func.func private @xlair_host.all_gather_0(tensor<2x3xf32>) -> tensor<2x6xf32>
// CHECK: call @xlair_host.all_gather_0
func.func @gather(%x: tensor<2x3xf32>) -> tensor<2x6xf32> {
  %0 = "xla.all_gather"(%x) {all_gather_dim = 1 : i64, shard_count = 2 : i64, replica_groups = []} : (tensor<2x3xf32>) -> tensor<2x6xf32>
  return %0 : tensor<2x6xf32>
}
