// RUN: xlair-opt %s -p xla-to-linalg | filecheck %s

// An outer dimension reversed in the indexing map.
// CHECK-DAG: #[[REV:.*]] = affine_map<(d0, d1) -> (-d0 + 2, d1)>
// CHECK-LABEL: func.func @outer
// CHECK: linalg.generic {indexing_maps = [#[[REV]],
func.func @outer(%a: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %r = "xla.rev"(%a) {dimensions = array<i64: 0>} : (tensor<3x4xf32>) -> tensor<3x4xf32>
  return %r : tensor<3x4xf32>
}
// The innermost dimension reversed: tensor.extract at the mirrored index.
// CHECK-LABEL: func.func @inner
// CHECK: linalg.index 1
// CHECK: arith.subi
// CHECK: tensor.extract
// CHECK-NOT: xla.
func.func @inner(%a: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %r = "xla.rev"(%a) {dimensions = array<i64: 1>} : (tensor<3x4xf32>) -> tensor<3x4xf32>
  return %r : tensor<3x4xf32>
}
