// RUN: xlair-opt %s -p xla-to-linalg | filecheck %s

// CHECK: xlair.host_calls = [{{.*}}recv{{.*}}channel_handle\22: 5
// CHECK: func.func private @xlair_host.recv_0() -> tensor<2xi32>
// CHECK: call @xlair_host.recv_0() : () -> tensor<2xi32>
func.func @recv() -> tensor<2xi32> {
  %0 = "xla.recv"() {channel_handle = 5 : i64, shape = tensor<2xi32>} : () -> tensor<2xi32>
  return %0 : tensor<2xi32>
}
