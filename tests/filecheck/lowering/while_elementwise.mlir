// RUN: xlair-opt %s -p 'xla-to-iree-input{target=cpu}' | filecheck %s

// On the CPU target an element-wise While (scalars and arrays of one shape, element-wise
// condition and body) runs per element: one linalg.generic whose body is an scf.while over
// scalars (lowering/loops.py).  The loops of the 4 elements run as one (loops.JAM): the
// generic's one point reads each element's row of the array, and the while carries the
// counter once and the 4 elements' values, each updated by its own copy of the body.  The
// rank-0 results come from that point, the array is put back together from its rows.
// CHECK-LABEL: func.func @main
// CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0, 1]] output_shape [4, 1]
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel"]{{.*}} ins(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : tensor<i32>, tensor<4x1xf32>, tensor<4x1xf32>, tensor<4x1xf32>, tensor<4x1xf32>) outs(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : tensor<1xi32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>)
// CHECK: scf.while (%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) : (i32, f32, f32, f32, f32) -> (i32, f32, f32, f32, f32)
// CHECK: arith.cmpi slt
// CHECK: scf.condition
// CHECK: } do {
// CHECK: arith.addi
// CHECK-COUNT-4: arith.addf
// CHECK: scf.yield
// CHECK: linalg.yield
// CHECK: tensor.extract %{{.*}}[%c0] : tensor<1xi32>
// CHECK-COUNT-4: tensor.insert_slice
// CHECK: tensor.collapse_shape
// CHECK-NOT: xla.
module {
func.func @main(%v: tensor<4xf32>) -> tuple<tensor<i32>, tensor<4xf32>> {
  %z = "xla.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  %init = "xla.tuple"(%z, %v) : (tensor<i32>, tensor<4xf32>) -> tuple<tensor<i32>, tensor<4xf32>>
  %r = "xla.while"(%init) ({
  ^bb0(%s: tuple<tensor<i32>, tensor<4xf32>>):
    %i = "xla.get_tuple_element"(%s) {index = 0 : i64} : (tuple<tensor<i32>, tensor<4xf32>>) -> tensor<i32>
    %n = "xla.constant"() {value = dense<10> : tensor<i32>} : () -> tensor<i32>
    %c = "xla.lt"(%i, %n) : (tensor<i32>, tensor<i32>) -> tensor<i1>
    "xla.return"(%c) : (tensor<i1>) -> ()
  }, {
  ^bb0(%s: tuple<tensor<i32>, tensor<4xf32>>):
    %i = "xla.get_tuple_element"(%s) {index = 0 : i64} : (tuple<tensor<i32>, tensor<4xf32>>) -> tensor<i32>
    %x = "xla.get_tuple_element"(%s) {index = 1 : i64} : (tuple<tensor<i32>, tensor<4xf32>>) -> tensor<4xf32>
    %one = "xla.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
    %i2 = "xla.add"(%i, %one) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %x2 = "xla.add"(%x, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %t = "xla.tuple"(%i2, %x2) : (tensor<i32>, tensor<4xf32>) -> tuple<tensor<i32>, tensor<4xf32>>
    "xla.return"(%t) : (tuple<tensor<i32>, tensor<4xf32>>) -> ()
  }) : (tuple<tensor<i32>, tensor<4xf32>>) -> tuple<tensor<i32>, tensor<4xf32>>
  return %r : tuple<tensor<i32>, tensor<4xf32>>
}
}
