module @jit_step attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<8xf32> {tf.aliasing_output = 0 : i32}, %arg1: tensor<3xf32> {tf.aliasing_output = 1 : i32}, %arg2: tensor<6x8xf32> {tf.aliasing_output = 2 : i32}, %arg3: tensor<8x3xf32> {tf.aliasing_output = 3 : i32}, %arg4: tensor<8xf32> {tf.aliasing_output = 4 : i32}, %arg5: tensor<3xf32> {tf.aliasing_output = 5 : i32}, %arg6: tensor<6x8xf32> {tf.aliasing_output = 6 : i32}, %arg7: tensor<8x3xf32> {tf.aliasing_output = 7 : i32}, %arg8: tensor<i32> {tf.aliasing_output = 8 : i32}, %arg9: tensor<8xf32> {tf.aliasing_output = 9 : i32}, %arg10: tensor<3xf32> {tf.aliasing_output = 10 : i32}, %arg11: tensor<6x8xf32> {tf.aliasing_output = 11 : i32}, %arg12: tensor<8x3xf32> {tf.aliasing_output = 12 : i32}, %arg13: tensor<4x6xf32>, %arg14: tensor<4xi32>) -> (tensor<8xf32> {jax.result_info = "result[0]['b1']"}, tensor<3xf32> {jax.result_info = "result[0]['b2']"}, tensor<6x8xf32> {jax.result_info = "result[0]['w1']"}, tensor<8x3xf32> {jax.result_info = "result[0]['w2']"}, tensor<8xf32> {jax.result_info = "result[1]['m']['b1']"}, tensor<3xf32> {jax.result_info = "result[1]['m']['b2']"}, tensor<6x8xf32> {jax.result_info = "result[1]['m']['w1']"}, tensor<8x3xf32> {jax.result_info = "result[1]['m']['w2']"}, tensor<i32> {jax.result_info = "result[1]['t']"}, tensor<8xf32> {jax.result_info = "result[1]['v']['b1']"}, tensor<3xf32> {jax.result_info = "result[1]['v']['b2']"}, tensor<6x8xf32> {jax.result_info = "result[1]['v']['w1']"}, tensor<8x3xf32> {jax.result_info = "result[1]['v']['w2']"}, tensor<f32> {jax.result_info = "result[2]"}) {
    %0 = stablehlo.dot_general %arg13, %arg2, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x6xf32>, tensor<6x8xf32>) -> tensor<4x8xf32>
    %1 = stablehlo.broadcast_in_dim %arg0, dims = [1] : (tensor<8xf32>) -> tensor<1x8xf32>
    %2 = stablehlo.broadcast_in_dim %1, dims = [0, 1] : (tensor<1x8xf32>) -> tensor<4x8xf32>
    %3 = stablehlo.add %0, %2 : tensor<4x8xf32>
    %4 = call @relu(%3) : (tensor<4x8xf32>) -> tensor<4x8xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %5 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<4x8xf32>
    %6 = stablehlo.compare GT, %3, %5, FLOAT : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xi1>
    %7 = stablehlo.dot_general %4, %arg3, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x8xf32>, tensor<8x3xf32>) -> tensor<4x3xf32>
    %8 = stablehlo.broadcast_in_dim %arg1, dims = [1] : (tensor<3xf32>) -> tensor<1x3xf32>
    %9 = stablehlo.broadcast_in_dim %8, dims = [0, 1] : (tensor<1x3xf32>) -> tensor<4x3xf32>
    %10 = stablehlo.add %7, %9 : tensor<4x3xf32>
    %11:3 = call @log_softmax(%10) : (tensor<4x3xf32>) -> (tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x1xf32>)
    %12 = call @_one_hot(%arg14) : (tensor<4xi32>) -> tensor<4x3xf32>
    %13 = stablehlo.multiply %11#0, %12 : tensor<4x3xf32>
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %14 = stablehlo.reduce(%13 init: %cst_0) applies stablehlo.add across dimensions = [1] : (tensor<4x3xf32>, tensor<f32>) -> tensor<4xf32>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %15 = stablehlo.reduce(%14 init: %cst_1) applies stablehlo.add across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
    %cst_2 = stablehlo.constant dense<4.000000e+00> : tensor<f32>
    %16 = stablehlo.divide %15, %cst_2 : tensor<f32>
    %17 = stablehlo.negate %16 : tensor<f32>
    %cst_3 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %18 = stablehlo.negate %cst_3 : tensor<f32>
    %cst_4 = stablehlo.constant dense<4.000000e+00> : tensor<f32>
    %19 = stablehlo.divide %18, %cst_4 : tensor<f32>
    %20 = stablehlo.broadcast_in_dim %19, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %21 = stablehlo.broadcast_in_dim %20, dims = [0] : (tensor<4xf32>) -> tensor<4x3xf32>
    %22 = stablehlo.multiply %21, %12 : tensor<4x3xf32>
    %23 = call @log_softmax_0(%11#1, %11#2, %22) : (tensor<4x3xf32>, tensor<4x1xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
    %cst_5 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %24 = stablehlo.reduce(%23 init: %cst_5) applies stablehlo.add across dimensions = [0] : (tensor<4x3xf32>, tensor<f32>) -> tensor<3xf32>
    %25 = stablehlo.reshape %24 : (tensor<3xf32>) -> tensor<1x3xf32>
    %cst_6 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %26 = stablehlo.reduce(%25 init: %cst_6) applies stablehlo.add across dimensions = [0] : (tensor<1x3xf32>, tensor<f32>) -> tensor<3xf32>
    %27 = stablehlo.dot_general %23, %4, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x3xf32>, tensor<4x8xf32>) -> tensor<3x8xf32>
    %28 = stablehlo.transpose %27, dims = [1, 0] : (tensor<3x8xf32>) -> tensor<8x3xf32>
    %29 = stablehlo.dot_general %23, %arg3, contracting_dims = [1] x [1], precision = [DEFAULT, DEFAULT] : (tensor<4x3xf32>, tensor<8x3xf32>) -> tensor<4x8xf32>
    %cst_7 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %30 = stablehlo.broadcast_in_dim %cst_7, dims = [] : (tensor<f32>) -> tensor<4x8xf32>
    %31 = stablehlo.select %6, %29, %30 : tensor<4x8xi1>, tensor<4x8xf32>
    %cst_8 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %32 = stablehlo.reduce(%31 init: %cst_8) applies stablehlo.add across dimensions = [0] : (tensor<4x8xf32>, tensor<f32>) -> tensor<8xf32>
    %33 = stablehlo.reshape %32 : (tensor<8xf32>) -> tensor<1x8xf32>
    %cst_9 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %34 = stablehlo.reduce(%33 init: %cst_9) applies stablehlo.add across dimensions = [0] : (tensor<1x8xf32>, tensor<f32>) -> tensor<8xf32>
    %35 = stablehlo.dot_general %31, %arg13, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x8xf32>, tensor<4x6xf32>) -> tensor<8x6xf32>
    %36 = stablehlo.transpose %35, dims = [1, 0] : (tensor<8x6xf32>) -> tensor<6x8xf32>
    %c = stablehlo.constant dense<1> : tensor<i32>
    %37 = stablehlo.add %arg8, %c : tensor<i32>
    %cst_10 = stablehlo.constant dense<0.899999976> : tensor<f32>
    %38 = stablehlo.broadcast_in_dim %cst_10, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %39 = stablehlo.multiply %38, %arg4 : tensor<8xf32>
    %cst_11 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %40 = stablehlo.broadcast_in_dim %cst_11, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %41 = stablehlo.multiply %40, %34 : tensor<8xf32>
    %42 = stablehlo.add %39, %41 : tensor<8xf32>
    %cst_12 = stablehlo.constant dense<0.899999976> : tensor<f32>
    %43 = stablehlo.broadcast_in_dim %cst_12, dims = [] : (tensor<f32>) -> tensor<3xf32>
    %44 = stablehlo.multiply %43, %arg5 : tensor<3xf32>
    %cst_13 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %45 = stablehlo.broadcast_in_dim %cst_13, dims = [] : (tensor<f32>) -> tensor<3xf32>
    %46 = stablehlo.multiply %45, %26 : tensor<3xf32>
    %47 = stablehlo.add %44, %46 : tensor<3xf32>
    %cst_14 = stablehlo.constant dense<0.899999976> : tensor<f32>
    %48 = stablehlo.broadcast_in_dim %cst_14, dims = [] : (tensor<f32>) -> tensor<6x8xf32>
    %49 = stablehlo.multiply %48, %arg6 : tensor<6x8xf32>
    %cst_15 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %50 = stablehlo.broadcast_in_dim %cst_15, dims = [] : (tensor<f32>) -> tensor<6x8xf32>
    %51 = stablehlo.multiply %50, %36 : tensor<6x8xf32>
    %52 = stablehlo.add %49, %51 : tensor<6x8xf32>
    %cst_16 = stablehlo.constant dense<0.899999976> : tensor<f32>
    %53 = stablehlo.broadcast_in_dim %cst_16, dims = [] : (tensor<f32>) -> tensor<8x3xf32>
    %54 = stablehlo.multiply %53, %arg7 : tensor<8x3xf32>
    %cst_17 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %55 = stablehlo.broadcast_in_dim %cst_17, dims = [] : (tensor<f32>) -> tensor<8x3xf32>
    %56 = stablehlo.multiply %55, %28 : tensor<8x3xf32>
    %57 = stablehlo.add %54, %56 : tensor<8x3xf32>
    %cst_18 = stablehlo.constant dense<9.990000e-01> : tensor<f32>
    %58 = stablehlo.broadcast_in_dim %cst_18, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %59 = stablehlo.multiply %58, %arg9 : tensor<8xf32>
    %cst_19 = stablehlo.constant dense<1.000000e-03> : tensor<f32>
    %60 = stablehlo.broadcast_in_dim %cst_19, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %61 = stablehlo.multiply %60, %34 : tensor<8xf32>
    %62 = stablehlo.multiply %61, %34 : tensor<8xf32>
    %63 = stablehlo.add %59, %62 : tensor<8xf32>
    %cst_20 = stablehlo.constant dense<9.990000e-01> : tensor<f32>
    %64 = stablehlo.broadcast_in_dim %cst_20, dims = [] : (tensor<f32>) -> tensor<3xf32>
    %65 = stablehlo.multiply %64, %arg10 : tensor<3xf32>
    %cst_21 = stablehlo.constant dense<1.000000e-03> : tensor<f32>
    %66 = stablehlo.broadcast_in_dim %cst_21, dims = [] : (tensor<f32>) -> tensor<3xf32>
    %67 = stablehlo.multiply %66, %26 : tensor<3xf32>
    %68 = stablehlo.multiply %67, %26 : tensor<3xf32>
    %69 = stablehlo.add %65, %68 : tensor<3xf32>
    %cst_22 = stablehlo.constant dense<9.990000e-01> : tensor<f32>
    %70 = stablehlo.broadcast_in_dim %cst_22, dims = [] : (tensor<f32>) -> tensor<6x8xf32>
    %71 = stablehlo.multiply %70, %arg11 : tensor<6x8xf32>
    %cst_23 = stablehlo.constant dense<1.000000e-03> : tensor<f32>
    %72 = stablehlo.broadcast_in_dim %cst_23, dims = [] : (tensor<f32>) -> tensor<6x8xf32>
    %73 = stablehlo.multiply %72, %36 : tensor<6x8xf32>
    %74 = stablehlo.multiply %73, %36 : tensor<6x8xf32>
    %75 = stablehlo.add %71, %74 : tensor<6x8xf32>
    %cst_24 = stablehlo.constant dense<9.990000e-01> : tensor<f32>
    %76 = stablehlo.broadcast_in_dim %cst_24, dims = [] : (tensor<f32>) -> tensor<8x3xf32>
    %77 = stablehlo.multiply %76, %arg12 : tensor<8x3xf32>
    %cst_25 = stablehlo.constant dense<1.000000e-03> : tensor<f32>
    %78 = stablehlo.broadcast_in_dim %cst_25, dims = [] : (tensor<f32>) -> tensor<8x3xf32>
    %79 = stablehlo.multiply %78, %28 : tensor<8x3xf32>
    %80 = stablehlo.multiply %79, %28 : tensor<8x3xf32>
    %81 = stablehlo.add %77, %80 : tensor<8x3xf32>
    %82 = stablehlo.convert %37 : (tensor<i32>) -> tensor<f32>
    %cst_26 = stablehlo.constant dense<0.899999976> : tensor<f32>
    %83 = stablehlo.power %cst_26, %82 : tensor<f32>
    %cst_27 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %84 = stablehlo.subtract %cst_27, %83 : tensor<f32>
    %85 = stablehlo.convert %37 : (tensor<i32>) -> tensor<f32>
    %cst_28 = stablehlo.constant dense<9.990000e-01> : tensor<f32>
    %86 = stablehlo.power %cst_28, %85 : tensor<f32>
    %cst_29 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %87 = stablehlo.subtract %cst_29, %86 : tensor<f32>
    %88 = stablehlo.broadcast_in_dim %84, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %89 = stablehlo.divide %42, %88 : tensor<8xf32>
    %cst_30 = stablehlo.constant dense<0.00999999977> : tensor<f32>
    %90 = stablehlo.broadcast_in_dim %cst_30, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %91 = stablehlo.multiply %90, %89 : tensor<8xf32>
    %92 = stablehlo.broadcast_in_dim %87, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %93 = stablehlo.divide %63, %92 : tensor<8xf32>
    %94 = stablehlo.sqrt %93 : tensor<8xf32>
    %cst_31 = stablehlo.constant dense<9.99999993E-9> : tensor<f32>
    %95 = stablehlo.broadcast_in_dim %cst_31, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %96 = stablehlo.add %94, %95 : tensor<8xf32>
    %97 = stablehlo.divide %91, %96 : tensor<8xf32>
    %98 = stablehlo.subtract %arg0, %97 : tensor<8xf32>
    %99 = stablehlo.broadcast_in_dim %84, dims = [] : (tensor<f32>) -> tensor<3xf32>
    %100 = stablehlo.divide %47, %99 : tensor<3xf32>
    %cst_32 = stablehlo.constant dense<0.00999999977> : tensor<f32>
    %101 = stablehlo.broadcast_in_dim %cst_32, dims = [] : (tensor<f32>) -> tensor<3xf32>
    %102 = stablehlo.multiply %101, %100 : tensor<3xf32>
    %103 = stablehlo.broadcast_in_dim %87, dims = [] : (tensor<f32>) -> tensor<3xf32>
    %104 = stablehlo.divide %69, %103 : tensor<3xf32>
    %105 = stablehlo.sqrt %104 : tensor<3xf32>
    %cst_33 = stablehlo.constant dense<9.99999993E-9> : tensor<f32>
    %106 = stablehlo.broadcast_in_dim %cst_33, dims = [] : (tensor<f32>) -> tensor<3xf32>
    %107 = stablehlo.add %105, %106 : tensor<3xf32>
    %108 = stablehlo.divide %102, %107 : tensor<3xf32>
    %109 = stablehlo.subtract %arg1, %108 : tensor<3xf32>
    %110 = stablehlo.broadcast_in_dim %84, dims = [] : (tensor<f32>) -> tensor<6x8xf32>
    %111 = stablehlo.divide %52, %110 : tensor<6x8xf32>
    %cst_34 = stablehlo.constant dense<0.00999999977> : tensor<f32>
    %112 = stablehlo.broadcast_in_dim %cst_34, dims = [] : (tensor<f32>) -> tensor<6x8xf32>
    %113 = stablehlo.multiply %112, %111 : tensor<6x8xf32>
    %114 = stablehlo.broadcast_in_dim %87, dims = [] : (tensor<f32>) -> tensor<6x8xf32>
    %115 = stablehlo.divide %75, %114 : tensor<6x8xf32>
    %116 = stablehlo.sqrt %115 : tensor<6x8xf32>
    %cst_35 = stablehlo.constant dense<9.99999993E-9> : tensor<f32>
    %117 = stablehlo.broadcast_in_dim %cst_35, dims = [] : (tensor<f32>) -> tensor<6x8xf32>
    %118 = stablehlo.add %116, %117 : tensor<6x8xf32>
    %119 = stablehlo.divide %113, %118 : tensor<6x8xf32>
    %120 = stablehlo.subtract %arg2, %119 : tensor<6x8xf32>
    %121 = stablehlo.broadcast_in_dim %84, dims = [] : (tensor<f32>) -> tensor<8x3xf32>
    %122 = stablehlo.divide %57, %121 : tensor<8x3xf32>
    %cst_36 = stablehlo.constant dense<0.00999999977> : tensor<f32>
    %123 = stablehlo.broadcast_in_dim %cst_36, dims = [] : (tensor<f32>) -> tensor<8x3xf32>
    %124 = stablehlo.multiply %123, %122 : tensor<8x3xf32>
    %125 = stablehlo.broadcast_in_dim %87, dims = [] : (tensor<f32>) -> tensor<8x3xf32>
    %126 = stablehlo.divide %81, %125 : tensor<8x3xf32>
    %127 = stablehlo.sqrt %126 : tensor<8x3xf32>
    %cst_37 = stablehlo.constant dense<9.99999993E-9> : tensor<f32>
    %128 = stablehlo.broadcast_in_dim %cst_37, dims = [] : (tensor<f32>) -> tensor<8x3xf32>
    %129 = stablehlo.add %127, %128 : tensor<8x3xf32>
    %130 = stablehlo.divide %124, %129 : tensor<8x3xf32>
    %131 = stablehlo.subtract %arg3, %130 : tensor<8x3xf32>
    return %98, %109, %120, %131, %42, %47, %52, %57, %37, %63, %69, %75, %81, %17 : tensor<8xf32>, tensor<3xf32>, tensor<6x8xf32>, tensor<8x3xf32>, tensor<8xf32>, tensor<3xf32>, tensor<6x8xf32>, tensor<8x3xf32>, tensor<i32>, tensor<8xf32>, tensor<3xf32>, tensor<6x8xf32>, tensor<8x3xf32>, tensor<f32>
  }
  func.func private @relu(%arg0: tensor<4x8xf32>) -> tensor<4x8xf32> {
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<4x8xf32>
    %1 = stablehlo.maximum %arg0, %0 : tensor<4x8xf32>
    return %1 : tensor<4x8xf32>
  }
  func.func private @log_softmax(%arg0: tensor<4x3xf32>) -> (tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x1xf32>) {
    %cst = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %0 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.maximum across dimensions = [1] : (tensor<4x3xf32>, tensor<f32>) -> tensor<4xf32>
    %cst_0 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<4xf32>
    %2 = stablehlo.maximum %1, %0 : tensor<4xf32>
    %3 = stablehlo.broadcast_in_dim %2, dims = [0] : (tensor<4xf32>) -> tensor<4x1xf32>
    %4 = stablehlo.broadcast_in_dim %3, dims = [0, 1] : (tensor<4x1xf32>) -> tensor<4x3xf32>
    %5 = stablehlo.subtract %arg0, %4 : tensor<4x3xf32>
    %6 = stablehlo.exponential %5 : tensor<4x3xf32>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %7 = stablehlo.reduce(%6 init: %cst_1) applies stablehlo.add across dimensions = [1] : (tensor<4x3xf32>, tensor<f32>) -> tensor<4xf32>
    %8 = stablehlo.broadcast_in_dim %7, dims = [0] : (tensor<4xf32>) -> tensor<4x1xf32>
    %9 = stablehlo.log %8 : tensor<4x1xf32>
    %10 = stablehlo.broadcast_in_dim %9, dims = [0, 1] : (tensor<4x1xf32>) -> tensor<4x3xf32>
    %11 = stablehlo.subtract %5, %10 : tensor<4x3xf32>
    return %11, %6, %8 : tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x1xf32>
  }
  func.func private @_one_hot(%arg0: tensor<4xi32>) -> tensor<4x3xf32> {
    %0 = stablehlo.broadcast_in_dim %arg0, dims = [0] : (tensor<4xi32>) -> tensor<4x1xi32>
    %1 = stablehlo.iota dim = 1 : tensor<1x3xi32>
    %2 = stablehlo.broadcast_in_dim %0, dims = [0, 1] : (tensor<4x1xi32>) -> tensor<4x3xi32>
    %3 = stablehlo.broadcast_in_dim %1, dims = [0, 1] : (tensor<1x3xi32>) -> tensor<4x3xi32>
    %4 = stablehlo.compare EQ, %2, %3, SIGNED : (tensor<4x3xi32>, tensor<4x3xi32>) -> tensor<4x3xi1>
    %5 = stablehlo.convert %4 : (tensor<4x3xi1>) -> tensor<4x3xf32>
    return %5 : tensor<4x3xf32>
  }
  func.func private @log_softmax_0(%arg0: tensor<4x3xf32>, %arg1: tensor<4x1xf32>, %arg2: tensor<4x3xf32>) -> tensor<4x3xf32> {
    %0 = stablehlo.negate %arg2 : tensor<4x3xf32>
    %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %1 = stablehlo.reduce(%0 init: %cst) applies stablehlo.add across dimensions = [1] : (tensor<4x3xf32>, tensor<f32>) -> tensor<4xf32>
    %2 = stablehlo.reshape %1 : (tensor<4xf32>) -> tensor<4x1xf32>
    %3 = stablehlo.divide %2, %arg1 : tensor<4x1xf32>
    %cst_0 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %4 = stablehlo.reduce(%3 init: %cst_0) applies stablehlo.add across dimensions = [1] : (tensor<4x1xf32>, tensor<f32>) -> tensor<4xf32>
    %5 = stablehlo.broadcast_in_dim %4, dims = [0] : (tensor<4xf32>) -> tensor<4x3xf32>
    %6 = stablehlo.multiply %5, %arg0 : tensor<4x3xf32>
    %7 = stablehlo.add %arg2, %6 : tensor<4x3xf32>
    return %7 : tensor<4x3xf32>
  }
}
