module @jit_while attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<f32>, %arg1: tensor<f32>, %arg2: tensor<f32>, %arg3: tensor<f32>, %arg4: tensor<f32>, %arg5: tensor<f32>, %arg6: tensor<f32>, %arg7: tensor<f32>, %arg8: tensor<f32>, %arg9: tensor<f32>, %arg10: tensor<i32>) -> (tensor<f32> {jax.result_info = "result[0]"}, tensor<f32> {jax.result_info = "result[1]"}, tensor<f32> {jax.result_info = "result[2]"}, tensor<f32> {jax.result_info = "result[3]"}, tensor<f32> {jax.result_info = "result[4]"}, tensor<f32> {jax.result_info = "result[5]"}, tensor<f32> {jax.result_info = "result[6]"}, tensor<i32> {jax.result_info = "result[7]"}) {
    %c = stablehlo.constant dense<-10> : tensor<i32>
    %c_0 = stablehlo.constant dense<-11> : tensor<i32>
    %c_1 = stablehlo.constant dense<1> : tensor<i32>
    %c_2 = stablehlo.constant dense<0> : tensor<i32>
    %c_3 = stablehlo.constant dense<false> : tensor<i1>
    %c_4 = stablehlo.constant dense<10> : tensor<i32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0:11 = stablehlo.while(%iterArg = %arg0, %iterArg_5 = %arg1, %iterArg_6 = %arg2, %iterArg_7 = %arg3, %iterArg_8 = %arg4, %iterArg_9 = %arg5, %iterArg_10 = %arg6, %iterArg_11 = %arg7, %iterArg_12 = %arg8, %iterArg_13 = %arg9, %iterArg_14 = %arg10) : tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<i32>
    cond {
      %1 = stablehlo.reshape %iterArg_8 : (tensor<f32>) -> tensor<1xf32>
      %2 = stablehlo.reshape %iterArg_8 : (tensor<f32>) -> tensor<1xf32>
      %3 = stablehlo.dot_general %1, %2, contracting_dims = [0] x [0], precision = [HIGHEST, HIGHEST] : (tensor<1xf32>, tensor<1xf32>) -> tensor<f32>
      %4 = stablehlo.add %cst, %3 : tensor<f32>
      %5 = stablehlo.compare GT, %4, %iterArg, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %6 = stablehlo.compare LT, %iterArg_14, %c_4, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %7 = stablehlo.broadcast_in_dim %c_3, dims = [] : (tensor<i1>) -> tensor<i1>
      %8 = stablehlo.compare NE, %5, %7, UNSIGNED : (tensor<i1>, tensor<i1>) -> tensor<i1>
      %9 = stablehlo.convert %8 : tensor<i1>
      %10 = stablehlo.broadcast_in_dim %c_3, dims = [] : (tensor<i1>) -> tensor<i1>
      %11 = stablehlo.compare NE, %6, %10, UNSIGNED : (tensor<i1>, tensor<i1>) -> tensor<i1>
      %12 = stablehlo.convert %11 : tensor<i1>
      %13 = stablehlo.and %9, %12 : tensor<i1>
      %14 = stablehlo.compare GE, %iterArg_14, %c_2, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %15 = stablehlo.broadcast_in_dim %c_3, dims = [] : (tensor<i1>) -> tensor<i1>
      %16 = stablehlo.compare NE, %14, %15, UNSIGNED : (tensor<i1>, tensor<i1>) -> tensor<i1>
      %17 = stablehlo.convert %16 : tensor<i1>
      %18 = stablehlo.and %13, %17 : tensor<i1>
      stablehlo.return %18 : tensor<i1>
    } do {
      %1 = stablehlo.reshape %iterArg_5 : (tensor<f32>) -> tensor<1xf32>
      %2 = stablehlo.reshape %iterArg_8 : (tensor<f32>) -> tensor<1xf32>
      %3 = stablehlo.dot_general %1, %2, contracting_dims = [0] x [0], precision = [HIGHEST, HIGHEST] : (tensor<1xf32>, tensor<1xf32>) -> tensor<f32>
      %4 = stablehlo.add %cst, %3 : tensor<f32>
      %5 = stablehlo.divide %4, %iterArg_11 : tensor<f32>
      %6 = stablehlo.multiply %5, %iterArg_9 : tensor<f32>
      %7 = stablehlo.divide %6, %iterArg_10 : tensor<f32>
      %8 = stablehlo.multiply %iterArg_10, %iterArg_13 : tensor<f32>
      %9 = stablehlo.subtract %iterArg_12, %8 : tensor<f32>
      %10 = stablehlo.multiply %7, %9 : tensor<f32>
      %11 = stablehlo.add %iterArg_8, %10 : tensor<f32>
      %12 = stablehlo.reshape %iterArg_5 : (tensor<f32>) -> tensor<1xf32>
      %13 = stablehlo.reshape %11 : (tensor<f32>) -> tensor<1xf32>
      %14 = stablehlo.dot_general %12, %13, contracting_dims = [0] x [0], precision = [HIGHEST, HIGHEST] : (tensor<1xf32>, tensor<1xf32>) -> tensor<f32>
      %15 = stablehlo.add %cst, %14 : tensor<f32>
      %16 = stablehlo.divide %4, %15 : tensor<f32>
      %17 = stablehlo.multiply %16, %11 : tensor<f32>
      %18 = stablehlo.subtract %iterArg_8, %17 : tensor<f32>
      %19 = stablehlo.reshape %18 : (tensor<f32>) -> tensor<1xf32>
      %20 = stablehlo.reshape %18 : (tensor<f32>) -> tensor<1xf32>
      %21 = stablehlo.dot_general %19, %20, contracting_dims = [0] x [0], precision = [HIGHEST, HIGHEST] : (tensor<1xf32>, tensor<1xf32>) -> tensor<f32>
      %22 = stablehlo.add %cst, %21 : tensor<f32>
      %23 = stablehlo.compare LT, %22, %iterArg_6, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %24 = stablehlo.reshape %18 : (tensor<f32>) -> tensor<1xf32>
      %25 = stablehlo.reshape %18 : (tensor<f32>) -> tensor<1xf32>
      %26 = stablehlo.dot_general %24, %25, contracting_dims = [0] x [0], precision = [HIGHEST, HIGHEST] : (tensor<1xf32>, tensor<1xf32>) -> tensor<f32>
      %27 = stablehlo.add %cst, %26 : tensor<f32>
      %28 = stablehlo.reshape %18 : (tensor<f32>) -> tensor<1xf32>
      %29 = stablehlo.reshape %18 : (tensor<f32>) -> tensor<1xf32>
      %30 = stablehlo.dot_general %28, %29, contracting_dims = [0] x [0], precision = [HIGHEST, HIGHEST] : (tensor<1xf32>, tensor<1xf32>) -> tensor<f32>
      %31 = stablehlo.add %cst, %30 : tensor<f32>
      %32 = stablehlo.divide %27, %31 : tensor<f32>
      %33 = stablehlo.multiply %16, %11 : tensor<f32>
      %34 = stablehlo.add %iterArg_7, %33 : tensor<f32>
      %35 = stablehlo.multiply %16, %11 : tensor<f32>
      %36 = stablehlo.multiply %32, %18 : tensor<f32>
      %37 = stablehlo.add %35, %36 : tensor<f32>
      %38 = stablehlo.add %iterArg_7, %37 : tensor<f32>
      %39 = func.call @_where(%23, %34, %38) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
      %40 = stablehlo.multiply %32, %18 : tensor<f32>
      %41 = stablehlo.subtract %18, %40 : tensor<f32>
      %42 = func.call @_where(%23, %18, %41) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
      %43 = stablehlo.compare EQ, %32, %cst, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %44 = stablehlo.compare EQ, %16, %cst, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %45 = stablehlo.broadcast_in_dim %c_3, dims = [] : (tensor<i1>) -> tensor<i1>
      %46 = stablehlo.compare NE, %43, %45, UNSIGNED : (tensor<i1>, tensor<i1>) -> tensor<i1>
      %47 = stablehlo.convert %46 : tensor<i1>
      %48 = stablehlo.broadcast_in_dim %c_3, dims = [] : (tensor<i1>) -> tensor<i1>
      %49 = stablehlo.compare NE, %44, %48, UNSIGNED : (tensor<i1>, tensor<i1>) -> tensor<i1>
      %50 = stablehlo.convert %49 : tensor<i1>
      %51 = stablehlo.or %47, %50 : tensor<i1>
      %52 = stablehlo.add %iterArg_14, %c_1 : tensor<i32>
      %53 = func.call @_where_0(%51, %c_0, %52) : (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>
      %54 = stablehlo.compare EQ, %4, %cst, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %55 = func.call @_where_1(%54, %c, %53) : (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>
      stablehlo.return %iterArg, %iterArg_5, %iterArg_6, %39, %42, %16, %32, %4, %11, %11, %55 : tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<i32>
    }
    return %0#3, %0#4, %0#5, %0#6, %0#7, %0#8, %0#9, %0#10 : tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>, tensor<i32>
  }
  func.func private @_where(%arg0: tensor<i1>, %arg1: tensor<f32>, %arg2: tensor<f32>) -> tensor<f32> {
    %0 = stablehlo.select %arg0, %arg1, %arg2 : tensor<i1>, tensor<f32>
    return %0 : tensor<f32>
  }
  func.func private @_where_0(%arg0: tensor<i1>, %arg1: tensor<i32>, %arg2: tensor<i32>) -> tensor<i32> {
    %0 = stablehlo.select %arg0, %arg1, %arg2 : tensor<i1>, tensor<i32>
    return %0 : tensor<i32>
  }
  func.func private @_where_1(%arg0: tensor<i1>, %arg1: tensor<i32>, %arg2: tensor<i32>) -> tensor<i32> {
    %0 = stablehlo.select %arg0, %arg1, %arg2 : tensor<i1>, tensor<i32>
    return %0 : tensor<i32>
  }
}
