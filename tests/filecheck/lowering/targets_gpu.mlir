// RUN: xlair-opt %s -p 'xla-to-linalg{target=cuda}' | filecheck %s --check-prefixes=GPU,CUDA
// RUN: xlair-opt %s -p 'xla-to-linalg{target=rocm}' | filecheck %s --check-prefixes=GPU,ROCM
// RUN: xlair-opt %s -p 'xla-to-linalg{target=cpu}' | filecheck %s --check-prefix=CPU
// RUN: xlair-opt %s -p 'xla-to-linalg{target=vulkan}' | filecheck %s --check-prefix=VULKAN

// The lowering for CUDA and ROCm: what their descriptions (lowering/targets.py) change against
// the CPU's.

// A sum reads a negation or a product with a constant from a dispatch of its own
// (reduction_barriers: IREE's CUDA / ROCm codegen fails on either fused into it); on CUDA other
// computed operands, and max and min reductions, stay fused; ROCm cuts every one ("all").
// GPU-LABEL: func.func @neg_sum
// GPU: arith.negf
// GPU: %[[CUT:.*]] = util.optimization_barrier
// GPU: linalg.reduce { arith.addf } ins(%[[CUT]] : tensor<8x64xf32>)
// CPU-LABEL: func.func @neg_sum
// CPU-NOT: util.optimization_barrier
// CPU: linalg.reduce
// GPU-LABEL: func.func @scaled_sum
// GPU: arith.mulf
// GPU: %[[CUT:.*]] = util.optimization_barrier
// GPU: linalg.reduce { arith.addf } ins(%[[CUT]] : tensor<8x64xf32>)
// GPU-LABEL: func.func @exp_sum_neg_max
// CUDA-NOT: util.optimization_barrier
// GPU: math.exp
// CUDA-NOT: util.optimization_barrier
// ROCM: util.optimization_barrier
// GPU: linalg.reduce { arith.addf }
// CUDA-NOT: util.optimization_barrier
// ROCM: util.optimization_barrier
// GPU: linalg.reduce { arith.maximumf }
// GPU: return

// A channels-last convolution with 8 output features: ROCm computes 16 (conv_feature_multiple:
// its implicit GEMM crashed in LLVM otherwise) and cuts the result back; CUDA keeps 8.
// GPU-LABEL: func.func @features
// CUDA-NOT: tensor<3x3x4x16xf32>
// CUDA: linalg.conv_2d_nhwc_hwcf {{.*}} outs(%{{.*}} : tensor<1x8x8x8xf32>)
// ROCM: tensor.pad %arg1 low[0, 0, 0, 0] high[0, 0, 0, 8]
// ROCM: linalg.conv_2d_nhwc_hwcf {{.*}} outs(%{{.*}} : tensor<1x8x8x16xf32>)
// ROCM: tensor.extract_slice %{{.*}}[0, 0, 0, 0] [1, 8, 8, 8] [1, 1, 1, 1]

// BF16 products summed in F32 (f32_accumulation), then rounded once to nearest even.
// GPU-LABEL: func.func @bf16_dot
// GPU: linalg.matmul ins(%arg0, %arg1 : tensor<4x8xbf16>, tensor<8x3xbf16>) outs(%{{.*}} : tensor<4x3xf32>)
// GPU: arith.bitcast %{{.*}} : f32 to i32
// GPU: arith.bitcast %{{.*}} : i16 to bf16
// Vulkan (bf16_matmul_widened: its SPIR-V matmul code cannot read or write BF16 buffers) widens
// each operand in a dispatch of its own, multiplies in F32, and rounds in a dispatch after.
// VULKAN-LABEL: func.func @bf16_dot
// VULKAN: arith.extf %{{.*}} : bf16 to f32
// VULKAN: %[[A:.*]] = util.optimization_barrier %{{.*}} : tensor<4x8xf32>
// VULKAN: arith.extf %{{.*}} : bf16 to f32
// VULKAN: %[[B:.*]] = util.optimization_barrier %{{.*}} : tensor<8x3xf32>
// VULKAN: %[[P:.*]] = linalg.matmul ins(%[[A]], %[[B]] : tensor<4x8xf32>, tensor<8x3xf32>)
// VULKAN: %[[Q:.*]] = util.optimization_barrier %[[P]] : tensor<4x3xf32>
// VULKAN: linalg.generic {{.*}} ins(%[[Q]] : tensor<4x3xf32>) outs(%{{.*}} : tensor<4x3xbf16>)

