// RUN: xlair-opt %s -p xla-to-linalg | filecheck %s

// CHECK-DAG: #[[EXP:.*]] = affine_map<(d0, d1) -> (0, d1)>

// Inserting dimensions only: linalg.broadcast.
// CHECK-LABEL: func.func @insert
// CHECK: linalg.broadcast ins(%{{.*}} : tensor<3xf32>) outs(%{{.*}} : tensor<3x4xf32>) dimensions = [1]
func.func @insert(%a: tensor<3xf32>) -> tensor<3x4xf32> {
  %r = "xla.broadcast_in_dim"(%a) {out_dim_size = array<i64: 3, 4>, broadcast_dimensions = array<i64: 0>} : (tensor<3xf32>) -> tensor<3x4xf32>
  return %r : tensor<3x4xf32>
}
// Expanding a size-1 dimension: a generic reading index 0 of it.
// CHECK-LABEL: func.func @expand
// CHECK: linalg.generic {indexing_maps = [#[[EXP]],
// CHECK-NOT: xla.
func.func @expand(%a: tensor<1x4xf32>) -> tensor<3x4xf32> {
  %r = "xla.broadcast_in_dim"(%a) {out_dim_size = array<i64: 3, 4>, broadcast_dimensions = array<i64: 0, 1>} : (tensor<1x4xf32>) -> tensor<3x4xf32>
  return %r : tensor<3x4xf32>
}
