// RUN: xlair-opt %s --split-input-file --verify-diagnostics

// Constraints of xla.collective_permute (CollectivePermute), checked by its shape rule.

// a target named twice
func.func @collective_permute_0(%arg0: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error@+1 {{'xla.collective_permute' source_target_pairs must not name a target replica twice; got [[0, 1], [2, 1]] [collective_permute_c3]}}
  %0 = "xla.collective_permute"(%arg0) {source_target_pairs = [array<i64: 0, 1>, array<i64: 2, 1>]} : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
