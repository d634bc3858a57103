// RUN: xlair-opt %s -p xla-to-linalg | filecheck %s

// Without a CPU target (or for short rows): iree_linalg_ext.sort with the comparator inline.
// CHECK-LABEL: func.func @portable
// CHECK: iree_linalg_ext.sort dimension(1) outs(%{{.*}} : tensor<2x8xf32>)
// CHECK: arith.cmpf olt
// CHECK: iree_linalg_ext.yield
func.func @portable(%a: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %r = "xla.sort"(%a) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %c = "xla.lt"(%x, %y) : (tensor<f32>, tensor<f32>) -> tensor<i1>
    "xla.return"(%c) : (tensor<i1>) -> ()
  }) {dimension = 1 : i64, is_stable = false} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  return %r : tensor<2x8xf32>
}
// is_stable adds an index operand and a tie-break on it.
// CHECK-LABEL: func.func @stable
// CHECK: iree_linalg_ext.sort dimension(0) outs(%{{.*}}, %{{.*}} : tensor<8xi32>, tensor<8xi32>)
// CHECK: arith.cmpi slt
// CHECK-NOT: xla.
func.func @stable(%a: tensor<8xi32>) -> tensor<8xi32> {
  %r = "xla.sort"(%a) ({
  ^bb0(%x: tensor<i32>, %y: tensor<i32>):
    %c = "xla.gt"(%x, %y) : (tensor<i32>, tensor<i32>) -> tensor<i1>
    "xla.return"(%c) : (tensor<i1>) -> ()
  }) {dimension = 0 : i64, is_stable = true} : (tensor<8xi32>) -> tensor<8xi32>
  return %r : tensor<8xi32>
}
