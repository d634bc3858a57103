// RUN: xlair-opt %s -p xla-to-linalg | filecheck %s

// A length-16 FFT: planar re/im (an F32 transform computed in F64 on the CPU, rounded once),
// one transpose into digit-reversed order (16 = 8 x 2), then one contraction generic per radix
// stage against constant twiddle tables, joined back to complex.
// CHECK-LABEL: func.func @fft
// CHECK: complex.re
// CHECK: complex.im
// CHECK: arith.extf %{{.*}} : f32 to f64
// CHECK: linalg.transpose ins(%{{.*}} : tensor<2x2x8x1xf64>) outs(%{{.*}} : tensor<2x8x2x1xf64>) permutation = [0, 2, 1, 3]
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : tensor<2x8x2x1x1xf64>, tensor<2x8x2x1x1xf64>, tensor<2x2x1xf64>, tensor<2x2x1xf64>)
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : tensor<2x1x8x2x1xf64>, tensor<2x1x8x2x1xf64>, tensor<8x8x2xf64>, tensor<8x8x2xf64>)
// CHECK: arith.truncf %{{.*}} : f64 to f32
// CHECK: complex.create
// CHECK-NOT: xla.
func.func @fft(%a: tensor<2x16xcomplex<f32>>) -> tensor<2x16xcomplex<f32>> {
  %r = "xla.fft"(%a) {fft_type = "FFT", fft_length = array<i64: 16>} : (tensor<2x16xcomplex<f32>>) -> tensor<2x16xcomplex<f32>>
  return %r : tensor<2x16xcomplex<f32>>
}

// RFFT of length 6 (3 x 2 stages) keeps the first 6 // 2 + 1 = 4 outputs.
// CHECK-LABEL: func.func @rfft
// CHECK: linalg.transpose ins(%{{.*}} : tensor<1x3x2x1xf64>)
// CHECK-COUNT-2: "reduction"]
// CHECK: tensor.extract_slice %{{.*}}[0] [4] [1] : tensor<6xf64> to tensor<4xf64>
// CHECK: complex.create
// CHECK-NOT: xla.
func.func @rfft(%a: tensor<6xf64>) -> tensor<4xcomplex<f64>> {
  %r = "xla.fft"(%a) {fft_type = "RFFT", fft_length = array<i64: 6>} : (tensor<6xf64>) -> tensor<4xcomplex<f64>>
  return %r : tensor<4xcomplex<f64>>
}

// IRFFT of length 8: the conjugate half X[5..7] = conj(X[3..1]) is read through tensor.extract at
// 3 - k, the inverse transform keeps the real part.
// CHECK-LABEL: func.func @irfft
// CHECK: arith.subi %c3, %{{.*}} : index
// CHECK: tensor.extract
// CHECK: arith.negf
// CHECK: tensor.insert_slice %{{.*}} into %{{.*}}[0, 5] [3, 3] [1, 1] : tensor<3x3xf64> into tensor<3x8xf64>
// CHECK: arith.truncf
// CHECK: return %{{.*}} : tensor<3x8xf32>
// CHECK-NOT: xla.
func.func @irfft(%a: tensor<3x5xcomplex<f32>>) -> tensor<3x8xf32> {
  %r = "xla.fft"(%a) {fft_type = "IRFFT", fft_length = array<i64: 8>} : (tensor<3x5xcomplex<f32>>) -> tensor<3x8xf32>
  return %r : tensor<3x8xf32>
}

// A prime length above 64 (67) uses Bluestein: chirp, a power-of-two FFT of 256 (radices 8, 8, 4),
// the pointwise product with the transformed chirp, the inverse FFT, the chirp again.
// CHECK-LABEL: func.func @bluestein
// CHECK: tensor.insert_slice %{{.*}} into %{{.*}}[0, 0, 0] [1, 67, 1] [1, 1, 1] : tensor<1x67x1xf64> into tensor<1x256x1xf64>
// CHECK-COUNT-6: "reduction"]
// CHECK: tensor.extract_slice %{{.*}}[0, 0, 0] [1, 67, 1] [1, 1, 1] : tensor<1x256x1xf64> to tensor<1x67x1xf64>
// CHECK-NOT: xla.
func.func @bluestein(%a: tensor<67xcomplex<f32>>) -> tensor<67xcomplex<f32>> {
  %r = "xla.fft"(%a) {fft_type = "IFFT", fft_length = array<i64: 67>} : (tensor<67xcomplex<f32>>) -> tensor<67xcomplex<f32>>
  return %r : tensor<67xcomplex<f32>>
}
