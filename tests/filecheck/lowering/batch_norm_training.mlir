// RUN: xlair-opt %s -p xla-to-iree-input | filecheck %s

// Features in dimension 1: a reduction over dimensions 0 and 2 for the mean, a second one of the
// squared deviations for the variance (two passes), then one element-wise generic normalizing.
// CHECK-LABEL: func.func @training
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[F:.+]]], iterator_types = ["reduction", "parallel", "reduction"]}
// CHECK: arith.divf
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction", "parallel", "reduction"]}
// CHECK: arith.subf
// CHECK: arith.mulf
// CHECK: math.sqrt
// CHECK-NOT: xla.
func.func @training(%x: tensor<2x3x4xf32>, %g: tensor<3xf32>, %b: tensor<3xf32>) -> tuple<tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>> {
  %r = "xla.batch_norm_training"(%x, %g, %b) {epsilon = 1.0e-3 : f64, feature_index = 1 : i64} : (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>) -> tuple<tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>>
  return %r : tuple<tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>>
}

// f16 accumulates in f32.
// CHECK-LABEL: func.func @half
// CHECK: arith.extf %{{.*}} : f16 to f32
// CHECK: arith.truncf %{{.*}} : f32 to f16
func.func @half(%x: tensor<8x2xf16>, %g: tensor<2xf16>, %b: tensor<2xf16>) -> tuple<tensor<8x2xf16>, tensor<2xf16>, tensor<2xf16>> {
  %r = "xla.batch_norm_training"(%x, %g, %b) {epsilon = 1.0e-3 : f64, feature_index = 1 : i64} : (tensor<8x2xf16>, tensor<2xf16>, tensor<2xf16>) -> tuple<tensor<8x2xf16>, tensor<2xf16>, tensor<2xf16>>
  return %r : tuple<tensor<8x2xf16>, tensor<2xf16>, tensor<2xf16>>
}
