// RUN: xlair-opt %s -p xla-to-linalg | filecheck %s

// The computation becomes the body of one linalg.generic; a static operand has the map ().
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[SC:.*]] = affine_map<(d0, d1) -> ()>
// CHECK-LABEL: func.func @main
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[ID]], #[[SC]], #[[ID]]]
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK-NOT: xla.
func.func @main(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>, %k: tensor<f32>) -> tensor<2x3xf32> {
  %r = "xla.map"(%a, %b, %k) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>, %s: tensor<f32>):
    %m = "xla.mul"(%x, %y) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    %n = "xla.add"(%m, %s) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "xla.return"(%n) : (tensor<f32>) -> ()
  }) {dimensions = array<i64: 0, 1>, operandSegmentSizes = array<i32: 2, 1>} : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}