// An F32 product as three BF16 products summed in F32 (f32_products = bf16x3: tensor cores),
// each operand split into its high part, that part with infinities and NaNs as 0, and the
// rest; the small products first.  HIGHEST keeps F32.  The CPU computes in F32.
// GPU-LABEL: func.func @f32_dot
// GPU: %[[A:.*]]:3 = linalg.generic {{.*}} ins(%arg0 : tensor<4x8xf32>)
// GPU: %[[B:.*]]:3 = linalg.generic {{.*}} ins(%arg1 : tensor<8x3xf32>)
// GPU: %[[LO:.*]] = linalg.matmul ins(%[[A]]#2, %[[B]]#1 : tensor<4x8xbf16>, tensor<8x3xbf16>) outs(%{{.*}} : tensor<4x3xf32>)
// GPU: %[[MID:.*]] = linalg.matmul ins(%[[A]]#1, %[[B]]#2 : tensor<4x8xbf16>, tensor<8x3xbf16>) outs(%[[LO]] : tensor<4x3xf32>)
// GPU: linalg.matmul ins(%[[A]]#0, %[[B]]#0 : tensor<4x8xbf16>, tensor<8x3xbf16>) outs(%[[MID]] : tensor<4x3xf32>)
// GPU-LABEL: func.func @f32_dot_highest
// GPU-NOT: bf16
// GPU: linalg.matmul ins(%arg0, %arg1 : tensor<4x8xf32>, tensor<8x3xf32>)
// CPU-LABEL: func.func @f32_dot
// CPU-NOT: bf16
// CPU: linalg.matmul ins(%arg0, %arg1 : tensor<4x8xf32>, tensor<8x3xf32>)

// A DynamicSlice computes its clamped starts in the kernel (no host_slice_offsets): a
// linalg.generic reading the operand at start + index, not a tensor.extract_slice.
// GPU-LABEL: func.func @slice
// GPU-NOT: tensor.extract_slice
// GPU: linalg.generic
// GPU: tensor.extract %arg0[
// CPU-LABEL: func.func @slice
// CPU: tensor.extract_slice %arg0

// An element-wise tree reading 14 tensors: cut after 12 reads on CUDA and ROCm (max_reads of
// their 16 bindings a dispatch), whole on the CPU (32).
// GPU-LABEL: func.func @wide
// GPU-COUNT-11: linalg.generic
// GPU: util.optimization_barrier
// GPU-COUNT-2: linalg.generic
// GPU: return
// CPU-LABEL: func.func @wide
// CPU-NOT: util.optimization_barrier
// CPU: return

func.func @neg_sum(%a: tensor<8x64xf32>, %z: tensor<f32>) -> tensor<8xf32> {
  %n = "xla.neg"(%a) : (tensor<8x64xf32>) -> tensor<8x64xf32>
  %r = "xla.reduce"(%n, %z) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %s = "xla.add"(%x, %y) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "xla.return"(%s) : (tensor<f32>) -> ()
  }) {dimensions = array<i64: 1>} : (tensor<8x64xf32>, tensor<f32>) -> tensor<8xf32>
  return %r : tensor<8xf32>
}

func.func @scaled_sum(%a: tensor<8x64xf32>, %z: tensor<f32>) -> tensor<8xf32> {
  %c = "xla.constant"() {value = dense<2.5> : tensor<f32>} : () -> tensor<f32>
  %b = "xla.broadcast_in_dim"(%c) {broadcast_dimensions = array<i64>, out_dim_size = array<i64: 8, 64>} : (tensor<f32>) -> tensor<8x64xf32>
  %m = "xla.mul"(%a, %b) : (tensor<8x64xf32>, tensor<8x64xf32>) -> tensor<8x64xf32>
  %r = "xla.reduce"(%m, %z) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %s = "xla.add"(%x, %y) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "xla.return"(%s) : (tensor<f32>) -> ()
  }) {dimensions = array<i64: 1>} : (tensor<8x64xf32>, tensor<f32>) -> tensor<8xf32>
  return %r : tensor<8xf32>
}

