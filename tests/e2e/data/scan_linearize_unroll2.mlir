module @jit_scan attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4xf32>, %arg1: tensor<5x3xf32>) -> (tensor<4xf32> {jax.result_info = ""}, tensor<5xf32> {jax.result_info = ""}, tensor<5x3xf32> {jax.result_info = ""}, tensor<5x4xf32> {jax.result_info = ""}, tensor<5xf32> {jax.result_info = ""}, tensor<5xf32> {jax.result_info = ""}, tensor<5x4xf32> {jax.result_info = ""}, tensor<5x4xf32> {jax.result_info = ""}) {
    %c = stablehlo.constant dense<1> : tensor<i32>
    %c_0 = stablehlo.constant dense<2> : tensor<i32>
    %c_1 = stablehlo.constant dense<0> : tensor<i32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = call @f() : () -> tensor<f32>
    %1 = stablehlo.slice %arg1 [0:4, 0:3] : (tensor<5x3xf32>) -> tensor<4x3xf32>
    %2 = stablehlo.slice %arg1 [4:5, 0:3] : (tensor<5x3xf32>) -> tensor<1x3xf32>
    %3 = stablehlo.reshape %1 : (tensor<4x3xf32>) -> tensor<2x2x3xf32>
    %4 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<2x2xf32>
    %5 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<2x2x3xf32>
    %6 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<2x2x4xf32>
    %7 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<2x2xf32>
    %8 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<2x2xf32>
    %9 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<2x2x4xf32>
    %10 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<2x2x4xf32>
    %11:11 = stablehlo.while(%iterArg = %3, %iterArg_2 = %0, %iterArg_3 = %c_1, %iterArg_4 = %arg0, %iterArg_5 = %4, %iterArg_6 = %5, %iterArg_7 = %6, %iterArg_8 = %7, %iterArg_9 = %8, %iterArg_10 = %9, %iterArg_11 = %10) : tensor<2x2x3xf32>, tensor<f32>, tensor<i32>, tensor<4xf32>, tensor<2x2xf32>, tensor<2x2x3xf32>, tensor<2x2x4xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2x4xf32>, tensor<2x2x4xf32>
    cond {
      %36 = stablehlo.compare LT, %iterArg_3, %c_0, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %36 : tensor<i1>
    } do {
      %36 = func.call @dynamic_index_in_dim(%iterArg, %iterArg_3) : (tensor<2x2x3xf32>, tensor<i32>) -> tensor<2x3xf32>
      %37 = stablehlo.slice %36 [0:1, 0:3] : (tensor<2x3xf32>) -> tensor<1x3xf32>
      %38 = stablehlo.reshape %37 : (tensor<1x3xf32>) -> tensor<3xf32>
      %39:8 = func.call @closed_call(%iterArg_2, %iterArg_4, %38) : (tensor<f32>, tensor<4xf32>, tensor<3xf32>) -> (tensor<4xf32>, tensor<f32>, tensor<3xf32>, tensor<4xf32>, tensor<f32>, tensor<f32>, tensor<4xf32>, tensor<4xf32>)
      %40 = stablehlo.slice %36 [1:2, 0:3] : (tensor<2x3xf32>) -> tensor<1x3xf32>
      %41 = stablehlo.reshape %40 : (tensor<1x3xf32>) -> tensor<3xf32>
      %42:8 = func.call @closed_call(%iterArg_2, %39#0, %41) : (tensor<f32>, tensor<4xf32>, tensor<3xf32>) -> (tensor<4xf32>, tensor<f32>, tensor<3xf32>, tensor<4xf32>, tensor<f32>, tensor<f32>, tensor<4xf32>, tensor<4xf32>)
      %43 = stablehlo.broadcast_in_dim %39#1, dims = [] : (tensor<f32>) -> tensor<1xf32>
      %44 = stablehlo.broadcast_in_dim %42#1, dims = [] : (tensor<f32>) -> tensor<1xf32>
      %45 = stablehlo.concatenate %43, %44, dim = 0 : (tensor<1xf32>, tensor<1xf32>) -> tensor<2xf32>
      %46 = stablehlo.broadcast_in_dim %39#2, dims = [1] : (tensor<3xf32>) -> tensor<1x3xf32>
      %47 = stablehlo.broadcast_in_dim %42#2, dims = [1] : (tensor<3xf32>) -> tensor<1x3xf32>
      %48 = stablehlo.concatenate %46, %47, dim = 0 : (tensor<1x3xf32>, tensor<1x3xf32>) -> tensor<2x3xf32>
      %49 = stablehlo.broadcast_in_dim %39#3, dims = [1] : (tensor<4xf32>) -> tensor<1x4xf32>
      %50 = stablehlo.broadcast_in_dim %42#3, dims = [1] : (tensor<4xf32>) -> tensor<1x4xf32>
      %51 = stablehlo.concatenate %49, %50, dim = 0 : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<2x4xf32>
      %52 = stablehlo.broadcast_in_dim %39#4, dims = [] : (tensor<f32>) -> tensor<1xf32>
      %53 = stablehlo.broadcast_in_dim %42#4, dims = [] : (tensor<f32>) -> tensor<1xf32>
      %54 = stablehlo.concatenate %52, %53, dim = 0 : (tensor<1xf32>, tensor<1xf32>) -> tensor<2xf32>
      %55 = stablehlo.broadcast_in_dim %39#5, dims = [] : (tensor<f32>) -> tensor<1xf32>
      %56 = stablehlo.broadcast_in_dim %42#5, dims = [] : (tensor<f32>) -> tensor<1xf32>
      %57 = stablehlo.concatenate %55, %56, dim = 0 : (tensor<1xf32>, tensor<1xf32>) -> tensor<2xf32>
      %58 = stablehlo.broadcast_in_dim %39#6, dims = [1] : (tensor<4xf32>) -> tensor<1x4xf32>
      %59 = stablehlo.broadcast_in_dim %42#6, dims = [1] : (tensor<4xf32>) -> tensor<1x4xf32>
      %60 = stablehlo.concatenate %58, %59, dim = 0 : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<2x4xf32>
      %61 = stablehlo.broadcast_in_dim %39#7, dims = [1] : (tensor<4xf32>) -> tensor<1x4xf32>
      %62 = stablehlo.broadcast_in_dim %42#7, dims = [1] : (tensor<4xf32>) -> tensor<1x4xf32>
      %63 = stablehlo.concatenate %61, %62, dim = 0 : (tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<2x4xf32>
      %64 = func.call @dynamic_update_index_in_dim(%iterArg_5, %45, %iterArg_3) : (tensor<2x2xf32>, tensor<2xf32>, tensor<i32>) -> tensor<2x2xf32>
      %65 = func.call @dynamic_update_index_in_dim_1(%iterArg_6, %48, %iterArg_3) : (tensor<2x2x3xf32>, tensor<2x3xf32>, tensor<i32>) -> tensor<2x2x3xf32>
      %66 = func.call @dynamic_update_index_in_dim_2(%iterArg_7, %51, %iterArg_3) : (tensor<2x2x4xf32>, tensor<2x4xf32>, tensor<i32>) -> tensor<2x2x4xf32>
      %67 = func.call @dynamic_update_index_in_dim(%iterArg_8, %54, %iterArg_3) : (tensor<2x2xf32>, tensor<2xf32>, tensor<i32>) -> tensor<2x2xf32>
      %68 = func.call @dynamic_update_index_in_dim(%iterArg_9, %57, %iterArg_3) : (tensor<2x2xf32>, tensor<2xf32>, tensor<i32>) -> tensor<2x2xf32>
      %69 = func.call @dynamic_update_index_in_dim_2(%iterArg_10, %60, %iterArg_3) : (tensor<2x2x4xf32>, tensor<2x4xf32>, tensor<i32>) -> tensor<2x2x4xf32>
      %70 = func.call @dynamic_update_index_in_dim_2(%iterArg_11, %63, %iterArg_3) : (tensor<2x2x4xf32>, tensor<2x4xf32>, tensor<i32>) -> tensor<2x2x4xf32>
      %71 = stablehlo.add %iterArg_3, %c : tensor<i32>
      stablehlo.return %iterArg, %iterArg_2, %71, %42#0, %64, %65, %66, %67, %68, %69, %70 : tensor<2x2x3xf32>, tensor<f32>, tensor<i32>, tensor<4xf32>, tensor<2x2xf32>, tensor<2x2x3xf32>, tensor<2x2x4xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2x4xf32>, tensor<2x2x4xf32>
    }
    %12 = stablehlo.reshape %11#4 : (tensor<2x2xf32>) -> tensor<4xf32>
    %13 = stablehlo.reshape %11#5 : (tensor<2x2x3xf32>) -> tensor<4x3xf32>
    %14 = stablehlo.reshape %11#6 : (tensor<2x2x4xf32>) -> tensor<4x4xf32>
    %15 = stablehlo.reshape %11#7 : (tensor<2x2xf32>) -> tensor<4xf32>
    %16 = stablehlo.reshape %11#8 : (tensor<2x2xf32>) -> tensor<4xf32>
    %17 = stablehlo.reshape %11#9 : (tensor<2x2x4xf32>) -> tensor<4x4xf32>
    %18 = stablehlo.reshape %11#10 : (tensor<2x2x4xf32>) -> tensor<4x4xf32>
    %19 = stablehlo.slice %2 [0:1, 0:3] : (tensor<1x3xf32>) -> tensor<1x3xf32>
    %20 = stablehlo.reshape %19 : (tensor<1x3xf32>) -> tensor<3xf32>
    %21:8 = call @closed_call(%0, %11#3, %20) : (tensor<f32>, tensor<4xf32>, tensor<3xf32>) -> (tensor<4xf32>, tensor<f32>, tensor<3xf32>, tensor<4xf32>, tensor<f32>, tensor<f32>, tensor<4xf32>, tensor<4xf32>)
    %22 = stablehlo.broadcast_in_dim %21#1, dims = [] : (tensor<f32>) -> tensor<1xf32>
    %23 = stablehlo.broadcast_in_dim %21#2, dims = [1] : (tensor<3xf32>) -> tensor<1x3xf32>
    %24 = stablehlo.broadcast_in_dim %21#3, dims = [1] : (tensor<4xf32>) -> tensor<1x4xf32>
    %25 = stablehlo.broadcast_in_dim %21#4, dims = [] : (tensor<f32>) -> tensor<1xf32>
    %26 = stablehlo.broadcast_in_dim %21#5, dims = [] : (tensor<f32>) -> tensor<1xf32>
    %27 = stablehlo.broadcast_in_dim %21#6, dims = [1] : (tensor<4xf32>) -> tensor<1x4xf32>
    %28 = stablehlo.broadcast_in_dim %21#7, dims = [1] : (tensor<4xf32>) -> tensor<1x4xf32>
    %29 = stablehlo.concatenate %12, %22, dim = 0 : (tensor<4xf32>, tensor<1xf32>) -> tensor<5xf32>
    %30 = stablehlo.concatenate %13, %23, dim = 0 : (tensor<4x3xf32>, tensor<1x3xf32>) -> tensor<5x3xf32>
    %31 = stablehlo.concatenate %14, %24, dim = 0 : (tensor<4x4xf32>, tensor<1x4xf32>) -> tensor<5x4xf32>
    %32 = stablehlo.concatenate %15, %25, dim = 0 : (tensor<4xf32>, tensor<1xf32>) -> tensor<5xf32>
    %33 = stablehlo.concatenate %16, %26, dim = 0 : (tensor<4xf32>, tensor<1xf32>) -> tensor<5xf32>
    %34 = stablehlo.concatenate %17, %27, dim = 0 : (tensor<4x4xf32>, tensor<1x4xf32>) -> tensor<5x4xf32>
    %35 = stablehlo.concatenate %18, %28, dim = 0 : (tensor<4x4xf32>, tensor<1x4xf32>) -> tensor<5x4xf32>
    return %21#0, %29, %30, %31, %32, %33, %34, %35 : tensor<4xf32>, tensor<5xf32>, tensor<5x3xf32>, tensor<5x4xf32>, tensor<5xf32>, tensor<5xf32>, tensor<5x4xf32>, tensor<5x4xf32>
  }
  func.func private @f() -> tensor<f32> {
    %cst = stablehlo.constant dense<[1.76405239, 0.400157213]> : tensor<2xf32>
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.reduce(%cst init: %cst_0) applies stablehlo.add across dimensions = [0] : (tensor<2xf32>, tensor<f32>) -> tensor<f32>
    return %0 : tensor<f32>
  }
  func.func private @dynamic_index_in_dim(%arg0: tensor<2x2x3xf32>, %arg1: tensor<i32>) -> tensor<2x3xf32> {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.dynamic_slice %arg0, %arg1, %c, %c, sizes = [1, 2, 3] : (tensor<2x2x3xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x2x3xf32>
    %1 = stablehlo.reshape %0 : (tensor<1x2x3xf32>) -> tensor<2x3xf32>
    return %1 : tensor<2x3xf32>
  }
  func.func private @closed_call(%arg0: tensor<f32>, %arg1: tensor<4xf32>, %arg2: tensor<3xf32>) -> (tensor<4xf32>, tensor<f32>, tensor<3xf32>, tensor<4xf32>, tensor<f32>, tensor<f32>, tensor<4xf32>, tensor<4xf32>) {
    %0:6 = call @f_0(%arg1, %arg2, %arg0) : (tensor<4xf32>, tensor<3xf32>, tensor<f32>) -> (tensor<4xf32>, tensor<f32>, tensor<3xf32>, tensor<4xf32>, tensor<f32>, tensor<4xf32>)
    return %0#0, %0#1, %0#2, %0#3, %0#4, %0#1, %arg1, %0#5 : tensor<4xf32>, tensor<f32>, tensor<3xf32>, tensor<4xf32>, tensor<f32>, tensor<f32>, tensor<4xf32>, tensor<4xf32>
  }
  func.func private @f_0(%arg0: tensor<4xf32>, %arg1: tensor<3xf32>, %arg2: tensor<f32>) -> (tensor<4xf32>, tensor<f32>, tensor<3xf32>, tensor<4xf32>, tensor<f32>, tensor<4xf32>) {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.sine %arg1 : tensor<3xf32>
    %1 = stablehlo.cosine %arg1 : tensor<3xf32>
    %2 = stablehlo.reduce(%0 init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<3xf32>, tensor<f32>) -> tensor<f32>
    %3 = stablehlo.cosine %arg0 : tensor<4xf32>
    %4 = stablehlo.sine %arg0 : tensor<4xf32>
    %5 = stablehlo.reduce(%3 init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
    %6 = stablehlo.add %2, %5 : tensor<f32>
    %7 = stablehlo.add %6, %arg2 : tensor<f32>
    %8 = stablehlo.cosine %7 : tensor<f32>
    %9 = stablehlo.sine %7 : tensor<f32>
    %10 = stablehlo.broadcast_in_dim %8, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %11 = stablehlo.multiply %arg0, %10 : tensor<4xf32>
    %12 = stablehlo.sine %11 : tensor<4xf32>
    %13 = stablehlo.cosine %11 : tensor<4xf32>
    return %12, %8, %1, %4, %9, %13 : tensor<4xf32>, tensor<f32>, tensor<3xf32>, tensor<4xf32>, tensor<f32>, tensor<4xf32>
  }
  func.func private @dynamic_update_index_in_dim(%arg0: tensor<2x2xf32>, %arg1: tensor<2xf32>, %arg2: tensor<i32>) -> tensor<2x2xf32> {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.broadcast_in_dim %arg1, dims = [1] : (tensor<2xf32>) -> tensor<1x2xf32>
    %1 = stablehlo.dynamic_update_slice %arg0, %0, %arg2, %c : (tensor<2x2xf32>, tensor<1x2xf32>, tensor<i32>, tensor<i32>) -> tensor<2x2xf32>
    return %1 : tensor<2x2xf32>
  }
  func.func private @dynamic_update_index_in_dim_1(%arg0: tensor<2x2x3xf32>, %arg1: tensor<2x3xf32>, %arg2: tensor<i32>) -> tensor<2x2x3xf32> {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.broadcast_in_dim %arg1, dims = [1, 2] : (tensor<2x3xf32>) -> tensor<1x2x3xf32>
    %1 = stablehlo.dynamic_update_slice %arg0, %0, %arg2, %c, %c : (tensor<2x2x3xf32>, tensor<1x2x3xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<2x2x3xf32>
    return %1 : tensor<2x2x3xf32>
  }
  func.func private @dynamic_update_index_in_dim_2(%arg0: tensor<2x2x4xf32>, %arg1: tensor<2x4xf32>, %arg2: tensor<i32>) -> tensor<2x2x4xf32> {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.broadcast_in_dim %arg1, dims = [1, 2] : (tensor<2x4xf32>) -> tensor<1x2x4xf32>
    %1 = stablehlo.dynamic_update_slice %arg0, %0, %arg2, %c, %c : (tensor<2x2x4xf32>, tensor<1x2x4xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<2x2x4xf32>
    return %1 : tensor<2x2x4xf32>
  }
}
