// RUN: xlair-opt %s -p xla-to-linalg | filecheck %s

// A custom call is a call of a host function declared for this call site; the site (target,
// operand and result shapes) is described in the module's xlair.host_calls.
// CHECK: module attributes {xlair.host_calls = [{{.*}}custom_call{{.*}}myfunc
// CHECK: func.func private @xlair_host.custom_call_0(tensor<2xf32>, tensor<2x3xf32>) -> tensor<3x3xf32>
// CHECK-LABEL: func.func @call
// CHECK: call @xlair_host.custom_call_0(%{{.*}}, %{{.*}}) : (tensor<2xf32>, tensor<2x3xf32>) -> tensor<3x3xf32>
// CHECK-NOT: xla.
func.func @call(%x: tensor<2xf32>, %y: tensor<2x3xf32>) -> tensor<3x3xf32> {
  %0 = "xla.custom_call"(%x, %y) {target_name = "myfunc", shape = tensor<3x3xf32>} : (tensor<2xf32>, tensor<2x3xf32>) -> tensor<3x3xf32>
  return %0 : tensor<3x3xf32>
}
