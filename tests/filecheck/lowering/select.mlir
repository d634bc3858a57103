// RUN: xlair-opt %s -p xla-to-linalg | filecheck %s

// An array predicate and a scalar predicate: one linalg.generic each; the scalar's map is ().
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0) -> (d0)>
// CHECK-DAG: #[[SC:.*]] = affine_map<(d0) -> ()>
// CHECK-LABEL: func.func @array_pred
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[ID]], #[[ID]], #[[ID]]]
// CHECK: arith.select
func.func @array_pred(%p: tensor<4xi1>, %a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %r = "xla.select"(%p, %a, %b) : (tensor<4xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}
// CHECK-LABEL: func.func @scalar_pred
// CHECK: linalg.generic {indexing_maps = [#[[SC]], #[[ID]], #[[ID]], #[[ID]]]
// CHECK: arith.select
// CHECK-NOT: xla.
func.func @scalar_pred(%p: tensor<i1>, %a: tensor<4xi32>, %b: tensor<4xi32>) -> tensor<4xi32> {
  %r = "xla.select"(%p, %a, %b) : (tensor<i1>, tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return %r : tensor<4xi32>
}
