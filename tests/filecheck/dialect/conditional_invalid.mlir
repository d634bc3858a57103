// RUN: xlair-opt %s --split-input-file --verify-diagnostics

// Constraints of xla.conditional (Conditional), checked by its shape rule.

// float branch index
func.func @conditional_0(%arg0: tensor<f32>, %arg1: tensor<f32>, %arg2: tensor<f32>) -> tensor<f32> {
  // expected-error@+1 {{'xla.conditional' branch_index must have PRED or S32 element type; got f32[] [case_i1]}}
  %0 = "xla.conditional"(%arg0, %arg1, %arg2) ({
  ^bb0(%arg3: tensor<f32>):
    %1 = "xla.neg"(%arg3) : (tensor<f32>) -> tensor<f32>
    "xla.return"(%1) : (tensor<f32>) -> ()
  }, {
  ^bb0(%arg3: tensor<f32>):
    %1 = "xla.abs"(%arg3) : (tensor<f32>) -> tensor<f32>
    "xla.return"(%1) : (tensor<f32>) -> ()
  }) : (tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// branches return different shapes
func.func @conditional_1(%arg0: tensor<i1>, %arg1: tensor<f32>, %arg2: tensor<f32>) -> tensor<f32> {
  // expected-error@+1 {{'xla.conditional' branch_computations[1] must return the type of branch_computations[0] (f32[]); got (f32[]) -> pred[] [case_c3]}}
  %0 = "xla.conditional"(%arg0, %arg1, %arg2) ({
  ^bb0(%arg3: tensor<f32>):
    %1 = "xla.neg"(%arg3) : (tensor<f32>) -> tensor<f32>
    "xla.return"(%1) : (tensor<f32>) -> ()
  }, {
  ^bb0(%arg3: tensor<f32>):
    %1 = "xla.is_finite"(%arg3) : (tensor<f32>) -> tensor<i1>
    "xla.return"(%1) : (tensor<i1>) -> ()
  }) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}
