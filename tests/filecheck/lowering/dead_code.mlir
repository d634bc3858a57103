// RUN: xlair-opt %s -p xla-simplify | filecheck %s

// xla-simplify drops what nothing reads when it has no effect: a While computing a value no one
// reads (JAX's LU pivot loop behind lu_factor / det), and the ops feeding it.
// CHECK-LABEL: func.func @dead_loop
// CHECK-NOT: xla.while
// CHECK-NOT: xla.add
// CHECK: return %arg0
func.func @dead_loop(%a: tensor<4xf32>, %n: tensor<i32>) -> tensor<4xf32> {
  %s = "xla.add"(%a, %a) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %w = "xla.while"(%n) ({
  ^bb0(%i: tensor<i32>):
    %z = "xla.constant"() {value = dense<10> : tensor<i32>} : () -> tensor<i32>
    %c = "xla.lt"(%i, %z) : (tensor<i32>, tensor<i32>) -> tensor<i1>
    "xla.return"(%c) : (tensor<i1>) -> ()
  }, {
  ^bb0(%i: tensor<i32>):
    %one = "xla.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
    %j = "xla.add"(%i, %one) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    "xla.return"(%j) : (tensor<i32>) -> ()
  }) : (tensor<i32>) -> tensor<i32>
  return %a : tensor<4xf32>
}

// Kept: the loop's body calls a host target (an effect), even though its result is unread;
// and a custom call is always kept.
// CHECK-LABEL: func.func @effects_kept
// CHECK: xla.while
// CHECK: xla.custom_call
// CHECK: xla.custom_call
func.func @effects_kept(%a: tensor<4xf32>, %n: tensor<i32>) -> tensor<4xf32> {
  %w = "xla.while"(%n) ({
  ^bb0(%i: tensor<i32>):
    %z = "xla.constant"() {value = dense<10> : tensor<i32>} : () -> tensor<i32>
    %c = "xla.lt"(%i, %z) : (tensor<i32>, tensor<i32>) -> tensor<i1>
    "xla.return"(%c) : (tensor<i1>) -> ()
  }, {
  ^bb0(%i: tensor<i32>):
    %p = "xla.custom_call"(%i) {opaque = "", shape = tensor<i32>, target_name = "print_it"} : (tensor<i32>) -> tensor<i32>
    "xla.return"(%p) : (tensor<i32>) -> ()
  }) : (tensor<i32>) -> tensor<i32>
  %u = "xla.custom_call"(%a) {opaque = "", shape = tensor<4xf32>, target_name = "print_it"} : (tensor<4xf32>) -> tensor<4xf32>
  return %a : tensor<4xf32>
}
