// RUN: xlair-opt %s --split-input-file --verify-diagnostics

// Constraints of xla.all_reduce (AllReduce), checked by its shape rule.

// a computation of another element type
func.func @all_reduce_0(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'xla.all_reduce' computation must be a reduction (f32[], f32[]) -> f32[]; got (s32[], s32[]) -> s32[] [all_reduce_c5]}}
  %0 = "xla.all_reduce"(%arg0) ({
  ^bb0(%a: tensor<i32>, %b: tensor<i32>):
    %s = "xla.add"(%a, %b) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    "xla.return"(%s) : (tensor<i32>) -> ()
  }) {replica_groups = []} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// a replica in two groups
func.func @all_reduce_1(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'xla.all_reduce' replica_groups must hold distinct non-negative replica ids; got [[0, 1], [1, 2]] [all_reduce_c1]}}
  %0 = "xla.all_reduce"(%arg0) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = "xla.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "xla.return"(%s) : (tensor<f32>) -> ()
  }) {replica_groups = [array<i64: 0, 1>, array<i64: 1, 2>]} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
