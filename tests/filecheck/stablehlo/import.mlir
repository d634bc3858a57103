// RUN: xlair-opt --import-stablehlo --split-input-file %s | filecheck %s

// A while loop whose body uses a value of the enclosing function: the value rides in the
// loop state (a tuple), the counter comes back as element 0; TOTALORDER compares become the
// *_total_order ops.

// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[N:.*]]: tensor<i32>) -> tensor<i32>
// CHECK: %[[INIT:.*]] = "xla.tuple"(%{{.*}}, %[[N]])
// CHECK: %[[W:.*]] = "xla.while"(%[[INIT]])
// CHECK: "xla.lt_total_order"
// CHECK: "xla.return"
// CHECK: "xla.add"
// CHECK: "xla.return"
// CHECK: %[[R:.*]] = "xla.get_tuple_element"(%[[W]]) {index = 0 : i64}
// CHECK-NEXT: return %[[R]]
func.func @main(%n: tensor<i32>) -> tensor<i32> {
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %r = stablehlo.while(%i = %c0) : tensor<i32>
    cond {
      %lt = stablehlo.compare LT, %i, %n, TOTALORDER : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %lt : tensor<i1>
    } do {
      %one = stablehlo.constant dense<1> : tensor<i32>
      %i2 = stablehlo.add %i, %one : tensor<i32>
      stablehlo.return %i2 : tensor<i32>
    }
  return %r : tensor<i32>
}

// -----

// Several results become a tuple; a complex constant is made of its parts.

// CHECK-LABEL: func.func @main
// CHECK-SAME: -> tuple<tensor<2xf32>, tensor<complex<f32>>>
// CHECK: "xla.sin"
// CHECK: "xla.complex"
// CHECK: "xla.tuple"
func.func @main(%a: tensor<2xf32>) -> (tensor<2xf32>, tensor<complex<f32>>) {
  %0 = stablehlo.sine %a : tensor<2xf32>
  %1 = stablehlo.constant dense<(1.0, -2.0)> : tensor<complex<f32>>
  return %0, %1 : tensor<2xf32>, tensor<complex<f32>>
}
