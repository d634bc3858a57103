// RUN: xlair-opt %s --split-input-file --verify-diagnostics

// Constraints of xla.tuple (Tuple), checked by its shape rule.

// declared tuple type differs from the elements
func.func @tuple_0(%arg0: tensor<2x3xf32>, %arg1: !xla.token) -> tuple<tensor<2x3xf32>, tensor<i32>> {
  // expected-error@+1 {{'xla.tuple' result type must be (f32[2,3], token[]) by the op's shape rule; got (f32[2,3], s32[]) [ir:result]}}
  %0 = "xla.tuple"(%arg0, %arg1) : (tensor<2x3xf32>, !xla.token) -> tuple<tensor<2x3xf32>, tensor<i32>>
  return %0 : tuple<tensor<2x3xf32>, tensor<i32>>
}
