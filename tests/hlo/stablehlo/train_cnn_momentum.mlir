module @jit_step attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3xf32> {tf.aliasing_output = 0 : i32}, %arg1: tensor<3x3x2x4xf32> {tf.aliasing_output = 1 : i32}, %arg2: tensor<3x3x4x4xf32> {tf.aliasing_output = 2 : i32}, %arg3: tensor<4xf32> {tf.aliasing_output = 3 : i32}, %arg4: tensor<4xf32> {tf.aliasing_output = 4 : i32}, %arg5: tensor<36x3xf32> {tf.aliasing_output = 5 : i32}, %arg6: tensor<3xf32> {tf.aliasing_output = 6 : i32}, %arg7: tensor<3x3x2x4xf32> {tf.aliasing_output = 7 : i32}, %arg8: tensor<3x3x4x4xf32> {tf.aliasing_output = 8 : i32}, %arg9: tensor<4xf32> {tf.aliasing_output = 9 : i32}, %arg10: tensor<4xf32> {tf.aliasing_output = 10 : i32}, %arg11: tensor<36x3xf32> {tf.aliasing_output = 11 : i32}, %arg12: tensor<2x6x6x2xf32>, %arg13: tensor<2xi32>) -> (tensor<3xf32> {jax.result_info = "result[0]['b']"}, tensor<3x3x2x4xf32> {jax.result_info = "result[0]['k1']"}, tensor<3x3x4x4xf32> {jax.result_info = "result[0]['k2']"}, tensor<4xf32> {jax.result_info = "result[0]['kb1']"}, tensor<4xf32> {jax.result_info = "result[0]['kb2']"}, tensor<36x3xf32> {jax.result_info = "result[0]['w']"}, tensor<3xf32> {jax.result_info = "result[1]['b']"}, tensor<3x3x2x4xf32> {jax.result_info = "result[1]['k1']"}, tensor<3x3x4x4xf32> {jax.result_info = "result[1]['k2']"}, tensor<4xf32> {jax.result_info = "result[1]['kb1']"}, tensor<4xf32> {jax.result_info = "result[1]['kb2']"}, tensor<36x3xf32> {jax.result_info = "result[1]['w']"}, tensor<f32> {jax.result_info = "result[2]"}) {
    %0 = stablehlo.convolution(%arg12, %arg1) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 1], pad = [[1, 1], [1, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, 1], reverse = [false, false]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]} : (tensor<2x6x6x2xf32>, tensor<3x3x2x4xf32>) -> tensor<2x6x6x4xf32>
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
    ^bb0(%arg14: tensor<f32>, %arg15: tensor<f32>):
      %94 = stablehlo.maximum %arg14, %arg15 : tensor<f32>
      stablehlo.return %94 : tensor<f32>
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
    %22 = call @_one_hot(%arg13) : (tensor<2xi32>) -> tensor<2x3xf32>
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
    ^bb0(%arg14: tensor<f32>, %arg15: tensor<f32>):
      %94 = stablehlo.compare GE, %arg14, %arg15, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %94 : tensor<i1>
    }, {
    ^bb0(%arg14: tensor<f32>, %arg15: tensor<f32>):
      %94 = stablehlo.add %arg14, %arg15 : tensor<f32>
      stablehlo.return %94 : tensor<f32>
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
    %57 = stablehlo.convolution(%arg12, %53) dim_numbers = [f, 0, 1, b]x[i, 0, 1, o]->[0, 1, b, f], window = {stride = [1, 1], pad = [[1, 1], [1, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, 1], reverse = [false, false]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]} : (tensor<2x6x6x2xf32>, tensor<2x6x6x4xf32>) -> tensor<3x3x2x4xf32>
    %cst_17 = stablehlo.constant dense<0.899999976> : tensor<f32>
    %58 = stablehlo.broadcast_in_dim %cst_17, dims = [] : (tensor<f32>) -> tensor<3xf32>
    %59 = stablehlo.multiply %58, %arg6 : tensor<3xf32>
    %60 = stablehlo.add %59, %36 : tensor<3xf32>
    %cst_18 = stablehlo.constant dense<0.899999976> : tensor<f32>
    %61 = stablehlo.broadcast_in_dim %cst_18, dims = [] : (tensor<f32>) -> tensor<3x3x2x4xf32>
    %62 = stablehlo.multiply %61, %arg7 : tensor<3x3x2x4xf32>
    %63 = stablehlo.add %62, %57 : tensor<3x3x2x4xf32>
    %cst_19 = stablehlo.constant dense<0.899999976> : tensor<f32>
    %64 = stablehlo.broadcast_in_dim %cst_19, dims = [] : (tensor<f32>) -> tensor<3x3x4x4xf32>
    %65 = stablehlo.multiply %64, %arg8 : tensor<3x3x4x4xf32>
    %66 = stablehlo.add %65, %46 : tensor<3x3x4x4xf32>
    %cst_20 = stablehlo.constant dense<0.899999976> : tensor<f32>
    %67 = stablehlo.broadcast_in_dim %cst_20, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %68 = stablehlo.multiply %67, %arg9 : tensor<4xf32>
    %69 = stablehlo.add %68, %56 : tensor<4xf32>
    %cst_21 = stablehlo.constant dense<0.899999976> : tensor<f32>
    %70 = stablehlo.broadcast_in_dim %cst_21, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %71 = stablehlo.multiply %70, %arg10 : tensor<4xf32>
    %72 = stablehlo.add %71, %45 : tensor<4xf32>
    %cst_22 = stablehlo.constant dense<0.899999976> : tensor<f32>
    %73 = stablehlo.broadcast_in_dim %cst_22, dims = [] : (tensor<f32>) -> tensor<36x3xf32>
    %74 = stablehlo.multiply %73, %arg11 : tensor<36x3xf32>
    %75 = stablehlo.add %74, %38 : tensor<36x3xf32>
    %cst_23 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %76 = stablehlo.broadcast_in_dim %cst_23, dims = [] : (tensor<f32>) -> tensor<3xf32>
    %77 = stablehlo.multiply %76, %60 : tensor<3xf32>
    %78 = stablehlo.subtract %arg0, %77 : tensor<3xf32>
    %cst_24 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %79 = stablehlo.broadcast_in_dim %cst_24, dims = [] : (tensor<f32>) -> tensor<3x3x2x4xf32>
    %80 = stablehlo.multiply %79, %63 : tensor<3x3x2x4xf32>
    %81 = stablehlo.subtract %arg1, %80 : tensor<3x3x2x4xf32>
    %cst_25 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %82 = stablehlo.broadcast_in_dim %cst_25, dims = [] : (tensor<f32>) -> tensor<3x3x4x4xf32>
    %83 = stablehlo.multiply %82, %66 : tensor<3x3x4x4xf32>
    %84 = stablehlo.subtract %arg2, %83 : tensor<3x3x4x4xf32>
    %cst_26 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %85 = stablehlo.broadcast_in_dim %cst_26, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %86 = stablehlo.multiply %85, %69 : tensor<4xf32>
    %87 = stablehlo.subtract %arg3, %86 : tensor<4xf32>
    %cst_27 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %88 = stablehlo.broadcast_in_dim %cst_27, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %89 = stablehlo.multiply %88, %72 : tensor<4xf32>
    %90 = stablehlo.subtract %arg4, %89 : tensor<4xf32>
    %cst_28 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %91 = stablehlo.broadcast_in_dim %cst_28, dims = [] : (tensor<f32>) -> tensor<36x3xf32>
    %92 = stablehlo.multiply %91, %75 : tensor<36x3xf32>
    %93 = stablehlo.subtract %arg5, %92 : tensor<36x3xf32>
    return %78, %81, %84, %87, %90, %93, %60, %63, %66, %69, %72, %75, %27 : tensor<3xf32>, tensor<3x3x2x4xf32>, tensor<3x3x4x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<36x3xf32>, tensor<3xf32>, tensor<3x3x2x4xf32>, tensor<3x3x4x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<36x3xf32>, tensor<f32>
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
