// RUN: xlair-opt %s -p xla-to-linalg | filecheck %s

// Tokens become tensor<i1>: no operands -> a constant, several -> a linalg and of all of them
// (a data dependence on each).
// CHECK-LABEL: func.func @join(%{{.*}}: tensor<i1>, %{{.*}}: tensor<i1>) -> tensor<i1>
// CHECK: arith.constant dense<false> : tensor<i1>
// CHECK: linalg.generic
// CHECK: arith.andi
// CHECK: arith.andi
// CHECK-NOT: xla.
func.func @join(%a: !xla.token, %b: !xla.token) -> !xla.token {
  %0 = "xla.after_all"() : () -> !xla.token
  %1 = "xla.after_all"(%a, %b, %0) : (!xla.token, !xla.token, !xla.token) -> !xla.token
  return %1 : !xla.token
}
