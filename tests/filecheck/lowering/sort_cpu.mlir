// RUN: xlair-opt %s -p xla-to-linalg | filecheck %s

// For the CPU, a long row sorts in a hand-written kernel dispatched with flow.dispatch:
// a radix sort for a one-key less-than, a merge sort with the comparator inlined otherwise.
// CHECK: stream.executable private @xlair_radix_sort
// CHECK: memref.alloca() : memref<4x256xi32>
// CHECK: stream.executable private @xlair_merge_sort
// CHECK: func.func private @cmp_
// CHECK: arith.cmpf ogt
// CHECK-LABEL: func.func @radix
// CHECK: flow.dispatch @xlair_radix_sort_{{[0-9]+}}::@xlair_radix_sort_{{[0-9]+}}
// CHECK-LABEL: func.func @merge
// CHECK: flow.dispatch @xlair_merge_sort_{{[0-9]+}}::@xlair_merge_sort_{{[0-9]+}}
// CHECK-NOT: xla.
module attributes {xlair.target = "cpu"} {
func.func @radix(%a: tensor<1000xf32>) -> tensor<1000xf32> {
  %r = "xla.sort"(%a) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %c = "xla.lt"(%x, %y) : (tensor<f32>, tensor<f32>) -> tensor<i1>
    "xla.return"(%c) : (tensor<i1>) -> ()
  }) {dimension = 0 : i64, is_stable = true} : (tensor<1000xf32>) -> tensor<1000xf32>
  return %r : tensor<1000xf32>
}
func.func @merge(%a: tensor<1000xf32>) -> tensor<1000xf32> {
  %r = "xla.sort"(%a) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %ax = "xla.abs"(%x) : (tensor<f32>) -> tensor<f32>
    %ay = "xla.abs"(%y) : (tensor<f32>) -> tensor<f32>
    %c = "xla.gt"(%ax, %ay) : (tensor<f32>, tensor<f32>) -> tensor<i1>
    "xla.return"(%c) : (tensor<i1>) -> ()
  }) {dimension = 0 : i64, is_stable = true} : (tensor<1000xf32>) -> tensor<1000xf32>
  return %r : tensor<1000xf32>
}
}
