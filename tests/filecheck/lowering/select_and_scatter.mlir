// RUN: xlair-opt %s -p xla-to-linalg | filecheck %s

// CHECK: #[[IN:.*]] = affine_map<(d0, d1, d2, d3) -> (d0 * 2 + d2, d1 * 2 + d3)>
// CHECK: #[[WIN:.*]] = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
// CHECK: #[[OUT:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1)>

// Max-pool gradient.  1. A linalg.generic over (source position, window offset) keeps the
// selected value and its linear index (-1: none yet): it takes the element when nothing is
// selected or select(selected, element) is false.
// CHECK-LABEL: func.func @max_pool_grad
// CHECK: %[[OUT0:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<4x6xf32>)
// CHECK: %[[NONE:.*]] = linalg.fill ins(%c-1_i64 : i64) outs(%{{.*}} : tensor<2x3xi64>)
// CHECK: %[[SEL:.*]]:2 = linalg.generic {indexing_maps = [#[[IN]], #[[WIN]], #[[OUT]], #[[OUT]]], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%arg0, %{{.*}} : tensor<4x6xf32>, tensor<2x2xi1>) outs(%{{.*}}, %[[NONE]] : tensor<2x3xf32>, tensor<2x3xi64>)
// CHECK: ^bb0(%[[X:.*]]: f32, %{{.*}}: i1, %[[BEST:.*]]: f32, %[[BEST_I:.*]]: i64):
// CHECK: %[[KEEP:.*]] = arith.cmpf oge, %[[BEST]], %[[X]] : f32
// CHECK: %[[FIRST:.*]] = arith.cmpi slt, %[[BEST_I]], %c0_i64 : i64
// CHECK: %[[NOT:.*]] = arith.xori %[[KEEP]], %true : i1
// CHECK: %[[TAKE:.*]] = arith.ori %[[FIRST]], %[[NOT]] : i1
// CHECK: arith.select %[[TAKE]], %[[X]], %[[BEST]] : f32
// 2. A linalg.generic over (operand element, window offset) reads the source position whose
// window may hold the element (offsets reversed: source order), checks it selected this
// element, and folds its source value in with the scatter computation.
// CHECK: linalg.generic {indexing_maps = [#[[WIN]], #[[OUT]]], iterator_types = ["parallel", "parallel", "reduction", "reduction"]} ins(%{{.*}} : tensor<2x2xi1>) outs(%[[OUT0]] : tensor<4x6xf32>)
// CHECK: %[[I:.*]] = tensor.extract %[[SEL]]#1[%{{.*}}, %{{.*}}] : tensor<2x3xi64>
// CHECK: %[[S:.*]] = tensor.extract %arg1[%{{.*}}, %{{.*}}] : tensor<2x3xf32>
// CHECK: %[[NEW:.*]] = arith.addf %[[ACC:.*]], %[[S]] : f32
// CHECK: arith.select %{{.*}}, %[[NEW]], %[[ACC]] : f32
// CHECK-NOT: xla.
func.func @max_pool_grad(%arg0: tensor<4x6xf32>, %arg1: tensor<2x3xf32>) -> tensor<4x6xf32> {
  %0 = "xla.constant"() {value = dense<0.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %1 = "xla.select_and_scatter"(%arg0, %arg1, %0) ({
  ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
    %2 = "xla.ge"(%arg2, %arg3) : (tensor<f32>, tensor<f32>) -> tensor<i1>
    "xla.return"(%2) : (tensor<i1>) -> ()
  }, {
  ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
    %2 = "xla.add"(%arg2, %arg3) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "xla.return"(%2) : (tensor<f32>) -> ()
  }) {padding = "VALID", window_dimensions = array<i64: 2, 2>, window_strides = array<i64: 2, 2>} : (tensor<4x6xf32>, tensor<2x3xf32>, tensor<f32>) -> tensor<4x6xf32>
  return %1 : tensor<4x6xf32>
}
