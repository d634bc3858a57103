// RUN: xlair-opt %s -p xla-to-linalg | filecheck %s

// PRED: scf.if, the true computation first.
// CHECK-LABEL: func.func @pred
// CHECK: scf.if %{{.*}} -> (tensor<f32>)
// CHECK: arith.negf
// CHECK: } else {
// CHECK: arith.addf
func.func @pred(%p: tensor<i1>, %x: tensor<f32>) -> tensor<f32> {
  %r = "xla.conditional"(%p, %x, %x) ({
  ^bb0(%a: tensor<f32>):
    %n = "xla.neg"(%a) : (tensor<f32>) -> tensor<f32>
    "xla.return"(%n) : (tensor<f32>) -> ()
  }, {
  ^bb0(%a: tensor<f32>):
    %n = "xla.add"(%a, %a) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "xla.return"(%n) : (tensor<f32>) -> ()
  }) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
  return %r : tensor<f32>
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
func.func @index(%i: tensor<i32>, %x: tensor<f32>) -> tensor<f32> {
  %r = "xla.conditional"(%i, %x, %x, %x) ({
  ^bb0(%a: tensor<f32>):
    %n = "xla.neg"(%a) : (tensor<f32>) -> tensor<f32>
    "xla.return"(%n) : (tensor<f32>) -> ()
  }, {
  ^bb0(%a: tensor<f32>):
    %n = "xla.add"(%a, %a) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "xla.return"(%n) : (tensor<f32>) -> ()
  }, {
  ^bb0(%a: tensor<f32>):
    %n = "xla.mul"(%a, %a) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "xla.return"(%n) : (tensor<f32>) -> ()
  }) : (tensor<i32>, tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<f32>
  return %r : tensor<f32>
}
