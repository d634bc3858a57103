// RUN: xlair-opt %s -p xla-to-linalg | filecheck %s

// CHECK-LABEL: func.func @s32
// CHECK: linalg.generic
// CHECK: arith.xori
// CHECK-NOT: xla.
// CHECK: return
func.func @s32(%a: tensor<4xi32>, %b: tensor<4xi32>) -> tensor<4xi32> {
  %r = "xla.xor"(%a, %b) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return %r : tensor<4xi32>
}
