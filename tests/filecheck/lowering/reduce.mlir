// RUN: xlair-opt %s -p xla-to-iree-input | filecheck %s

// The computation becomes the body of linalg.reduce; the init value fills the accumulator.
// CHECK-LABEL: func.func @sum
// CHECK: linalg.fill
// CHECK: linalg.reduce { arith.addf } ins(%{{.*}} : tensor<3x4xf32>) outs(%{{.*}} : tensor<3xf32>) dimensions = [1]
// CHECK-NOT: xla.
func.func @sum(%a: tensor<3x4xf32>, %z: tensor<f32>) -> tensor<3xf32> {
  %r = "xla.reduce"(%a, %z) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %s = "xla.add"(%x, %y) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "xla.return"(%s) : (tensor<f32>) -> ()
  }) {dimensions = array<i64: 1>} : (tensor<3x4xf32>, tensor<f32>) -> tensor<3xf32>
  return %r : tensor<3xf32>
}

// A variadic reduce (argmax): one linalg.reduce over both operands, the body's compare and selects inline.
// CHECK-LABEL: func.func @argmax
// CHECK: linalg.reduce ins(%{{.*}}, %{{.*}} : tensor<5xf32>, tensor<5xi32>) outs(%{{.*}}, %{{.*}} : tensor<f32>, tensor<i32>) dimensions = [0]
// CHECK: arith.cmpf oge
// CHECK: arith.select
// CHECK: arith.select
// CHECK: linalg.yield
// CHECK-NOT: xla.
func.func @argmax(%v: tensor<5xf32>, %i: tensor<5xi32>, %v0: tensor<f32>, %i0: tensor<i32>) -> tuple<tensor<f32>, tensor<i32>> {
  %r = "xla.reduce"(%v, %i, %v0, %i0) ({
  ^bb0(%m: tensor<f32>, %mi: tensor<i32>, %x: tensor<f32>, %xi: tensor<i32>):
    %ge = "xla.ge"(%x, %m) : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %a = "xla.select"(%ge, %x, %m) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
    %b = "xla.select"(%ge, %xi, %mi) : (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>
    %t = "xla.tuple"(%a, %b) : (tensor<f32>, tensor<i32>) -> tuple<tensor<f32>, tensor<i32>>
    "xla.return"(%t) : (tuple<tensor<f32>, tensor<i32>>) -> ()
  }) {dimensions = array<i64: 0>} : (tensor<5xf32>, tensor<5xi32>, tensor<f32>, tensor<i32>) -> tuple<tensor<f32>, tensor<i32>>
  return %r : tuple<tensor<f32>, tensor<i32>>
}
