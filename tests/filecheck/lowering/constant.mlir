// RUN: xlair-opt %s -p xla-to-linalg | filecheck %s

// Unsigned literals become signless ones with the same bits.
// CHECK-LABEL: func.func @main
// CHECK: arith.constant dense<[1, -56]> : tensor<2xi8>
// CHECK-NOT: xla.
func.func @main() -> tensor<2xui8> {
  %r = "xla.constant"() {value = dense<[1, 200]> : tensor<2xui8>} : () -> tensor<2xui8>
  return %r : tensor<2xui8>
}
