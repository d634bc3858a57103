// RUN: xlair-opt %s --split-input-file --verify-diagnostics

// Constraints of xla.call (Call), checked by its shape rule.

// too few arguments
func.func @call_0(%arg0: tensor<f32>, %arg1: tensor<f32>) -> tensor<f32> {
  // expected-error@+1 {{'xla.call' args must match the parameters of the computation (f32[], f32[]) -> f32[]; got [f32[]] [spec:Call]}}
  %0 = "xla.call"(%arg0) {computation = @mul_f32_66987e5d5f6d} : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}
func.func private @mul_f32_66987e5d5f6d(%arg0: tensor<f32>, %arg1: tensor<f32>) -> tensor<f32> {
  %0 = "xla.mul"(%arg0, %arg1) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// no such function
func.func @call_1(%arg0: tensor<f32>, %arg1: tensor<f32>) -> tensor<f32> {
  // expected-error@+1 {{'xla.call' computation must name a function of the module; got '@nowhere' [ir:callee]}}
  %0 = "xla.call"(%arg0, %arg1) {computation = @nowhere} : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}
func.func private @mul_f32_66987e5d5f6d(%arg0: tensor<f32>, %arg1: tensor<f32>) -> tensor<f32> {
  %0 = "xla.mul"(%arg0, %arg1) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}
