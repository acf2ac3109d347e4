module @jit_step attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3xf32> {tf.aliasing_output = 0 : i32}, %arg1: tensor<3x3x2x4xf32> {tf.aliasing_output = 1 : i32}, %arg2: tensor<3x3x4x4xf32> {tf.aliasing_output = 2 : i32}, %arg3: tensor<4xf32> {tf.aliasing_output = 3 : i32}, %arg4: tensor<4xf32> {tf.aliasing_output = 4 : i32}, %arg5: tensor<36x3xf32> {tf.aliasing_output = 5 : i32}, %arg6: tensor<3xf32> {tf.aliasing_output = 6 : i32}, %arg7: tensor<3x3x2x4xf32> {tf.aliasing_output = 7 : i32}, %arg8: tensor<3x3x4x4xf32> {tf.aliasing_output = 8 : i32}, %arg9: tensor<4xf32> {tf.aliasing_output = 9 : i32}, %arg10: tensor<4xf32> {tf.aliasing_output = 10 : i32}, %arg11: tensor<36x3xf32> {tf.aliasing_output = 11 : i32}, %arg12: tensor<i32> {tf.aliasing_output = 12 : i32}, %arg13: tensor<3xf32> {tf.aliasing_output = 13 : i32}, %arg14: tensor<3x3x2x4xf32> {tf.aliasing_output = 14 : i32}, %arg15: tensor<3x3x4x4xf32> {tf.aliasing_output = 15 : i32}, %arg16: tensor<4xf32> {tf.aliasing_output = 16 : i32}, %arg17: tensor<4xf32> {tf.aliasing_output = 17 : i32}, %arg18: tensor<36x3xf32> {tf.aliasing_output = 18 : i32}, %arg19: tensor<2x6x6x2xf32>, %arg20: tensor<2xi32>) -> (tensor<3xf32> {jax.result_info = "result[0]['b']"}, tensor<3x3x2x4xf32> {jax.result_info = "result[0]['k1']"}, tensor<3x3x4x4xf32> {jax.result_info = "result[0]['k2']"}, tensor<4xf32> {jax.result_info = "result[0]['kb1']"}, tensor<4xf32> {jax.result_info = "result[0]['kb2']"}, tensor<36x3xf32> {jax.result_info = "result[0]['w']"}, tensor<3xf32> {jax.result_info = "result[1]['m']['b']"}, tensor<3x3x2x4xf32> {jax.result_info = "result[1]['m']['k1']"}, tensor<3x3x4x4xf32> {jax.result_info = "result[1]['m']['k2']"}, tensor<4xf32> {jax.result_info = "result[1]['m']['kb1']"}, tensor<4xf32> {jax.result_info = "result[1]['m']['kb2']"}, tensor<36x3xf32> {jax.result_info = "result[1]['m']['w']"}, tensor<i32> {jax.result_info = "result[1]['t']"}, tensor<3xf32> {jax.result_info = "result[1]['v']['b']"}, tensor<3x3x2x4xf32> {jax.result_info = "result[1]['v']['k1']"}, tensor<3x3x4x4xf32> {jax.result_info = "result[1]['v']['k2']"}, tensor<4xf32> {jax.result_info = "result[1]['v']['kb1']"}, tensor<4xf32> {jax.result_info = "result[1]['v']['kb2']"}, tensor<36x3xf32> {jax.result_info = "result[1]['v']['w']"}, tensor<f32> {jax.result_info = "result[2]"}) {
    %0 = stablehlo.convolution(%arg19, %arg1) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 1], pad = [[1, 1], [1, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, 1], reverse = [false, false]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]} : (tensor<2x6x6x2xf32>, tensor<3x3x2x4xf32>) -> tensor<2x6x6x4xf32>
    %1 = stablehlo.broadcast_in_dim %arg3, dims = [3] : (tensor<4xf32>) -> tensor<1x1x1x4xf32>
    %2 = stablehlo.broadcast_in_dim %1, dims = [0, 1, 2, 3] : (tensor<1x1x1x4xf32>) -> tensor<2x6x6x4xf32>
    %3 = stablehlo.add %0, %2 : tensor<2x6x6x4xf32>
    %4 = call @relu(%3) : (tensor<2x6x6x4xf32>) -> tensor<2x6x6x4xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %5 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<2x6x6x4xf32>
    %6 = stablehlo.compare GT, %3, %5, FLOAT : (tensor<2x6x6x4xf32>, tensor<2x6x6x4xf32>) -> tensor<2x6x6x4xi1>
    %cst_0 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %7 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<f32>
    %8 = "stablehlo.reduce_window"(%4, %7) <{base_dilations = array<i64: 1, 1, 1, 1>, padding = dense<0> : tensor<4x2xi64>, window_dilations = array<i64: 1, 1, 1, 1>, window_dimensions = array<i64: 1, 2, 2, 1>, window_strides = array<i64: 1, 2, 2, 1>}> ({
    ^bb0(%arg21: tensor<f32>, %arg22: tensor<f32>):
      %197 = stablehlo.maximum %arg21, %arg22 : tensor<f32>
      stablehlo.return %197 : tensor<f32>
    }) : (tensor<2x6x6x4xf32>, tensor<f32>) -> tensor<2x3x3x4xf32>
    %9 = stablehlo.convolution(%8, %arg2) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 1], pad = [[1, 1], [1, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, 1], reverse = [false, false]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]} : (tensor<2x3x3x4xf32>, tensor<3x3x4x4xf32>) -> tensor<2x3x3x4xf32>
    %10 = stablehlo.broadcast_in_dim %arg4, dims = [3] : (tensor<4xf32>) -> tensor<1x1x1x4xf32>
    %11 = stablehlo.broadcast_in_dim %10, dims = [0, 1, 2, 3] : (tensor<1x1x1x4xf32>) -> tensor<2x3x3x4xf32>
    %12 = stablehlo.add %9, %11 : tensor<2x3x3x4xf32>
    %13 = call @relu_0(%12) : (tensor<2x3x3x4xf32>) -> tensor<2x3x3x4xf32>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %14 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<2x3x3x4xf32>
    %15 = stablehlo.compare GT, %12, %14, FLOAT : (tensor<2x3x3x4xf32>, tensor<2x3x3x4xf32>) -> tensor<2x3x3x4xi1>
    %16 = stablehlo.reshape %13 : (tensor<2x3x3x4xf32>) -> tensor<2x36xf32>
    %17 = stablehlo.dot_general %16, %arg5, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<2x36xf32>, tensor<36x3xf32>) -> tensor<2x3xf32>
    %18 = stablehlo.broadcast_in_dim %arg0, dims = [1] : (tensor<3xf32>) -> tensor<1x3xf32>
    %19 = stablehlo.broadcast_in_dim %18, dims = [0, 1] : (tensor<1x3xf32>) -> tensor<2x3xf32>
    %20 = stablehlo.add %17, %19 : tensor<2x3xf32>
    %21:3 = call @log_softmax(%20) : (tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x1xf32>)
    %22 = call @_one_hot(%arg20) : (tensor<2xi32>) -> tensor<2x3xf32>
    %23 = stablehlo.multiply %21#0, %22 : tensor<2x3xf32>
    %cst_2 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %24 = stablehlo.reduce(%23 init: %cst_2) applies stablehlo.add across dimensions = [1] : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>
    %cst_3 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %25 = stablehlo.reduce(%24 init: %cst_3) applies stablehlo.add across dimensions = [0] : (tensor<2xf32>, tensor<f32>) -> tensor<f32>
    %cst_4 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %26 = stablehlo.divide %25, %cst_4 : tensor<f32>
    %27 = stablehlo.negate %26 : tensor<f32>
    %cst_5 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %28 = stablehlo.negate %cst_5 : tensor<f32>
    %cst_6 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %29 = stablehlo.divide %28, %cst_6 : tensor<f32>
    %30 = stablehlo.broadcast_in_dim %29, dims = [] : (tensor<f32>) -> tensor<2xf32>
    %31 = stablehlo.broadcast_in_dim %30, dims = [0] : (tensor<2xf32>) -> tensor<2x3xf32>
    %32 = stablehlo.multiply %31, %22 : tensor<2x3xf32>
    %33 = call @log_softmax_1(%21#1, %21#2, %32) : (tensor<2x3xf32>, tensor<2x1xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
    %cst_7 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %34 = stablehlo.reduce(%33 init: %cst_7) applies stablehlo.add across dimensions = [0] : (tensor<2x3xf32>, tensor<f32>) -> tensor<3xf32>
    %35 = stablehlo.reshape %34 : (tensor<3xf32>) -> tensor<1x3xf32>
    %cst_8 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %36 = stablehlo.reduce(%35 init: %cst_8) applies stablehlo.add across dimensions = [0] : (tensor<1x3xf32>, tensor<f32>) -> tensor<3xf32>
    %37 = stablehlo.dot_general %33, %16, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<2x3xf32>, tensor<2x36xf32>) -> tensor<3x36xf32>
    %38 = stablehlo.transpose %37, dims = [1, 0] : (tensor<3x36xf32>) -> tensor<36x3xf32>
    %39 = stablehlo.dot_general %33, %arg5, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<2x3xf32>, tensor<36x3xf32>) -> tensor<2x36xf32>
    %40 = stablehlo.reshape %39 : (tensor<2x36xf32>) -> tensor<2x3x3x4xf32>
    %cst_9 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %41 = stablehlo.broadcast_in_dim %cst_9, dims = [] : (tensor<f32>) -> tensor<2x3x3x4xf32>
    %42 = stablehlo.select %15, %40, %41 : tensor<2x3x3x4xi1>, tensor<2x3x3x4xf32>
    %cst_10 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %43 = stablehlo.reduce(%42 init: %cst_10) applies stablehlo.add across dimensions = [0, 1, 2] : (tensor<2x3x3x4xf32>, tensor<f32>) -> tensor<4xf32>
    %44 = stablehlo.reshape %43 : (tensor<4xf32>) -> tensor<1x1x1x4xf32>
    %cst_11 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %45 = stablehlo.reduce(%44 init: %cst_11) applies stablehlo.add across dimensions = [0, 1, 2] : (tensor<1x1x1x4xf32>, tensor<f32>) -> tensor<4xf32>
    %46 = stablehlo.convolution(%8, %42) dim_numbers = [f, 0, 1, b]x[i, 0, 1, o]->[0, 1, b, f], window = {stride = [1, 1], pad = [[1, 1], [1, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, 1], reverse = [false, false]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]} : (tensor<2x3x3x4xf32>, tensor<2x3x3x4xf32>) -> tensor<3x3x4x4xf32>
    %47 = stablehlo.reverse %arg2, dims = [0, 1] : tensor<3x3x4x4xf32>
    %48 = stablehlo.convolution(%42, %47) dim_numbers = [b, 0, 1, f]x[0, 1, o, i]->[b, 0, 1, f], window = {stride = [1, 1], pad = [[1, 1], [1, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, 1], reverse = [false, false]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]} : (tensor<2x3x3x4xf32>, tensor<3x3x4x4xf32>) -> tensor<2x3x3x4xf32>
    %cst_12 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %49 = stablehlo.pad %4, %cst_12, low = [0, 0, 0, 0], high = [0, 0, 0, 0], interior = [0, 0, 0, 0] : (tensor<2x6x6x4xf32>, tensor<f32>) -> tensor<2x6x6x4xf32>
    %cst_13 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %50 = "stablehlo.select_and_scatter"(%49, %48, %cst_13) <{padding = dense<0> : tensor<4x2xi64>, window_dimensions = array<i64: 1, 2, 2, 1>, window_strides = array<i64: 1, 2, 2, 1>}> ({
    ^bb0(%arg21: tensor<f32>, %arg22: tensor<f32>):
      %197 = stablehlo.compare GE, %arg21, %arg22, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %197 : tensor<i1>
    }, {
    ^bb0(%arg21: tensor<f32>, %arg22: tensor<f32>):
      %197 = stablehlo.add %arg21, %arg22 : tensor<f32>
      stablehlo.return %197 : tensor<f32>
    }) : (tensor<2x6x6x4xf32>, tensor<2x3x3x4xf32>, tensor<f32>) -> tensor<2x6x6x4xf32>
    %51 = stablehlo.slice %50 [0:2, 0:6, 0:6, 0:4] : (tensor<2x6x6x4xf32>) -> tensor<2x6x6x4xf32>
    %cst_14 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %52 = stablehlo.broadcast_in_dim %cst_14, dims = [] : (tensor<f32>) -> tensor<2x6x6x4xf32>
    %53 = stablehlo.select %6, %51, %52 : tensor<2x6x6x4xi1>, tensor<2x6x6x4xf32>
    %cst_15 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %54 = stablehlo.reduce(%53 init: %cst_15) applies stablehlo.add across dimensions = [0, 1, 2] : (tensor<2x6x6x4xf32>, tensor<f32>) -> tensor<4xf32>
    %55 = stablehlo.reshape %54 : (tensor<4xf32>) -> tensor<1x1x1x4xf32>
    %cst_16 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %56 = stablehlo.reduce(%55 init: %cst_16) applies stablehlo.add across dimensions = [0, 1, 2] : (tensor<1x1x1x4xf32>, tensor<f32>) -> tensor<4xf32>
    %57 = stablehlo.convolution(%arg19, %53) dim_numbers = [f, 0, 1, b]x[i, 0, 1, o]->[0, 1, b, f], window = {stride = [1, 1], pad = [[1, 1], [1, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, 1], reverse = [false, false]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]} : (tensor<2x6x6x2xf32>, tensor<2x6x6x4xf32>) -> tensor<3x3x2x4xf32>
    %c = stablehlo.constant dense<1> : tensor<i32>
    %58 = stablehlo.add %arg12, %c : tensor<i32>
    %cst_17 = stablehlo.constant dense<0.899999976> : tensor<f32>
    %59 = stablehlo.broadcast_in_dim %cst_17, dims = [] : (tensor<f32>) -> tensor<3xf32>
    %60 = stablehlo.multiply %59, %arg6 : tensor<3xf32>
    %cst_18 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %61 = stablehlo.broadcast_in_dim %cst_18, dims = [] : (tensor<f32>) -> tensor<3xf32>
    %62 = stablehlo.multiply %61, %36 : tensor<3xf32>
    %63 = stablehlo.add %60, %62 : tensor<3xf32>
    %cst_19 = stablehlo.constant dense<0.899999976> : tensor<f32>
    %64 = stablehlo.broadcast_in_dim %cst_19, dims = [] : (tensor<f32>) -> tensor<3x3x2x4xf32>
    %65 = stablehlo.multiply %64, %arg7 : tensor<3x3x2x4xf32>
    %cst_20 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %66 = stablehlo.broadcast_in_dim %cst_20, dims = [] : (tensor<f32>) -> tensor<3x3x2x4xf32>
    %67 = stablehlo.multiply %66, %57 : tensor<3x3x2x4xf32>
    %68 = stablehlo.add %65, %67 : tensor<3x3x2x4xf32>
    %cst_21 = stablehlo.constant dense<0.899999976> : tensor<f32>
    %69 = stablehlo.broadcast_in_dim %cst_21, dims = [] : (tensor<f32>) -> tensor<3x3x4x4xf32>
    %70 = stablehlo.multiply %69, %arg8 : tensor<3x3x4x4xf32>
    %cst_22 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %71 = stablehlo.broadcast_in_dim %cst_22, dims = [] : (tensor<f32>) -> tensor<3x3x4x4xf32>
    %72 = stablehlo.multiply %71, %46 : tensor<3x3x4x4xf32>
    %73 = stablehlo.add %70, %72 : tensor<3x3x4x4xf32>
    %cst_23 = stablehlo.constant dense<0.899999976> : tensor<f32>
    %74 = stablehlo.broadcast_in_dim %cst_23, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %75 = stablehlo.multiply %74, %arg9 : tensor<4xf32>
    %cst_24 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %76 = stablehlo.broadcast_in_dim %cst_24, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %77 = stablehlo.multiply %76, %56 : tensor<4xf32>
    %78 = stablehlo.add %75, %77 : tensor<4xf32>
    %cst_25 = stablehlo.constant dense<0.899999976> : tensor<f32>
    %79 = stablehlo.broadcast_in_dim %cst_25, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %80 = stablehlo.multiply %79, %arg10 : tensor<4xf32>
    %cst_26 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %81 = stablehlo.broadcast_in_dim %cst_26, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %82 = stablehlo.multiply %81, %45 : tensor<4xf32>
    %83 = stablehlo.add %80, %82 : tensor<4xf32>
    %cst_27 = stablehlo.constant dense<0.899999976> : tensor<f32>
    %84 = stablehlo.broadcast_in_dim %cst_27, dims = [] : (tensor<f32>) -> tensor<36x3xf32>
    %85 = stablehlo.multiply %84, %arg11 : tensor<36x3xf32>
    %cst_28 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %86 = stablehlo.broadcast_in_dim %cst_28, dims = [] : (tensor<f32>) -> tensor<36x3xf32>
    %87 = stablehlo.multiply %86, %38 : tensor<36x3xf32>
    %88 = stablehlo.add %85, %87 : tensor<36x3xf32>
    %cst_29 = stablehlo.constant dense<9.990000e-01> : tensor<f32>
    %89 = stablehlo.broadcast_in_dim %cst_29, dims = [] : (tensor<f32>) -> tensor<3xf32>
    %90 = stablehlo.multiply %89, %arg13 : tensor<3xf32>
    %cst_30 = stablehlo.constant dense<1.000000e-03> : tensor<f32>
    %91 = stablehlo.broadcast_in_dim %cst_30, dims = [] : (tensor<f32>) -> tensor<3xf32>
    %92 = stablehlo.multiply %91, %36 : tensor<3xf32>
    %93 = stablehlo.multiply %92, %36 : tensor<3xf32>
    %94 = stablehlo.add %90, %93 : tensor<3xf32>
    %cst_31 = stablehlo.constant dense<9.990000e-01> : tensor<f32>
    %95 = stablehlo.broadcast_in_dim %cst_31, dims = [] : (tensor<f32>) -> tensor<3x3x2x4xf32>
    %96 = stablehlo.multiply %95, %arg14 : tensor<3x3x2x4xf32>
    %cst_32 = stablehlo.constant dense<1.000000e-03> : tensor<f32>
    %97 = stablehlo.broadcast_in_dim %cst_32, dims = [] : (tensor<f32>) -> tensor<3x3x2x4xf32>
    %98 = stablehlo.multiply %97, %57 : tensor<3x3x2x4xf32>
    %99 = stablehlo.multiply %98, %57 : tensor<3x3x2x4xf32>
    %100 = stablehlo.add %96, %99 : tensor<3x3x2x4xf32>
    %cst_33 = stablehlo.constant dense<9.990000e-01> : tensor<f32>
    %101 = stablehlo.broadcast_in_dim %cst_33, dims = [] : (tensor<f32>) -> tensor<3x3x4x4xf32>
    %102 = stablehlo.multiply %101, %arg15 : tensor<3x3x4x4xf32>
    %cst_34 = stablehlo.constant dense<1.000000e-03> : tensor<f32>
    %103 = stablehlo.broadcast_in_dim %cst_34, dims = [] : (tensor<f32>) -> tensor<3x3x4x4xf32>
    %104 = stablehlo.multiply %103, %46 : tensor<3x3x4x4xf32>
    %105 = stablehlo.multiply %104, %46 : tensor<3x3x4x4xf32>
    %106 = stablehlo.add %102, %105 : tensor<3x3x4x4xf32>
    %cst_35 = stablehlo.constant dense<9.990000e-01> : tensor<f32>
    %107 = stablehlo.broadcast_in_dim %cst_35, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %108 = stablehlo.multiply %107, %arg16 : tensor<4xf32>
    %cst_36 = stablehlo.constant dense<1.000000e-03> : tensor<f32>
    %109 = stablehlo.broadcast_in_dim %cst_36, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %110 = stablehlo.multiply %109, %56 : tensor<4xf32>
    %111 = stablehlo.multiply %110, %56 : tensor<4xf32>
    %112 = stablehlo.add %108, %111 : tensor<4xf32>
    %cst_37 = stablehlo.constant dense<9.990000e-01> : tensor<f32>
    %113 = stablehlo.broadcast_in_dim %cst_37, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %114 = stablehlo.multiply %113, %arg17 : tensor<4xf32>
    %cst_38 = stablehlo.constant dense<1.000000e-03> : tensor<f32>
    %115 = stablehlo.broadcast_in_dim %cst_38, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %116 = stablehlo.multiply %115, %45 : tensor<4xf32>
    %117 = stablehlo.multiply %116, %45 : tensor<4xf32>
    %118 = stablehlo.add %114, %117 : tensor<4xf32>
    %cst_39 = stablehlo.constant dense<9.990000e-01> : tensor<f32>
    %119 = stablehlo.broadcast_in_dim %cst_39, dims = [] : (tensor<f32>) -> tensor<36x3xf32>
    %120 = stablehlo.multiply %119, %arg18 : tensor<36x3xf32>
    %cst_40 = stablehlo.constant dense<1.000000e-03> : tensor<f32>
    %121 = stablehlo.broadcast_in_dim %cst_40, dims = [] : (tensor<f32>) -> tensor<36x3xf32>
    %122 = stablehlo.multiply %121, %38 : tensor<36x3xf32>
    %123 = stablehlo.multiply %122, %38 : tensor<36x3xf32>
    %124 = stablehlo.add %120, %123 : tensor<36x3xf32>
    %125 = stablehlo.convert %58 : (tensor<i32>) -> tensor<f32>
    %cst_41 = stablehlo.constant dense<0.899999976> : tensor<f32>
    %126 = stablehlo.power %cst_41, %125 : tensor<f32>
    %cst_42 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %127 = stablehlo.subtract %cst_42, %126 : tensor<f32>
    %128 = stablehlo.convert %58 : (tensor<i32>) -> tensor<f32>
    %cst_43 = stablehlo.constant dense<9.990000e-01> : tensor<f32>
    %129 = stablehlo.power %cst_43, %128 : tensor<f32>
    %cst_44 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %130 = stablehlo.subtract %cst_44, %129 : tensor<f32>
    %131 = stablehlo.broadcast_in_dim %127, dims = [] : (tensor<f32>) -> tensor<3xf32>
    %132 = stablehlo.divide %63, %131 : tensor<3xf32>
    %cst_45 = stablehlo.constant dense<0.00999999977> : tensor<f32>
    %133 = stablehlo.broadcast_in_dim %cst_45, dims = [] : (tensor<f32>) -> tensor<3xf32>
    %134 = stablehlo.multiply %133, %132 : tensor<3xf32>
    %135 = stablehlo.broadcast_in_dim %130, dims = [] : (tensor<f32>) -> tensor<3xf32>
    %136 = stablehlo.divide %94, %135 : tensor<3xf32>
    %137 = stablehlo.sqrt %136 : tensor<3xf32>
    %cst_46 = stablehlo.constant dense<9.99999993E-9> : tensor<f32>
    %138 = stablehlo.broadcast_in_dim %cst_46, dims = [] : (tensor<f32>) -> tensor<3xf32>
    %139 = stablehlo.add %137, %138 : tensor<3xf32>
    %140 = stablehlo.divide %134, %139 : tensor<3xf32>
    %141 = stablehlo.subtract %arg0, %140 : tensor<3xf32>
    %142 = stablehlo.broadcast_in_dim %127, dims = [] : (tensor<f32>) -> tensor<3x3x2x4xf32>
    %143 = stablehlo.divide %68, %142 : tensor<3x3x2x4xf32>
    %cst_47 = stablehlo.constant dense<0.00999999977> : tensor<f32>
    %144 = stablehlo.broadcast_in_dim %cst_47, dims = [] : (tensor<f32>) -> tensor<3x3x2x4xf32>
    %145 = stablehlo.multiply %144, %143 : tensor<3x3x2x4xf32>
    %146 = stablehlo.broadcast_in_dim %130, dims = [] : (tensor<f32>) -> tensor<3x3x2x4xf32>
    %147 = stablehlo.divide %100, %146 : tensor<3x3x2x4xf32>
    %148 = stablehlo.sqrt %147 : tensor<3x3x2x4xf32>
    %cst_48 = stablehlo.constant dense<9.99999993E-9> : tensor<f32>
    %149 = stablehlo.broadcast_in_dim %cst_48, dims = [] : (tensor<f32>) -> tensor<3x3x2x4xf32>
    %150 = stablehlo.add %148, %149 : tensor<3x3x2x4xf32>
    %151 = stablehlo.divide %145, %150 : tensor<3x3x2x4xf32>
    %152 = stablehlo.subtract %arg1, %151 : tensor<3x3x2x4xf32>
    %153 = stablehlo.broadcast_in_dim %127, dims = [] : (tensor<f32>) -> tensor<3x3x4x4xf32>
    %154 = stablehlo.divide %73, %153 : tensor<3x3x4x4xf32>
    %cst_49 = stablehlo.constant dense<0.00999999977> : tensor<f32>
    %155 = stablehlo.broadcast_in_dim %cst_49, dims = [] : (tensor<f32>) -> tensor<3x3x4x4xf32>
    %156 = stablehlo.multiply %155, %154 : tensor<3x3x4x4xf32>
    %157 = stablehlo.broadcast_in_dim %130, dims = [] : (tensor<f32>) -> tensor<3x3x4x4xf32>
    %158 = stablehlo.divide %106, %157 : tensor<3x3x4x4xf32>
    %159 = stablehlo.sqrt %158 : tensor<3x3x4x4xf32>
    %cst_50 = stablehlo.constant dense<9.99999993E-9> : tensor<f32>
    %160 = stablehlo.broadcast_in_dim %cst_50, dims = [] : (tensor<f32>) -> tensor<3x3x4x4xf32>
    %161 = stablehlo.add %159, %160 : tensor<3x3x4x4xf32>
    %162 = stablehlo.divide %156, %161 : tensor<3x3x4x4xf32>
    %163 = stablehlo.subtract %arg2, %162 : tensor<3x3x4x4xf32>
    %164 = stablehlo.broadcast_in_dim %127, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %165 = stablehlo.divide %78, %164 : tensor<4xf32>
    %cst_51 = stablehlo.constant dense<0.00999999977> : tensor<f32>
    %166 = stablehlo.broadcast_in_dim %cst_51, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %167 = stablehlo.multiply %166, %165 : tensor<4xf32>
    %168 = stablehlo.broadcast_in_dim %130, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %169 = stablehlo.divide %112, %168 : tensor<4xf32>
    %170 = stablehlo.sqrt %169 : tensor<4xf32>
    %cst_52 = stablehlo.constant dense<9.99999993E-9> : tensor<f32>
    %171 = stablehlo.broadcast_in_dim %cst_52, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %172 = stablehlo.add %170, %171 : tensor<4xf32>
    %173 = stablehlo.divide %167, %172 : tensor<4xf32>
    %174 = stablehlo.subtract %arg3, %173 : tensor<4xf32>
    %175 = stablehlo.broadcast_in_dim %127, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %176 = stablehlo.divide %83, %175 : tensor<4xf32>
    %cst_53 = stablehlo.constant dense<0.00999999977> : tensor<f32>
    %177 = stablehlo.broadcast_in_dim %cst_53, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %178 = stablehlo.multiply %177, %176 : tensor<4xf32>
    %179 = stablehlo.broadcast_in_dim %130, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %180 = stablehlo.divide %118, %179 : tensor<4xf32>
    %181 = stablehlo.sqrt %180 : tensor<4xf32>
    %cst_54 = stablehlo.constant dense<9.99999993E-9> : tensor<f32>
    %182 = stablehlo.broadcast_in_dim %cst_54, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %183 = stablehlo.add %181, %182 : tensor<4xf32>
    %184 = stablehlo.divide %178, %183 : tensor<4xf32>
    %185 = stablehlo.subtract %arg4, %184 : tensor<4xf32>
    %186 = stablehlo.broadcast_in_dim %127, dims = [] : (tensor<f32>) -> tensor<36x3xf32>
    %187 = stablehlo.divide %88, %186 : tensor<36x3xf32>
    %cst_55 = stablehlo.constant dense<0.00999999977> : tensor<f32>
    %188 = stablehlo.broadcast_in_dim %cst_55, dims = [] : (tensor<f32>) -> tensor<36x3xf32>
    %189 = stablehlo.multiply %188, %187 : tensor<36x3xf32>
    %190 = stablehlo.broadcast_in_dim %130, dims = [] : (tensor<f32>) -> tensor<36x3xf32>
    %191 = stablehlo.divide %124, %190 : tensor<36x3xf32>
    %192 = stablehlo.sqrt %191 : tensor<36x3xf32>
    %cst_56 = stablehlo.constant dense<9.99999993E-9> : tensor<f32>
    %193 = stablehlo.broadcast_in_dim %cst_56, dims = [] : (tensor<f32>) -> tensor<36x3xf32>
    %194 = stablehlo.add %192, %193 : tensor<36x3xf32>
    %195 = stablehlo.divide %189, %194 : tensor<36x3xf32>
    %196 = stablehlo.subtract %arg5, %195 : tensor<36x3xf32>
    return %141, %152, %163, %174, %185, %196, %63, %68, %73, %78, %83, %88, %58, %94, %100, %106, %112, %118, %124, %27 : tensor<3xf32>, tensor<3x3x2x4xf32>, tensor<3x3x4x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<36x3xf32>, tensor<3xf32>, tensor<3x3x2x4xf32>, tensor<3x3x4x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<36x3xf32>, tensor<i32>, tensor<3xf32>, tensor<3x3x2x4xf32>, tensor<3x3x4x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<36x3xf32>, tensor<f32>
  }
  func.func private @relu(%arg0: tensor<2x6x6x4xf32>) -> tensor<2x6x6x4xf32> {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<2x6x6x4xf32>
    %1 = stablehlo.maximum %arg0, %0 : tensor<2x6x6x4xf32>
    return %1 : tensor<2x6x6x4xf32>
  }
  func.func private @relu_0(%arg0: tensor<2x3x3x4xf32>) -> tensor<2x3x3x4xf32> {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<2x3x3x4xf32>
    %1 = stablehlo.maximum %arg0, %0 : tensor<2x3x3x4xf32>
    return %1 : tensor<2x3x3x4xf32>
  }
  func.func private @log_softmax(%arg0: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x1xf32>) {
    %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %0 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.maximum across dimensions = [1] : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>
    %cst_0 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<2xf32>
    %2 = stablehlo.maximum %1, %0 : tensor<2xf32>
    %3 = stablehlo.broadcast_in_dim %2, dims = [0] : (tensor<2xf32>) -> tensor<2x1xf32>
    %4 = stablehlo.broadcast_in_dim %3, dims = [0, 1] : (tensor<2x1xf32>) -> tensor<2x3xf32>
    %5 = stablehlo.subtract %arg0, %4 : tensor<2x3xf32>
    %6 = stablehlo.exponential %5 : tensor<2x3xf32>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %7 = stablehlo.reduce(%6 init: %cst_1) applies stablehlo.add across dimensions = [1] : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>
    %8 = stablehlo.broadcast_in_dim %7, dims = [0] : (tensor<2xf32>) -> tensor<2x1xf32>
    %9 = stablehlo.log %8 : tensor<2x1xf32>
    %10 = stablehlo.broadcast_in_dim %9, dims = [0, 1] : (tensor<2x1xf32>) -> tensor<2x3xf32>
    %11 = stablehlo.subtract %5, %10 : tensor<2x3xf32>
    return %11, %6, %8 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x1xf32>
  }
  func.func private @_one_hot(%arg0: tensor<2xi32>) -> tensor<2x3xf32> {
    %0 = stablehlo.broadcast_in_dim %arg0, dims = [0] : (tensor<2xi32>) -> tensor<2x1xi32>
    %1 = stablehlo.iota dim = 1 : tensor<1x3xi32>
    %2 = stablehlo.broadcast_in_dim %0, dims = [0, 1] : (tensor<2x1xi32>) -> tensor<2x3xi32>
    %3 = stablehlo.broadcast_in_dim %1, dims = [0, 1] : (tensor<1x3xi32>) -> tensor<2x3xi32>
    %4 = stablehlo.compare EQ, %2, %3, SIGNED : (tensor<2x3xi32>, tensor<2x3xi32>) -> tensor<2x3xi1>
    %5 = stablehlo.convert %4 : (tensor<2x3xi1>) -> tensor<2x3xf32>
    return %5 : tensor<2x3xf32>
  }
  func.func private @log_softmax_1(%arg0: tensor<2x3xf32>, %arg1: tensor<2x1xf32>, %arg2: tensor<2x3xf32>) -> tensor<2x3xf32> {
    %0 = stablehlo.negate %arg2 : tensor<2x3xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %1 = stablehlo.reduce(%0 init: %cst) applies stablehlo.add across dimensions = [1] : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>
    %2 = stablehlo.reshape %1 : (tensor<2xf32>) -> tensor<2x1xf32>
    %3 = stablehlo.divide %2, %arg1 : tensor<2x1xf32>
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %4 = stablehlo.reduce(%3 init: %cst_0) applies stablehlo.add across dimensions = [1] : (tensor<2x1xf32>, tensor<f32>) -> tensor<2xf32>
    %5 = stablehlo.broadcast_in_dim %4, dims = [0] : (tensor<2xf32>) -> tensor<2x3xf32>
    %6 = stablehlo.multiply %5, %arg0 : tensor<2x3xf32>
    %7 = stablehlo.add %arg2, %6 : tensor<2x3xf32>
    return %7 : tensor<2x3xf32>
  }
}
