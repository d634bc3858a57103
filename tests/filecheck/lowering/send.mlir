// RUN: xlair-opt %s -p xla-to-linalg | filecheck %s

// CHECK: xlair.host_calls = [{{.*}}send{{.*}}channel_handle\22: 5
// CHECK: func.func private @xlair_host.send_0(tensor<2xi32>) -> tensor<i1>
// CHECK: call @xlair_host.send_0(%{{.*}}) : (tensor<2xi32>) -> tensor<i1>
func.func @send(%x: tensor<2xi32>) -> !xla.token {
  %0 = "xla.send"(%x) {channel_handle = 5 : i64} : (tensor<2xi32>) -> !xla.token
  return %0 : !xla.token
}
