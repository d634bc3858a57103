// RUN: xlair-opt %s -p 'xla-to-linalg{target=cpu}' | filecheck %s

// For the CPU, a long row sorts in a hand-written kernel dispatched with flow.dispatch:
// a radix sort for a one-key less-than, a merge sort with the comparator inlined otherwise.
// A lone row of 2^14 or more 32-bit keys is split by its top 12 bits first (count, split)
// and its 4096 buckets sorted by the two lower 10-bit digits, a workgroup each.
// CHECK: stream.executable private @xlair_radix_sort
// CHECK: memref<1x3x2048xi32>
// CHECK: stream.executable private @xlair_merge_sort
// CHECK: func.func private @cmp_
// CHECK: arith.cmpf ogt
// CHECK: stream.executable private @xlair_radix_buckets
// CHECK-NEXT: stream.executable.export public @xlair_radix_buckets_{{[0-9]+}} workgroups()
// CHECK-NEXT: arith.constant 4096 : index
// CHECK: memref<1x20000xf32>
// CHECK: memref<4096x2x1024xi32>
// CHECK: stream.executable private @xlair_radix_split
// CHECK: stream.executable private @xlair_radix_count
// CHECK-LABEL: func.func @radix
// CHECK: flow.dispatch @xlair_radix_sort_{{[0-9]+}}::@xlair_radix_sort_{{[0-9]+}}
// CHECK-LABEL: func.func @merge
// CHECK: flow.dispatch @xlair_merge_sort_{{[0-9]+}}::@xlair_merge_sort_{{[0-9]+}}
// CHECK-LABEL: func.func @split
// CHECK: flow.dispatch @xlair_radix_count_{{[0-9]+}}::@xlair_radix_count_{{[0-9]+}}
// CHECK: flow.dispatch @xlair_radix_split_{{[0-9]+}}::@xlair_radix_split_{{[0-9]+}}
// CHECK: flow.dispatch @xlair_radix_buckets_{{[0-9]+}}::@xlair_radix_buckets_{{[0-9]+}}
// CHECK-NOT: xla.
module {
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
func.func @split(%a: tensor<20000xf32>) -> tensor<20000xf32> {
  %r = "xla.sort"(%a) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %c = "xla.lt"(%x, %y) : (tensor<f32>, tensor<f32>) -> tensor<i1>
    "xla.return"(%c) : (tensor<i1>) -> ()
  }) {dimension = 0 : i64, is_stable = true} : (tensor<20000xf32>) -> tensor<20000xf32>
  return %r : tensor<20000xf32>
}
}
