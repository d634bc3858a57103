module @jit_convolution_matrix attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<1xcomplex<f32>>) -> (tensor<2x2xcomplex<f32>> {jax.result_info = "result"}) {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = call @_pad(%arg0, %c) : (tensor<1xcomplex<f32>>, tensor<i32>) -> tensor<2xcomplex<f32>>
    %1 = call @_flip(%arg0) : (tensor<1xcomplex<f32>>) -> tensor<1xcomplex<f32>>
    %2 = call @_pad(%1, %c) : (tensor<1xcomplex<f32>>, tensor<i32>) -> tensor<2xcomplex<f32>>
    %3 = stablehlo.slice %0 [0:2] : (tensor<2xcomplex<f32>>) -> tensor<2xcomplex<f32>>
    %4 = stablehlo.slice %2 [0:2] : (tensor<2xcomplex<f32>>) -> tensor<2xcomplex<f32>>
    %5 = call @atleast_1d(%3) : (tensor<2xcomplex<f32>>) -> tensor<2xcomplex<f32>>
    %6 = call @atleast_1d(%4) : (tensor<2xcomplex<f32>>) -> tensor<2xcomplex<f32>>
    %7 = stablehlo.reverse %5, dims = [0] : tensor<2xcomplex<f32>>
    %8 = stablehlo.slice %6 [1:2] : (tensor<2xcomplex<f32>>) -> tensor<1xcomplex<f32>>
    %9 = stablehlo.concatenate %7, %8, dim = 0 : (tensor<2xcomplex<f32>>, tensor<1xcomplex<f32>>) -> tensor<3xcomplex<f32>>
    %10 = stablehlo.reshape %9 : (tensor<3xcomplex<f32>>) -> tensor<1x3x1xcomplex<f32>>
    %11 = stablehlo.iota dim = 0 : tensor<2x2xi32>
    %12 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<2x2xi32>
    %13 = stablehlo.add %11, %12 : tensor<2x2xi32>
    %14 = stablehlo.iota dim = 1 : tensor<2x2xi32>
    %15 = stablehlo.compare EQ, %13, %14, SIGNED : (tensor<2x2xi32>, tensor<2x2xi32>) -> tensor<2x2xi1>
    %16 = stablehlo.convert %15 : (tensor<2x2xi1>) -> tensor<2x2xcomplex<f32>>
    %17 = stablehlo.broadcast_in_dim %16, dims = [1, 2] : (tensor<2x2xcomplex<f32>>) -> tensor<1x2x2xcomplex<f32>>
    %18 = stablehlo.reshape %17 : (tensor<1x2x2xcomplex<f32>>) -> tensor<2x1x2xcomplex<f32>>
    %19 = stablehlo.transpose %18, dims = [1, 0, 2] : (tensor<2x1x2xcomplex<f32>>) -> tensor<1x2x2xcomplex<f32>>
    %20 = stablehlo.convolution(%10, %19) dim_numbers = [b, 0, f]x[i, o, 0]->[b, 0, f], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64, precision_config = [#stablehlo<precision HIGHEST>, #stablehlo<precision DEFAULT>]} : (tensor<1x3x1xcomplex<f32>>, tensor<1x2x2xcomplex<f32>>) -> tensor<1x2x2xcomplex<f32>>
    %21 = stablehlo.reshape %20 : (tensor<1x2x2xcomplex<f32>>) -> tensor<2x2xcomplex<f32>>
    %22 = call @_flip_0(%21) : (tensor<2x2xcomplex<f32>>) -> tensor<2x2xcomplex<f32>>
    return %22 : tensor<2x2xcomplex<f32>>
  }
  func.func private @_pad(%arg0: tensor<1xcomplex<f32>>, %arg1: tensor<i32>) -> tensor<2xcomplex<f32>> {
    %0 = stablehlo.convert %arg1 : (tensor<i32>) -> tensor<complex<f32>>
    %1 = stablehlo.pad %arg0, %0, low = [0], high = [1], interior = [0] : (tensor<1xcomplex<f32>>, tensor<complex<f32>>) -> tensor<2xcomplex<f32>>
    return %1 : tensor<2xcomplex<f32>>
  }
  func.func private @_flip(%arg0: tensor<1xcomplex<f32>>) -> tensor<1xcomplex<f32>> {
    %0 = stablehlo.reverse %arg0, dims = [0] : tensor<1xcomplex<f32>>
    return %0 : tensor<1xcomplex<f32>>
  }
  func.func private @atleast_1d(%arg0: tensor<2xcomplex<f32>>) -> tensor<2xcomplex<f32>> {
    return %arg0 : tensor<2xcomplex<f32>>
  }
  func.func private @_flip_0(%arg0: tensor<2x2xcomplex<f32>>) -> tensor<2x2xcomplex<f32>> {
    %0 = stablehlo.reverse %arg0, dims = [0] : tensor<2x2xcomplex<f32>>
    return %0 : tensor<2x2xcomplex<f32>>
  }
}
