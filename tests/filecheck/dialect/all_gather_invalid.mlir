// RUN: xlair-opt %s --split-input-file --verify-diagnostics

// Constraints of xla.all_gather (AllGather), checked by its shape rule.

// all_gather_dim out of range
func.func @all_gather_0(%arg0: tensor<2xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'xla.all_gather' all_gather_dim must be a dimension of the operand's rank 1, in [0, 1); got 1 [all_gather_c1]}}
  %0 = "xla.all_gather"(%arg0) {all_gather_dim = 1 : i64, shard_count = 2 : i64, replica_groups = []} : (tensor<2xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// groups of another size than shard_count
func.func @all_gather_1(%arg0: tensor<2xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'xla.all_gather' replica_groups must be groups of shard_count (2) replicas; got [[0, 1, 2]] [spec:AllGather]}}
  %0 = "xla.all_gather"(%arg0) {all_gather_dim = 0 : i64, shard_count = 2 : i64, replica_groups = [array<i64: 0, 1, 2>]} : (tensor<2xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
