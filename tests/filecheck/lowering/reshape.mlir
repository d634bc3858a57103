// RUN: xlair-opt %s -p xla-to-linalg | filecheck %s

// CHECK-LABEL: func.func @in_order
// (collapse to 1-D then expand; canonicalization leaves the single collapse it amounts to)
// CHECK: tensor.collapse_shape %{{.*}} {{\[\[}}0, 1], [2]] : tensor<4x2x3xf32> into tensor<8x3xf32>
func.func @in_order(%a: tensor<4x2x3xf32>) -> tensor<8x3xf32> {
  %r = "xla.reshape"(%a) {new_sizes = array<i64: 8, 3>} : (tensor<4x2x3xf32>) -> tensor<8x3xf32>
  return %r : tensor<8x3xf32>
}
// The out-of-order form transposes first.
// CHECK-LABEL: func.func @out_of_order
// CHECK: linalg.transpose ins(%{{.*}} : tensor<4x2x3xf32>) outs(%{{.*}} : tensor<2x3x4xf32>) permutation = [1, 2, 0]
// CHECK: tensor.collapse_shape
// CHECK-NOT: xla.
func.func @out_of_order(%a: tensor<4x2x3xf32>) -> tensor<24xf32> {
  %r = "xla.reshape"(%a) {dimensions = array<i64: 1, 2, 0>, new_sizes = array<i64: 24>} : (tensor<4x2x3xf32>) -> tensor<24xf32>
  return %r : tensor<24xf32>
}
