// RUN: xlair-opt %s -p xla-to-linalg | filecheck %s

// CHECK: source_target_pairs\22: [[0, 1], [1, 0]]
// CHECK: func.func private @xlair_host.collective_permute_0(tensor<2xf32>) -> tensor<2xf32>
// CHECK: call @xlair_host.collective_permute_0
func.func @perm(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "xla.collective_permute"(%x) {source_target_pairs = [array<i64: 0, 1>, array<i64: 1, 0>]} : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
