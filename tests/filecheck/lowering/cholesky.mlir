// RUN: xlair-opt %s -p xla-to-linalg | filecheck %s

// CHECK: #[[T:.+]] = affine_map<(d0, d1, d2) -> (d0, d2, d1)>

// One block: the lower triangle is read (the upper one zeroed), then one scf.for of column
// steps, each a single linalg.generic over the batch of matrices.
// CHECK-LABEL: func.func @lower
// CHECK: linalg.generic
// CHECK: arith.cmpi uge
// CHECK: arith.select
// CHECK: scf.for %{{.*}} = %c0 to %c4 step %c1 iter_args(%{{.*}} = %{{.*}}) -> (tensor<2x4x4xf32>)
// CHECK: tensor.extract_slice %{{.*}}[0, 0, %{{.*}}] [2, 4, 1] [1, 1, 1] : tensor<2x4x4xf32> to tensor<2x4xf32>
// CHECK: linalg.generic
// CHECK: math.sqrt
// CHECK: scf.yield
// CHECK-NOT: xla.
func.func @lower(%a: tensor<2x4x4xf32>) -> tensor<2x4x4xf32> {
  %r = "xla.cholesky"(%a) {lower = true} : (tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  return %r : tensor<2x4x4xf32>
}

// lower = false reads the upper triangle through a transposed map and returns the adjoint.
// CHECK-LABEL: func.func @upper
// CHECK: linalg.generic {indexing_maps = [#[[T]], #{{.*}}]{{.*}} ins(%{{.*}} : tensor<1x3x3xf64>)
// CHECK: scf.for
// CHECK: linalg.generic {indexing_maps = [#[[T]], #{{.*}}]
// CHECK-NOT: xla.
func.func @upper(%a: tensor<3x3xf64>) -> tensor<3x3xf64> {
  %r = "xla.cholesky"(%a) {lower = false} : (tensor<3x3xf64>) -> tensor<3x3xf64>
  return %r : tensor<3x3xf64>
}

// Past one block (64 columns) the next block column is updated by a matmul with the columns
// already factored, then factored by its own scf.for.
// CHECK-LABEL: func.func @blocked
// CHECK: scf.for %{{.*}} = %c0 to %c64
// CHECK: linalg.batch_matmul ins(%{{.*}}, %{{.*}} : tensor<1x6x64xf32>, tensor<1x64x6xf32>)
// CHECK: scf.for %{{.*}} = %c0 to %c6
// CHECK-NOT: xla.
func.func @blocked(%a: tensor<70x70xf32>) -> tensor<70x70xf32> {
  %r = "xla.cholesky"(%a) {lower = true} : (tensor<70x70xf32>) -> tensor<70x70xf32>
  return %r : tensor<70x70xf32>
}
