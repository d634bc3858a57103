// RUN: xlair-opt %s -p xla-to-linalg | filecheck %s

// Reversed dimensions are read with tensor.extract at the mirrored index, never through an
// indexing map (IREE rejects a reversed dimension that a fused transpose makes innermost).
// CHECK-NOT: affine_map<{{.*}}-d0
// CHECK-LABEL: func.func @outer
// CHECK: linalg.index 0
// CHECK: arith.subi
// CHECK: tensor.extract
func.func @outer(%a: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %r = "xla.rev"(%a) {dimensions = array<i64: 0>} : (tensor<3x4xf32>) -> tensor<3x4xf32>
  return %r : tensor<3x4xf32>
}
// CHECK-LABEL: func.func @inner
// CHECK: linalg.index 1
// CHECK: arith.subi
// CHECK: tensor.extract
// CHECK-NOT: xla.
func.func @inner(%a: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %r = "xla.rev"(%a) {dimensions = array<i64: 1>} : (tensor<3x4xf32>) -> tensor<3x4xf32>
  return %r : tensor<3x4xf32>
}
