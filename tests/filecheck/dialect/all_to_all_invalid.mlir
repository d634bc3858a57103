// RUN: xlair-opt %s --split-input-file --verify-diagnostics

// Constraints of xla.all_to_all (AllToAll), checked by its shape rule.

// a split dimension not divisible by split_count
func.func @all_to_all_0(%arg0: tensor<4x6xf32>) -> tensor<16x1xf32> {
  // expected-error@+1 {{'xla.all_to_all' operand dimension 1 (split_dimension) must be divisible by split_count (4); got f32[4,6] [all_to_all_c2]}}
  %0 = "xla.all_to_all"(%arg0) {split_dimension = 1 : i64, concat_dimension = 0 : i64, split_count = 4 : i64, replica_groups = []} : (tensor<4x6xf32>) -> tensor<16x1xf32>
  return %0 : tensor<16x1xf32>
}
