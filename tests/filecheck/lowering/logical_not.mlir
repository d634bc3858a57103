// RUN: xlair-opt %s -p xla-to-linalg | filecheck %s

// CHECK-LABEL: func.func @pred
// CHECK: linalg.generic
// CHECK: arith.xori
// CHECK-NOT: xla.
// CHECK: return
func.func @pred(%a: tensor<4xi1>) -> tensor<4xi1> {
  %r = "xla.logical_not"(%a) : (tensor<4xi1>) -> tensor<4xi1>
  return %r : tensor<4xi1>
}
