// RUN: xlair-opt %s -p xla-to-linalg | filecheck %s

// Branches doing more work than SELECT_MAX_WORK (lowering/control_flow.py) together.
// PRED: scf.if, the true computation first.
// CHECK-LABEL: func.func @pred
// CHECK: scf.if %{{.*}} -> (tensor<4096xf32>)
// CHECK: arith.negf
// CHECK: } else {
// CHECK: arith.addf
func.func @pred(%p: tensor<i1>, %x: tensor<4096xf32>) -> tensor<4096xf32> {
  %r = "xla.conditional"(%p, %x, %x) ({
  ^bb0(%a: tensor<4096xf32>):
    %n = "xla.neg"(%a) : (tensor<4096xf32>) -> tensor<4096xf32>
    "xla.return"(%n) : (tensor<4096xf32>) -> ()
  }, {
  ^bb0(%a: tensor<4096xf32>):
    %n = "xla.add"(%a, %a) : (tensor<4096xf32>, tensor<4096xf32>) -> tensor<4096xf32>
    "xla.return"(%n) : (tensor<4096xf32>) -> ()
  }) : (tensor<i1>, tensor<4096xf32>, tensor<4096xf32>) -> tensor<4096xf32>
  return %r : tensor<4096xf32>
}
// S32: a chain of scf.if on index == k; the last branch also takes out-of-range indices.
// CHECK-LABEL: func.func @index
// CHECK: arith.cmpi eq, %{{.*}}, %c0_i32
// CHECK: scf.if
// CHECK: arith.negf
// CHECK: } else {
// CHECK: arith.cmpi eq, %{{.*}}, %c1_i32
// CHECK: scf.if
// CHECK: arith.addf
// CHECK: } else {
// CHECK: arith.mulf
// CHECK-NOT: xla.
func.func @index(%i: tensor<i32>, %x: tensor<4096xf32>) -> tensor<4096xf32> {
  %r = "xla.conditional"(%i, %x, %x, %x) ({
  ^bb0(%a: tensor<4096xf32>):
    %n = "xla.neg"(%a) : (tensor<4096xf32>) -> tensor<4096xf32>
    "xla.return"(%n) : (tensor<4096xf32>) -> ()
  }, {
  ^bb0(%a: tensor<4096xf32>):
    %n = "xla.add"(%a, %a) : (tensor<4096xf32>, tensor<4096xf32>) -> tensor<4096xf32>
    "xla.return"(%n) : (tensor<4096xf32>) -> ()
  }, {
  ^bb0(%a: tensor<4096xf32>):
    %n = "xla.mul"(%a, %a) : (tensor<4096xf32>, tensor<4096xf32>) -> tensor<4096xf32>
    "xla.return"(%n) : (tensor<4096xf32>) -> ()
  }) : (tensor<i32>, tensor<4096xf32>, tensor<4096xf32>, tensor<4096xf32>) -> tensor<4096xf32>
  return %r : tensor<4096xf32>
}

// Small branches without effects or loops: every branch computed, the results selected
// element-wise by the branch index (no branch on the host).
// CHECK-LABEL: func.func @select_pred
// CHECK-NOT: scf.if
// CHECK: arith.negf
// CHECK: arith.addf
// CHECK: linalg.generic
// CHECK: arith.select
func.func @select_pred(%p: tensor<i1>, %x: tensor<2xf32>) -> tensor<2xf32> {
  %r = "xla.conditional"(%p, %x, %x) ({
  ^bb0(%a: tensor<2xf32>):
    %n = "xla.neg"(%a) : (tensor<2xf32>) -> tensor<2xf32>
    "xla.return"(%n) : (tensor<2xf32>) -> ()
  }, {
  ^bb0(%a: tensor<2xf32>):
    %n = "xla.add"(%a, %a) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    "xla.return"(%n) : (tensor<2xf32>) -> ()
  }) : (tensor<i1>, tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %r : tensor<2xf32>
}
// S32: index 0 and 1 pick their branch, any other index the last one.
// CHECK-LABEL: func.func @select_index
// CHECK-NOT: scf.if
// CHECK: linalg.generic
// CHECK: arith.cmpi eq, %{{.*}}, %c1_i32
// CHECK: arith.select
// CHECK: arith.cmpi eq, %{{.*}}, %c0_i32
// CHECK: arith.select
func.func @select_index(%i: tensor<i32>, %x: tensor<2xf32>) -> tensor<2xf32> {
  %r = "xla.conditional"(%i, %x, %x, %x) ({
  ^bb0(%a: tensor<2xf32>):
    %n = "xla.neg"(%a) : (tensor<2xf32>) -> tensor<2xf32>
    "xla.return"(%n) : (tensor<2xf32>) -> ()
  }, {
  ^bb0(%a: tensor<2xf32>):
    %n = "xla.add"(%a, %a) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    "xla.return"(%n) : (tensor<2xf32>) -> ()
  }, {
  ^bb0(%a: tensor<2xf32>):
    %n = "xla.mul"(%a, %a) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    "xla.return"(%n) : (tensor<2xf32>) -> ()
  }) : (tensor<i32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %r : tensor<2xf32>
}
