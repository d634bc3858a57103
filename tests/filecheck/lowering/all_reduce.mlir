// RUN: xlair-opt %s -p xla-to-linalg | filecheck %s

// An addition is described as "add" (numpy / MPI Allreduce); another computation travels as
// the text of a module whose @main is the computation (the host interprets it).
// CHECK: xlair.host_calls = [
// CHECK-SAME: computation\22: \22module {{.*}}xla.atan2
// CHECK-SAME: replica_groups\22: [[0, 2], [1, 3]], \22channel_id\22: 1}{{.*}}computation\22: \22add\22
// CHECK-LABEL: func.func @sum
// CHECK: call @xlair_host.all_reduce_{{[0-9]}}(%{{.*}}) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-LABEL: func.func @other
// CHECK: call @xlair_host.all_reduce_{{[0-9]}}(%{{.*}}) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK-NOT: xla.add
func.func @sum(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "xla.all_reduce"(%x) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = "xla.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "xla.return"(%s) : (tensor<f32>) -> ()
  }) {replica_groups = [array<i64: 0, 2>, array<i64: 1, 3>], channel_id = 1 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func @other(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "xla.all_reduce"(%x) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = "xla.atan2"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "xla.return"(%s) : (tensor<f32>) -> ()
  }) {replica_groups = []} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
