// RUN: xlair-opt %s -p xla-to-linalg | filecheck %s

// CHECK-LABEL: func.func @pred
// CHECK: linalg.generic
// CHECK: arith.andi
// CHECK-NOT: xla.
// CHECK: return
func.func @pred(%a: tensor<4xi1>, %b: tensor<4xi1>) -> tensor<4xi1> {
  %r = "xla.logical_and"(%a, %b) : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  return %r : tensor<4xi1>
}
