// RUN: xlair-opt %s -p xla-to-linalg | filecheck %s

// CHECK: func.func private @xlair_host.cross_replica_sum_0(tensor<3xi32>) -> tensor<3xi32>
// CHECK: call @xlair_host.cross_replica_sum_0
func.func @crs(%x: tensor<3xi32>) -> tensor<3xi32> {
  %0 = "xla.cross_replica_sum"(%x) {replica_groups = []} : (tensor<3xi32>) -> tensor<3xi32>
  return %0 : tensor<3xi32>
}
