// RUN: xlair-opt %s -p xla-to-linalg | filecheck %s

// One element-wise generic; the per-feature vectors are indexed by the feature dimension (2).
// CHECK: #[[F:.+]] = affine_map<(d0, d1, d2) -> (d2)>
// CHECK-LABEL: func.func @inference
// CHECK: linalg.generic {indexing_maps = [#{{.*}}, #[[F]], #[[F]], #[[F]], #[[F]], #{{.*}}], iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK: arith.subf
// CHECK: math.sqrt
// CHECK: arith.divf
// CHECK: arith.addf
// CHECK-NOT: linalg.generic
// CHECK-NOT: xla.
func.func @inference(%x: tensor<2x3x4xf64>, %g: tensor<4xf64>, %b: tensor<4xf64>, %m: tensor<4xf64>, %v: tensor<4xf64>) -> tensor<2x3x4xf64> {
  %r = "xla.batch_norm_inference"(%x, %g, %b, %m, %v) {epsilon = 1.0e-5 : f64, feature_index = 2 : i64} : (tensor<2x3x4xf64>, tensor<4xf64>, tensor<4xf64>, tensor<4xf64>, tensor<4xf64>) -> tensor<2x3x4xf64>
  return %r : tensor<2x3x4xf64>
}
