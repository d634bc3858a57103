// RUN: xlair-opt %s -p xla-to-linalg | filecheck %s

// Without a CPU target (or for short rows): a rank sort in two linalg generics (any target):
// ranks count the elements sorting before each one, then each position picks its element.
// CHECK-LABEL: func.func @portable
// CHECK: util.optimization_barrier
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]
// CHECK-SAME: outs(%{{.*}} : tensor<2x8xi32>)
// CHECK: arith.cmpf olt
// CHECK: arith.cmpf olt
// CHECK: arith.extui
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]
// CHECK-SAME: outs(%{{.*}} : tensor<2x8xf32>)
// CHECK: arith.select
func.func @portable(%a: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %r = "xla.sort"(%a) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %c = "xla.lt"(%x, %y) : (tensor<f32>, tensor<f32>) -> tensor<i1>
    "xla.return"(%c) : (tensor<i1>) -> ()
  }) {dimension = 1 : i64, is_stable = false} : (tensor<2x8xf32>) -> tensor<2x8xf32>
  return %r : tensor<2x8xf32>
}
// Along dimension 0: transposed to rows, sorted, transposed back.
// CHECK-LABEL: func.func @dim0
// CHECK: linalg.transpose
// CHECK: arith.cmpi sgt
// CHECK: linalg.transpose
// CHECK-NOT: xla.
func.func @dim0(%a: tensor<8x3xi32>) -> tensor<8x3xi32> {
  %r = "xla.sort"(%a) ({
  ^bb0(%x: tensor<i32>, %y: tensor<i32>):
    %c = "xla.gt"(%x, %y) : (tensor<i32>, tensor<i32>) -> tensor<i1>
    "xla.return"(%c) : (tensor<i1>) -> ()
  }) {dimension = 0 : i64, is_stable = true} : (tensor<8x3xi32>) -> tensor<8x3xi32>
  return %r : tensor<8x3xi32>
}
