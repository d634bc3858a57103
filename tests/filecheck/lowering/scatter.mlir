// RUN: xlair-opt %s -p xla-to-iree-input | filecheck %s

// Row updates: the operand gets a scratch row (a linalg.generic reading it, zero past its 10
// rows: not tensor.pad, which IREE made a copy onto itself), indices become i64 and any start
// out of [0, 10 - 1] is sent to the scratch row; IREE's iree_linalg_ext.scatter applies the
// updates (region order: update, current - the computation gets current first); the scratch
// row is cut off.
// CHECK-LABEL: func.func @rows
// CHECK-NOT: tensor.pad
// CHECK: %[[P:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<11x4xf32>)
// CHECK: %[[IN:.*]] = arith.cmpi ult, %{{.*}}, %c10 : index
// CHECK: %[[V:.*]] = tensor.extract %arg0[
// CHECK: arith.select %[[IN]], %[[V]], %cst : f32
// CHECK: %[[IDX:.*]] = linalg.generic
// CHECK: %[[I:.*]] = arith.extsi %{{.*}} : i32 to i64
// CHECK: %[[OK:.*]] = arith.cmpi ule, %[[I]], %c9_i64 : i64
// CHECK: arith.select %[[OK]], %[[I]], %c10_i64 : i64
// CHECK: %[[S:.*]] = iree_linalg_ext.scatter dimension_map = [0] unique_indices(false) ins(%arg2, %[[IDX]] : tensor<3x4xf32>, tensor<3x1xi64>) outs(%[[P]] : tensor<11x4xf32>)
// CHECK: ^bb0(%[[U:.*]]: f32, %[[CUR:.*]]: f32):
// CHECK: arith.subf %[[CUR]], %[[U]] : f32
// CHECK: tensor.extract_slice %[[S]][0, 0] [10, 4] [1, 1] : tensor<11x4xf32> to tensor<10x4xf32>
// CHECK-NOT: xla.
func.func @rows(%arg0: tensor<10x4xf32>, %arg1: tensor<3x1xi32>, %arg2: tensor<3x4xf32>) -> tensor<10x4xf32> {
  %0 = "xla.scatter"(%arg0, %arg1, %arg2) ({
  ^bb0(%arg3: tensor<f32>, %arg4: tensor<f32>):
    %1 = "xla.sub"(%arg3, %arg4) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "xla.return"(%1) : (tensor<f32>) -> ()
  }) {dimension_numbers = {index_vector_dim = 1 : i64, inserted_window_dims = array<i64: 0>, scatter_dims_to_operand_dims = array<i64: 0>, update_window_dims = array<i64: 1>}, operandSegmentSizes = array<i32: 1, 1, 1>} : (tensor<10x4xf32>, tensor<3x1xi32>, tensor<3x4xf32>) -> tensor<10x4xf32>
  return %0 : tensor<10x4xf32>
}

// Two operands whose computation couples them (an argmax): no iree_linalg_ext form; one
// linalg.generic over the operand with the updates as a reduction loop, both results at once.
// CHECK-LABEL: func.func @coupled
// CHECK-NOT: iree_linalg_ext.scatter
// CHECK: %{{.*}}:2 = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]{{.*}} outs(%arg0, %arg1 : tensor<6xf32>, tensor<6xi32>)
// CHECK: arith.cmpf ogt
func.func @coupled(%arg0: tensor<6xf32>, %arg1: tensor<6xi32>, %arg2: tensor<5x1xi32>, %arg3: tensor<5xf32>, %arg4: tensor<5xi32>) -> tuple<tensor<6xf32>, tensor<6xi32>> {
  %0 = "xla.scatter"(%arg0, %arg1, %arg2, %arg3, %arg4) ({
  ^bb0(%a: tensor<f32>, %ai: tensor<i32>, %v: tensor<f32>, %vi: tensor<i32>):
    %t = "xla.gt"(%v, %a) : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %x = "xla.select"(%t, %v, %a) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
    %y = "xla.select"(%t, %vi, %ai) : (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>
    %r = "xla.tuple"(%x, %y) : (tensor<f32>, tensor<i32>) -> tuple<tensor<f32>, tensor<i32>>
    "xla.return"(%r) : (tuple<tensor<f32>, tensor<i32>>) -> ()
  }) {dimension_numbers = {index_vector_dim = 1 : i64, inserted_window_dims = array<i64: 0>, scatter_dims_to_operand_dims = array<i64: 0>, update_window_dims = array<i64>}, operandSegmentSizes = array<i32: 2, 1, 2>} : (tensor<6xf32>, tensor<6xi32>, tensor<5x1xi32>, tensor<5xf32>, tensor<5xi32>) -> tuple<tensor<6xf32>, tensor<6xi32>>
  return %0 : tuple<tensor<6xf32>, tensor<6xi32>>
}
