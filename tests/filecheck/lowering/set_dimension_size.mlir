// RUN: xlair-opt %s -p xla-to-linalg | filecheck %s

// A reduction over a dynamically sized dimension reads the tail beyond the size as the init
// value: iota < size selects the operand, else the init.
// CHECK-LABEL: func.func @main
// CHECK: linalg.index 0
// CHECK: arith.cmpi slt
// CHECK: arith.select
// CHECK: linalg.reduce
// CHECK-NOT: xla.
func.func @main(%v: tensor<10xf32>, %n: tensor<i32>) -> tensor<f32> {
  %z = "xla.constant"() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
  %d = "xla.set_dimension_size"(%v, %n) {dimension = 0 : i64} : (tensor<10xf32>, tensor<i32>) -> tensor<10xf32>
  %r = "xla.reduce"(%d, %z) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %s = "xla.add"(%x, %y) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "xla.return"(%s) : (tensor<f32>) -> ()
  }) {dimensions = array<i64: 0>} : (tensor<10xf32>, tensor<f32>) -> tensor<f32>
  return %r : tensor<f32>
}
