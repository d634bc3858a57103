// RUN: xlair-opt %s -p xla-to-linalg | filecheck %s

// CHECK-LABEL: func.func @main
// CHECK: linalg.generic
// CHECK: linalg.index 1
// CHECK: arith.index_cast
// CHECK: arith.sitofp
// CHECK-NOT: xla.
func.func @main() -> tensor<2x3xf32> {
  %r = "xla.iota"() {shape = tensor<2x3xf32>, iota_dimension = 1 : i64} : () -> tensor<2x3xf32>
  return %r : tensor<2x3xf32>
}
