// RUN: xlair-opt %s -p xla-to-linalg | filecheck %s

// Any other computation: one linalg.generic, input read at (out * stride + window), the
// window loop a reduction, the accumulator on the left of the computation.
// CHECK: #[[IN:.*]] = affine_map<(d0, d1) -> (d0 * 2 + d1)>
// CHECK: #[[WIN:.*]] = affine_map<(d0, d1) -> (d1)>

// max over 2x2 windows of NHWC: linalg.pooling_nhwc_max, the init value in the accumulator.
// CHECK-LABEL: func.func @max_pool
// CHECK: %[[INIT:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<2x4x4x3xf32>)
// CHECK: %[[WINDOW:.*]] = tensor.empty() : tensor<2x2xf32>
// CHECK: linalg.pooling_nhwc_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%arg0, %[[WINDOW]] : tensor<2x8x8x3xf32>, tensor<2x2xf32>) outs(%[[INIT]] : tensor<2x4x4x3xf32>)
// CHECK-NOT: xla.
func.func @max_pool(%arg0: tensor<2x8x8x3xf32>) -> tensor<2x4x4x3xf32> {
  %0 = "xla.constant"() {value = dense<0xFF800000> : tensor<f32>} : () -> tensor<f32>
  %1 = "xla.reduce_window"(%arg0, %0) ({
  ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>):
    %2 = "xla.max"(%arg1, %arg2) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "xla.return"(%2) : (tensor<f32>) -> ()
  }) {operandSegmentSizes = array<i32: 1, 1>, padding = "VALID", window_dimensions = array<i64: 1, 2, 2, 1>, window_strides = array<i64: 1, 2, 2, 1>} : (tensor<2x8x8x3xf32>, tensor<f32>) -> tensor<2x4x4x3xf32>
  return %1 : tensor<2x4x4x3xf32>
}

// Base dilation 2 and padding (1, 1): the operand goes into an init-filled tensor at stride 2.
// CHECK-LABEL: func.func @sub_dilated
// CHECK: %[[F:.*]] = linalg.fill ins(%{{.*}} : i32) outs(%{{.*}} : tensor<11xi32>)
// CHECK: %[[X:.*]] = tensor.insert_slice %arg0 into %[[F]][1] [5] [2]
// CHECK: linalg.generic {indexing_maps = [#[[IN]], #[[WIN]], #{{.*}}], iterator_types = ["parallel", "reduction"]} ins(%[[X]], %{{.*}} : tensor<11xi32>, tensor<3xi1>)
// CHECK: ^bb0(%[[V:.*]]: i32, %{{.*}}: i1, %[[ACC:.*]]: i32):
// CHECK: arith.subi %[[ACC]], %[[V]] : i32
func.func @sub_dilated(%arg0: tensor<5xi32>) -> tensor<5xi32> {
  %0 = "xla.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  %1 = "xla.reduce_window"(%arg0, %0) ({
  ^bb0(%arg1: tensor<i32>, %arg2: tensor<i32>):
    %2 = "xla.sub"(%arg1, %arg2) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    "xla.return"(%2) : (tensor<i32>) -> ()
  }) {base_dilations = array<i64: 2>, operandSegmentSizes = array<i32: 1, 1>, padding = [array<i64: 1, 1>], window_dimensions = array<i64: 3>, window_strides = array<i64: 2>} : (tensor<5xi32>, tensor<i32>) -> tensor<5xi32>
  return %1 : tensor<5xi32>
}
