// RUN: xlair-opt %s -p xla-to-linalg | filecheck %s

// Left side, lower: the factor is read from the lower triangle, the diagonal blocks are inverted
// by an scf.for of row steps (all blocks and batches at once), the solution of each block row is
// one matmul with that inverse.
// CHECK-LABEL: func.func @left_lower
// CHECK: tensor.extract
// CHECK: arith.cmpi uge
// CHECK: scf.for %{{.*}} = %c0 to %c4 step %c1 iter_args(%{{.*}} = %{{.*}}) -> (tensor<2x1x4x4xf32>)
// CHECK: linalg.batch_matmul ins(%{{.*}}, %{{.*}} : tensor<2x4x4xf32>, tensor<2x4x3xf32>)
// CHECK-NOT: xla.
func.func @left_lower(%a: tensor<2x4x4xf32>, %b: tensor<2x4x3xf32>) -> tensor<2x4x3xf32> {
  %r = "xla.triangular_solve"(%a, %b) {left_side = true, lower = true, unit_diagonal = false, transpose_a = "NO_TRANSPOSE"} : (tensor<2x4x4xf32>, tensor<2x4x3xf32>) -> tensor<2x4x3xf32>
  return %r : tensor<2x4x3xf32>
}

// Right side with an upper factor and TRANSPOSE is x a^T = b, i.e. a x^T = b^T: rows and
// columns reversed to a lower factor (read through tensor.extract at 3 - i), unit diagonal set.
// CHECK-LABEL: func.func @right_upper_transpose
// CHECK: arith.subi %c3, %{{.*}} : index
// CHECK: tensor.extract %{{.*}} : tensor<1x4x4xf64>
// CHECK: arith.select %{{.*}}, %cst{{.*}}, %{{.*}} : f64
// CHECK: scf.for
// CHECK: linalg.batch_matmul
// CHECK-NOT: xla.
func.func @right_upper_transpose(%a: tensor<4x4xf64>, %b: tensor<5x4xf64>) -> tensor<5x4xf64> {
  %r = "xla.triangular_solve"(%a, %b) {left_side = false, lower = false, unit_diagonal = true, transpose_a = "TRANSPOSE"} : (tensor<4x4xf64>, tensor<5x4xf64>) -> tensor<5x4xf64>
  return %r : tensor<5x4xf64>
}

// Past one block (64 rows): the block row's right-hand side is updated by a matmul with the
// rows already solved; the smaller last diagonal block has its own inversion loop.
// CHECK-LABEL: func.func @blocked
// CHECK: scf.for %{{.*}} = %c0 to %c64
// CHECK: scf.for %{{.*}} = %c0 to %c6
// CHECK: linalg.batch_matmul ins(%{{.*}}, %{{.*}} : tensor<1x64x64xf32>, tensor<1x64x2xf32>)
// CHECK: linalg.batch_matmul ins(%{{.*}}, %{{.*}} : tensor<1x6x64xf32>, tensor<1x64x2xf32>)
// CHECK: linalg.batch_matmul ins(%{{.*}}, %{{.*}} : tensor<1x6x6xf32>, tensor<1x6x2xf32>)
// CHECK-NOT: xla.
func.func @blocked(%a: tensor<70x70xf32>, %b: tensor<70x2xf32>) -> tensor<70x2xf32> {
  %r = "xla.triangular_solve"(%a, %b) {left_side = true, lower = true, unit_diagonal = false, transpose_a = "ADJOINT"} : (tensor<70x70xf32>, tensor<70x2xf32>) -> tensor<70x2xf32>
  return %r : tensor<70x2xf32>
}
