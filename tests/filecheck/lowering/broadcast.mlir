// RUN: xlair-opt %s -p xla-to-linalg | filecheck %s

// New major dimensions: the named linalg.broadcast.
// CHECK-LABEL: func.func @main
// CHECK: linalg.broadcast ins(%{{.*}} : tensor<3xf32>) outs(%{{.*}} : tensor<2x5x3xf32>) dimensions = [0, 1]
// CHECK-NOT: xla.
func.func @main(%a: tensor<3xf32>) -> tensor<2x5x3xf32> {
  %r = "xla.broadcast"(%a) {broadcast_sizes = array<i64: 2, 5>} : (tensor<3xf32>) -> tensor<2x5x3xf32>
  return %r : tensor<2x5x3xf32>
}
