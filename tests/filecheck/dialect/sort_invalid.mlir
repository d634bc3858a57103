// RUN: xlair-opt %s --split-input-file --verify-diagnostics

// Constraints of xla.sort (Sort), checked by its shape rule.

// comparator returns f32
func.func @sort_0(%arg0: tensor<5xf32>, %arg1: tensor<5xi32>) -> tuple<tensor<5xf32>, tensor<5xi32>> {
  // expected-error@+1 {{'xla.sort' comparator must return a PRED scalar; got (f32[], f32[], s32[], s32[]) -> f32[] [sort_c5]}}
  %0 = "xla.sort"(%arg0, %arg1) ({
  ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>, %arg4: tensor<i32>, %arg5: tensor<i32>):
    "xla.return"(%arg2) : (tensor<f32>) -> ()
  }) {dimension = 0 : i64, is_stable = false} : (tensor<5xf32>, tensor<5xi32>) -> tuple<tensor<5xf32>, tensor<5xi32>>
  return %0 : tuple<tensor<5xf32>, tensor<5xi32>>
}

// -----

// dimension out of range
func.func @sort_1(%arg0: tensor<5xf32>, %arg1: tensor<5xi32>) -> tuple<tensor<5xf32>, tensor<5xi32>> {
  // expected-error@+1 {{'xla.sort' dimension must be a dimension of the operands' rank 1, in [-1, 1); got 1 [sort_c4]}}
  %0 = "xla.sort"(%arg0, %arg1) ({
  ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>, %arg4: tensor<i32>, %arg5: tensor<i32>):
    %1 = "xla.lt"(%arg2, %arg3) : (tensor<f32>, tensor<f32>) -> tensor<i1>
    "xla.return"(%1) : (tensor<i1>) -> ()
  }) {dimension = 1 : i64, is_stable = false} : (tensor<5xf32>, tensor<5xi32>) -> tuple<tensor<5xf32>, tensor<5xi32>>
  return %0 : tuple<tensor<5xf32>, tensor<5xi32>>
}
