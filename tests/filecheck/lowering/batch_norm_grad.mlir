// RUN: xlair-opt %s -p xla-to-iree-input | filecheck %s

// One reduction generic with two outputs (sum of grad_output, sum of grad_output * (x - mean)),
// then grad_operand element-wise and grad_scale per feature; grad_offset is the first sum.
// CHECK-LABEL: func.func @grad
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%{{.*}}, %{{.*}}, %{{.*}} : tensor<5x3xf32>, tensor<5x3xf32>, tensor<5xf32>) outs(%{{.*}}, %{{.*}} : tensor<5xf32>, tensor<5xf32>)
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]}
// CHECK: math.sqrt
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel"]}
// CHECK-NOT: xla.
func.func @grad(%x: tensor<5x3xf32>, %g: tensor<5xf32>, %m: tensor<5xf32>, %v: tensor<5xf32>, %dy: tensor<5x3xf32>) -> tuple<tensor<5x3xf32>, tensor<5xf32>, tensor<5xf32>> {
  %r = "xla.batch_norm_grad"(%x, %g, %m, %v, %dy) {epsilon = 1.0e-3 : f64, feature_index = 0 : i64} : (tensor<5x3xf32>, tensor<5xf32>, tensor<5xf32>, tensor<5xf32>, tensor<5x3xf32>) -> tuple<tensor<5x3xf32>, tensor<5xf32>, tensor<5xf32>>
  return %r : tuple<tensor<5x3xf32>, tensor<5xf32>, tensor<5xf32>>
}
