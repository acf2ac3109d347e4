module @jit_step attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<3xf32> {tf.aliasing_output = 0 : i32}, %arg1: tensor<3x3x2x4xf32> {tf.aliasing_output = 1 : i32}, %arg2: tensor<4xf32> {tf.aliasing_output = 2 : i32}, %arg3: tensor<36x3xf32> {tf.aliasing_output = 3 : i32}, %arg4: tensor<3xf32> {tf.aliasing_output = 4 : i32}, %arg5: tensor<3x3x2x4xf32> {tf.aliasing_output = 5 : i32}, %arg6: tensor<4xf32> {tf.aliasing_output = 6 : i32}, %arg7: tensor<36x3xf32> {tf.aliasing_output = 7 : i32}, %arg8: tensor<i32> {tf.aliasing_output = 8 : i32}, %arg9: tensor<3xf32> {tf.aliasing_output = 9 : i32}, %arg10: tensor<3x3x2x4xf32> {tf.aliasing_output = 10 : i32}, %arg11: tensor<4xf32> {tf.aliasing_output = 11 : i32}, %arg12: tensor<36x3xf32> {tf.aliasing_output = 12 : i32}, %arg13: tensor<2x6x6x2xf32>, %arg14: tensor<2xi32>) -> (tensor<3xf32> {jax.result_info = "result[0]['b']"}, tensor<3x3x2x4xf32> {jax.result_info = "result[0]['k']"}, tensor<4xf32> {jax.result_info = "result[0]['kb']"}, tensor<36x3xf32> {jax.result_info = "result[0]['w']"}, tensor<3xf32> {jax.result_info = "result[1]['m']['b']"}, tensor<3x3x2x4xf32> {jax.result_info = "result[1]['m']['k']"}, tensor<4xf32> {jax.result_info = "result[1]['m']['kb']"}, tensor<36x3xf32> {jax.result_info = "result[1]['m']['w']"}, tensor<i32> {jax.result_info = "result[1]['t']"}, tensor<3xf32> {jax.result_info = "result[1]['v']['b']"}, tensor<3x3x2x4xf32> {jax.result_info = "result[1]['v']['k']"}, tensor<4xf32> {jax.result_info = "result[1]['v']['kb']"}, tensor<36x3xf32> {jax.result_info = "result[1]['v']['w']"}, tensor<f32> {jax.result_info = "result[2]"}) {
    %0 = stablehlo.convolution(%arg13, %arg1) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 1], pad = [[1, 1], [1, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, 1], reverse = [false, false]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]} : (tensor<2x6x6x2xf32>, tensor<3x3x2x4xf32>) -> tensor<2x6x6x4xf32>
    %1 = stablehlo.broadcast_in_dim %arg2, dims = [3] : (tensor<4xf32>) -> tensor<1x1x1x4xf32>
    %2 = stablehlo.broadcast_in_dim %1, dims = [0, 1, 2, 3] : (tensor<1x1x1x4xf32>) -> tensor<2x6x6x4xf32>
    %3 = stablehlo.add %0, %2 : tensor<2x6x6x4xf32>
    %4 = call @relu(%3) : (tensor<2x6x6x4xf32>) -> tensor<2x6x6x4xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %5 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<2x6x6x4xf32>
    %6 = stablehlo.compare GT, %3, %5, FLOAT : (tensor<2x6x6x4xf32>, tensor<2x6x6x4xf32>) -> tensor<2x6x6x4xi1>
    %cst_0 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %7 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<f32>
    %8 = "stablehlo.reduce_window"(%4, %7) <{base_dilations = array<i64: 1, 1, 1, 1>, padding = dense<0> : tensor<4x2xi64>, window_dilations = array<i64: 1, 1, 1, 1>, window_dimensions = array<i64: 1, 2, 2, 1>, window_strides = array<i64: 1, 2, 2, 1>}> ({
    ^bb0(%arg15: tensor<f32>, %arg16: tensor<f32>):
      %138 = stablehlo.maximum %arg15, %arg16 : tensor<f32>
      stablehlo.return %138 : tensor<f32>
    }) : (tensor<2x6x6x4xf32>, tensor<f32>) -> tensor<2x3x3x4xf32>
    %9 = stablehlo.reshape %8 : (tensor<2x3x3x4xf32>) -> tensor<2x36xf32>
    %10 = stablehlo.dot_general %9, %arg3, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<2x36xf32>, tensor<36x3xf32>) -> tensor<2x3xf32>
    %11 = stablehlo.broadcast_in_dim %arg0, dims = [1] : (tensor<3xf32>) -> tensor<1x3xf32>
    %12 = stablehlo.broadcast_in_dim %11, dims = [0, 1] : (tensor<1x3xf32>) -> tensor<2x3xf32>
    %13 = stablehlo.add %10, %12 : tensor<2x3xf32>
    %14:3 = call @log_softmax(%13) : (tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x1xf32>)
    %15 = call @_one_hot(%arg14) : (tensor<2xi32>) -> tensor<2x3xf32>
    %16 = stablehlo.multiply %14#0, %15 : tensor<2x3xf32>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %17 = stablehlo.reduce(%16 init: %cst_1) applies stablehlo.add across dimensions = [1] : (tensor<2x3xf32>, tensor<f32>) -> tensor<2xf32>
    %cst_2 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %18 = stablehlo.reduce(%17 init: %cst_2) applies stablehlo.add across dimensions = [0] : (tensor<2xf32>, tensor<f32>) -> tensor<f32>
    %cst_3 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %19 = stablehlo.divide %18, %cst_3 : tensor<f32>
    %20 = stablehlo.negate %19 : tensor<f32>
    %cst_4 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %21 = stablehlo.negate %cst_4 : tensor<f32>
    %cst_5 = stablehlo.constant dense<2.000000e+00> : tensor<f32>
    %22 = stablehlo.divide %21, %cst_5 : tensor<f32>
    %23 = stablehlo.broadcast_in_dim %22, dims = [] : (tensor<f32>) -> tensor<2xf32>
    %24 = stablehlo.broadcast_in_dim %23, dims = [0] : (tensor<2xf32>) -> tensor<2x3xf32>
    %25 = stablehlo.multiply %24, %15 : tensor<2x3xf32>
    %26 = call @log_softmax_0(%14#1, %14#2, %25) : (tensor<2x3xf32>, tensor<2x1xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
    %cst_6 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %27 = stablehlo.reduce(%26 init: %cst_6) applies stablehlo.add across dimensions = [0] : (tensor<2x3xf32>, tensor<f32>) -> tensor<3xf32>
    %28 = stablehlo.reshape %27 : (tensor<3xf32>) -> tensor<1x3xf32>
    %cst_7 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %29 = stablehlo.reduce(%28 init: %cst_7) applies stablehlo.add across dimensions = [0] : (tensor<1x3xf32>, tensor<f32>) -> tensor<3xf32>
    %30 = stablehlo.dot_general %26, %9, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<2x3xf32>, tensor<2x36xf32>) -> tensor<3x36xf32>
    %31 = stablehlo.transpose %30, dims = [1, 0] : (tensor<3x36xf32>) -> tensor<36x3xf32>
    %32 = stablehlo.dot_general %26, %arg3, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<2x3xf32>, tensor<36x3xf32>) -> tensor<2x36xf32>
    %33 = stablehlo.reshape %32 : (tensor<2x36xf32>) -> tensor<2x3x3x4xf32>
    %cst_8 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %34 = stablehlo.pad %4, %cst_8, low = [0, 0, 0, 0], high = [0, 0, 0, 0], interior = [0, 0, 0, 0] : (tensor<2x6x6x4xf32>, tensor<f32>) -> tensor<2x6x6x4xf32>
    %cst_9 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %35 = "stablehlo.select_and_scatter"(%34, %33, %cst_9) <{padding = dense<0> : tensor<4x2xi64>, window_dimensions = array<i64: 1, 2, 2, 1>, window_strides = array<i64: 1, 2, 2, 1>}> ({
    ^bb0(%arg15: tensor<f32>, %arg16: tensor<f32>):
      %138 = stablehlo.compare GE, %arg15, %arg16, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %138 : tensor<i1>
    }, {
    ^bb0(%arg15: tensor<f32>, %arg16: tensor<f32>):
      %138 = stablehlo.add %arg15, %arg16 : tensor<f32>
      stablehlo.return %138 : tensor<f32>
    }) : (tensor<2x6x6x4xf32>, tensor<2x3x3x4xf32>, tensor<f32>) -> tensor<2x6x6x4xf32>
    %36 = stablehlo.slice %35 [0:2, 0:6, 0:6, 0:4] : (tensor<2x6x6x4xf32>) -> tensor<2x6x6x4xf32>
    %cst_10 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %37 = stablehlo.broadcast_in_dim %cst_10, dims = [] : (tensor<f32>) -> tensor<2x6x6x4xf32>
    %38 = stablehlo.select %6, %36, %37 : tensor<2x6x6x4xi1>, tensor<2x6x6x4xf32>
    %cst_11 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %39 = stablehlo.reduce(%38 init: %cst_11) applies stablehlo.add across dimensions = [0, 1, 2] : (tensor<2x6x6x4xf32>, tensor<f32>) -> tensor<4xf32>
    %40 = stablehlo.reshape %39 : (tensor<4xf32>) -> tensor<1x1x1x4xf32>
    %cst_12 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %41 = stablehlo.reduce(%40 init: %cst_12) applies stablehlo.add across dimensions = [0, 1, 2] : (tensor<1x1x1x4xf32>, tensor<f32>) -> tensor<4xf32>
    %42 = stablehlo.convolution(%arg13, %38) dim_numbers = [f, 0, 1, b]x[i, 0, 1, o]->[0, 1, b, f], window = {stride = [1, 1], pad = [[1, 1], [1, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, 1], reverse = [false, false]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]} : (tensor<2x6x6x2xf32>, tensor<2x6x6x4xf32>) -> tensor<3x3x2x4xf32>
    %c = stablehlo.constant dense<1> : tensor<i32>
    %43 = stablehlo.add %arg8, %c : tensor<i32>
    %cst_13 = stablehlo.constant dense<0.899999976> : tensor<f32>
    %44 = stablehlo.broadcast_in_dim %cst_13, dims = [] : (tensor<f32>) -> tensor<3xf32>
    %45 = stablehlo.multiply %44, %arg4 : tensor<3xf32>
    %cst_14 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %46 = stablehlo.broadcast_in_dim %cst_14, dims = [] : (tensor<f32>) -> tensor<3xf32>
    %47 = stablehlo.multiply %46, %29 : tensor<3xf32>
    %48 = stablehlo.add %45, %47 : tensor<3xf32>
    %cst_15 = stablehlo.constant dense<0.899999976> : tensor<f32>
    %49 = stablehlo.broadcast_in_dim %cst_15, dims = [] : (tensor<f32>) -> tensor<3x3x2x4xf32>
    %50 = stablehlo.multiply %49, %arg5 : tensor<3x3x2x4xf32>
    %cst_16 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %51 = stablehlo.broadcast_in_dim %cst_16, dims = [] : (tensor<f32>) -> tensor<3x3x2x4xf32>
    %52 = stablehlo.multiply %51, %42 : tensor<3x3x2x4xf32>
    %53 = stablehlo.add %50, %52 : tensor<3x3x2x4xf32>
    %cst_17 = stablehlo.constant dense<0.899999976> : tensor<f32>
    %54 = stablehlo.broadcast_in_dim %cst_17, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %55 = stablehlo.multiply %54, %arg6 : tensor<4xf32>
    %cst_18 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %56 = stablehlo.broadcast_in_dim %cst_18, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %57 = stablehlo.multiply %56, %41 : tensor<4xf32>
    %58 = stablehlo.add %55, %57 : tensor<4xf32>
    %cst_19 = stablehlo.constant dense<0.899999976> : tensor<f32>
    %59 = stablehlo.broadcast_in_dim %cst_19, dims = [] : (tensor<f32>) -> tensor<36x3xf32>
    %60 = stablehlo.multiply %59, %arg7 : tensor<36x3xf32>
    %cst_20 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %61 = stablehlo.broadcast_in_dim %cst_20, dims = [] : (tensor<f32>) -> tensor<36x3xf32>
    %62 = stablehlo.multiply %61, %31 : tensor<36x3xf32>
    %63 = stablehlo.add %60, %62 : tensor<36x3xf32>
    %cst_21 = stablehlo.constant dense<9.990000e-01> : tensor<f32>
    %64 = stablehlo.broadcast_in_dim %cst_21, dims = [] : (tensor<f32>) -> tensor<3xf32>
    %65 = stablehlo.multiply %64, %arg9 : tensor<3xf32>
    %cst_22 = stablehlo.constant dense<1.000000e-03> : tensor<f32>
    %66 = stablehlo.broadcast_in_dim %cst_22, dims = [] : (tensor<f32>) -> tensor<3xf32>
    %67 = stablehlo.multiply %66, %29 : tensor<3xf32>
    %68 = stablehlo.multiply %67, %29 : tensor<3xf32>
    %69 = stablehlo.add %65, %68 : tensor<3xf32>
    %cst_23 = stablehlo.constant dense<9.990000e-01> : tensor<f32>
    %70 = stablehlo.broadcast_in_dim %cst_23, dims = [] : (tensor<f32>) -> tensor<3x3x2x4xf32>
    %71 = stablehlo.multiply %70, %arg10 : tensor<3x3x2x4xf32>
    %cst_24 = stablehlo.constant dense<1.000000e-03> : tensor<f32>
    %72 = stablehlo.broadcast_in_dim %cst_24, dims = [] : (tensor<f32>) -> tensor<3x3x2x4xf32>
    %73 = stablehlo.multiply %72, %42 : tensor<3x3x2x4xf32>
    %74 = stablehlo.multiply %73, %42 : tensor<3x3x2x4xf32>
    %75 = stablehlo.add %71, %74 : tensor<3x3x2x4xf32>
    %cst_25 = stablehlo.constant dense<9.990000e-01> : tensor<f32>
    %76 = stablehlo.broadcast_in_dim %cst_25, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %77 = stablehlo.multiply %76, %arg11 : tensor<4xf32>
    %cst_26 = stablehlo.constant dense<1.000000e-03> : tensor<f32>
    %78 = stablehlo.broadcast_in_dim %cst_26, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %79 = stablehlo.multiply %78, %41 : tensor<4xf32>
    %80 = stablehlo.multiply %79, %41 : tensor<4xf32>
    %81 = stablehlo.add %77, %80 : tensor<4xf32>
    %cst_27 = stablehlo.constant dense<9.990000e-01> : tensor<f32>
    %82 = stablehlo.broadcast_in_dim %cst_27, dims = [] : (tensor<f32>) -> tensor<36x3xf32>
    %83 = stablehlo.multiply %82, %arg12 : tensor<36x3xf32>
    %cst_28 = stablehlo.constant dense<1.000000e-03> : tensor<f32>
    %84 = stablehlo.broadcast_in_dim %cst_28, dims = [] : (tensor<f32>) -> tensor<36x3xf32>
    %85 = stablehlo.multiply %84, %31 : tensor<36x3xf32>
    %86 = stablehlo.multiply %85, %31 : tensor<36x3xf32>
    %87 = stablehlo.add %83, %86 : tensor<36x3xf32>
    %88 = stablehlo.convert %43 : (tensor<i32>) -> tensor<f32>
    %cst_29 = stablehlo.constant dense<0.899999976> : tensor<f32>
    %89 = stablehlo.power %cst_29, %88 : tensor<f32>
    %cst_30 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %90 = stablehlo.subtract %cst_30, %89 : tensor<f32>
    %91 = stablehlo.convert %43 : (tensor<i32>) -> tensor<f32>
    %cst_31 = stablehlo.constant dense<9.990000e-01> : tensor<f32>
    %92 = stablehlo.power %cst_31, %91 : tensor<f32>
    %cst_32 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %93 = stablehlo.subtract %cst_32, %92 : tensor<f32>
    %94 = stablehlo.broadcast_in_dim %90, dims = [] : (tensor<f32>) -> tensor<3xf32>
    %95 = stablehlo.divide %48, %94 : tensor<3xf32>
    %cst_33 = stablehlo.constant dense<0.00999999977> : tensor<f32>
    %96 = stablehlo.broadcast_in_dim %cst_33, dims = [] : (tensor<f32>) -> tensor<3xf32>
    %97 = stablehlo.multiply %96, %95 : tensor<3xf32>
    %98 = stablehlo.broadcast_in_dim %93, dims = [] : (tensor<f32>) -> tensor<3xf32>
    %99 = stablehlo.divide %69, %98 : tensor<3xf32>
    %100 = stablehlo.sqrt %99 : tensor<3xf32>
    %cst_34 = stablehlo.constant dense<9.99999993E-9> : tensor<f32>
    %101 = stablehlo.broadcast_in_dim %cst_34, dims = [] : (tensor<f32>) -> tensor<3xf32>
    %102 = stablehlo.add %100, %101 : tensor<3xf32>
    %103 = stablehlo.divide %97, %102 : tensor<3xf32>
    %104 = stablehlo.subtract %arg0, %103 : tensor<3xf32>
    %105 = stablehlo.broadcast_in_dim %90, dims = [] : (tensor<f32>) -> tensor<3x3x2x4xf32>
    %106 = stablehlo.divide %53, %105 : tensor<3x3x2x4xf32>
    %cst_35 = stablehlo.constant dense<0.00999999977> : tensor<f32>
    %107 = stablehlo.broadcast_in_dim %cst_35, dims = [] : (tensor<f32>) -> tensor<3x3x2x4xf32>
    %108 = stablehlo.multiply %107, %106 : tensor<3x3x2x4xf32>
    %109 = stablehlo.broadcast_in_dim %93, dims = [] : (tensor<f32>) -> tensor<3x3x2x4xf32>
    %110 = stablehlo.divide %75, %109 : tensor<3x3x2x4xf32>
    %111 = stablehlo.sqrt %110 : tensor<3x3x2x4xf32>
    %cst_36 = stablehlo.constant dense<9.99999993E-9> : tensor<f32>
    %112 = stablehlo.broadcast_in_dim %cst_36, dims = [] : (tensor<f32>) -> tensor<3x3x2x4xf32>
    %113 = stablehlo.add %111, %112 : tensor<3x3x2x4xf32>
    %114 = stablehlo.divide %108, %113 : tensor<3x3x2x4xf32>
    %115 = stablehlo.subtract %arg1, %114 : tensor<3x3x2x4xf32>
    %116 = stablehlo.broadcast_in_dim %90, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %117 = stablehlo.divide %58, %116 : tensor<4xf32>
    %cst_37 = stablehlo.constant dense<0.00999999977> : tensor<f32>
    %118 = stablehlo.broadcast_in_dim %cst_37, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %119 = stablehlo.multiply %118, %117 : tensor<4xf32>
    %120 = stablehlo.broadcast_in_dim %93, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %121 = stablehlo.divide %81, %120 : tensor<4xf32>
    %122 = stablehlo.sqrt %121 : tensor<4xf32>
    %cst_38 = stablehlo.constant dense<9.99999993E-9> : tensor<f32>
    %123 = stablehlo.broadcast_in_dim %cst_38, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %124 = stablehlo.add %122, %123 : tensor<4xf32>
    %125 = stablehlo.divide %119, %124 : tensor<4xf32>
    %126 = stablehlo.subtract %arg2, %125 : tensor<4xf32>
    %127 = stablehlo.broadcast_in_dim %90, dims = [] : (tensor<f32>) -> tensor<36x3xf32>
    %128 = stablehlo.divide %63, %127 : tensor<36x3xf32>
    %cst_39 = stablehlo.constant dense<0.00999999977> : tensor<f32>
    %129 = stablehlo.broadcast_in_dim %cst_39, dims = [] : (tensor<f32>) -> tensor<36x3xf32>
    %130 = stablehlo.multiply %129, %128 : tensor<36x3xf32>
    %131 = stablehlo.broadcast_in_dim %93, dims = [] : (tensor<f32>) -> tensor<36x3xf32>
    %132 = stablehlo.divide %87, %131 : tensor<36x3xf32>
    %133 = stablehlo.sqrt %132 : tensor<36x3xf32>
    %cst_40 = stablehlo.constant dense<9.99999993E-9> : tensor<f32>
    %134 = stablehlo.broadcast_in_dim %cst_40, dims = [] : (tensor<f32>) -> tensor<36x3xf32>
    %135 = stablehlo.add %133, %134 : tensor<36x3xf32>
    %136 = stablehlo.divide %130, %135 : tensor<36x3xf32>
    %137 = stablehlo.subtract %arg3, %136 : tensor<36x3xf32>
    return %104, %115, %126, %137, %48, %53, %58, %63, %43, %69, %75, %81, %87, %20 : tensor<3xf32>, tensor<3x3x2x4xf32>, tensor<4xf32>, tensor<36x3xf32>, tensor<3xf32>, tensor<3x3x2x4xf32>, tensor<4xf32>, tensor<36x3xf32>, tensor<i32>, tensor<3xf32>, tensor<3x3x2x4xf32>, tensor<4xf32>, tensor<36x3xf32>, tensor<f32>
  }
  func.func private @relu(%arg0: tensor<2x6x6x4xf32>) -> tensor<2x6x6x4xf32> {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<2x6x6x4xf32>
    %1 = stablehlo.maximum %arg0, %0 : tensor<2x6x6x4xf32>
    return %1 : tensor<2x6x6x4xf32>
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
  func.func private @log_softmax_0(%arg0: tensor<2x3xf32>, %arg1: tensor<2x1xf32>, %arg2: tensor<2x3xf32>) -> tensor<2x3xf32> {
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