func.func @exp_sum_neg_max(%a: tensor<8x64xf32>, %z: tensor<f32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %e = "xla.exp"(%a) : (tensor<8x64xf32>) -> tensor<8x64xf32>
  %r = "xla.reduce"(%e, %z) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %s = "xla.add"(%x, %y) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "xla.return"(%s) : (tensor<f32>) -> ()
  }) {dimensions = array<i64: 1>} : (tensor<8x64xf32>, tensor<f32>) -> tensor<8xf32>
  %n = "xla.neg"(%a) : (tensor<8x64xf32>) -> tensor<8x64xf32>
  %m = "xla.reduce"(%n, %z) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %s = "xla.max"(%x, %y) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "xla.return"(%s) : (tensor<f32>) -> ()
  }) {dimensions = array<i64: 1>} : (tensor<8x64xf32>, tensor<f32>) -> tensor<8xf32>
  return %r, %m : tensor<8xf32>, tensor<8xf32>
}

func.func @features(%arg0: tensor<1x8x8x4xf32>, %arg1: tensor<3x3x4x8xf32>) -> tensor<1x8x8x8xf32> {
  %0 = "xla.conv_general_dilated"(%arg0, %arg1) {batch_group_count = 1 : i64, dimension_numbers = {input_batch_dimension = 0 : i64, input_feature_dimension = 3 : i64, input_spatial_dimensions = array<i64: 1, 2>, kernel_input_feature_dimension = 2 : i64, kernel_output_feature_dimension = 3 : i64, kernel_spatial_dimensions = array<i64: 0, 1>, output_batch_dimension = 0 : i64, output_feature_dimension = 3 : i64, output_spatial_dimensions = array<i64: 1, 2>}, feature_group_count = 1 : i64, lhs_dilation = array<i64: 1, 1>, padding = "SAME", rhs_dilation = array<i64: 1, 1>, window_strides = array<i64: 1, 1>} : (tensor<1x8x8x4xf32>, tensor<3x3x4x8xf32>) -> tensor<1x8x8x8xf32>
  return %0 : tensor<1x8x8x8xf32>
}

func.func @bf16_dot(%a: tensor<4x8xbf16>, %b: tensor<8x3xbf16>) -> tensor<4x3xbf16> {
  %r = "xla.dot"(%a, %b) : (tensor<4x8xbf16>, tensor<8x3xbf16>) -> tensor<4x3xbf16>
  return %r : tensor<4x3xbf16>
}

func.func @f32_dot(%a: tensor<4x8xf32>, %b: tensor<8x3xf32>) -> tensor<4x3xf32> {
  %r = "xla.dot"(%a, %b) : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}

func.func @f32_dot_highest(%a: tensor<4x8xf32>, %b: tensor<8x3xf32>) -> tensor<4x3xf32> {
  %r = "xla.dot"(%a, %b) {precision_config = ["HIGHEST"]} : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}

func.func @slice(%a: tensor<4x3xf32>, %i: tensor<i32>, %j: tensor<i32>) -> tensor<2x2xf32> {
  %r = "xla.dynamic_slice"(%a, %i, %j) {size_indices = array<i64: 2, 2>} : (tensor<4x3xf32>, tensor<i32>, tensor<i32>) -> tensor<2x2xf32>
  return %r : tensor<2x2xf32>
}

func.func @wide(%a0: tensor<4xf32>, %a1: tensor<4xf32>, %a2: tensor<4xf32>, %a3: tensor<4xf32>, %a4: tensor<4xf32>, %a5: tensor<4xf32>, %a6: tensor<4xf32>, %a7: tensor<4xf32>, %a8: tensor<4xf32>, %a9: tensor<4xf32>, %a10: tensor<4xf32>, %a11: tensor<4xf32>, %a12: tensor<4xf32>, %a13: tensor<4xf32>) -> tensor<4xf32> {
  %s1 = "xla.add"(%a0, %a1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s2 = "xla.add"(%s1, %a2) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s3 = "xla.add"(%s2, %a3) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s4 = "xla.add"(%s3, %a4) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s5 = "xla.add"(%s4, %a5) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s6 = "xla.add"(%s5, %a6) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s7 = "xla.add"(%s6, %a7) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s8 = "xla.add"(%s7, %a8) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s9 = "xla.add"(%s8, %a9) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s10 = "xla.add"(%s9, %a10) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s11 = "xla.add"(%s10, %a11) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s12 = "xla.add"(%s11, %a12) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %s13 = "xla.add"(%s12, %a13) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %s13 : tensor<4xf32>
}
