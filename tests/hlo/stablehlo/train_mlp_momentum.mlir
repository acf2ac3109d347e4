module @jit_step attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<8xf32> {tf.aliasing_output = 0 : i32}, %arg1: tensor<3xf32> {tf.aliasing_output = 1 : i32}, %arg2: tensor<6x8xf32> {tf.aliasing_output = 2 : i32}, %arg3: tensor<8x3xf32> {tf.aliasing_output = 3 : i32}, %arg4: tensor<8xf32> {tf.aliasing_output = 4 : i32}, %arg5: tensor<3xf32> {tf.aliasing_output = 5 : i32}, %arg6: tensor<6x8xf32> {tf.aliasing_output = 6 : i32}, %arg7: tensor<8x3xf32> {tf.aliasing_output = 7 : i32}, %arg8: tensor<4x6xf32>, %arg9: tensor<4xi32>) -> (tensor<8xf32> {jax.result_info = "result[0]['b1']"}, tensor<3xf32> {jax.result_info = "result[0]['b2']"}, tensor<6x8xf32> {jax.result_info = "result[0]['w1']"}, tensor<8x3xf32> {jax.result_info = "result[0]['w2']"}, tensor<8xf32> {jax.result_info = "result[1]['b1']"}, tensor<3xf32> {jax.result_info = "result[1]['b2']"}, tensor<6x8xf32> {jax.result_info = "result[1]['w1']"}, tensor<8x3xf32> {jax.result_info = "result[1]['w2']"}, tensor<f32> {jax.result_info = "result[2]"}) {
    %0 = stablehlo.dot_general %arg8, %arg2, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x6xf32>, tensor<6x8xf32>) -> tensor<4x8xf32>
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
    %12 = call @_one_hot(%arg9) : (tensor<4xi32>) -> tensor<4x3xf32>
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
    %35 = stablehlo.dot_general %31, %arg8, contracting_dims = [0] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x8xf32>, tensor<4x6xf32>) -> tensor<8x6xf32>
    %36 = stablehlo.transpose %35, dims = [1, 0] : (tensor<8x6xf32>) -> tensor<6x8xf32>
    %cst_10 = stablehlo.constant dense<0.899999976> : tensor<f32>
    %37 = stablehlo.broadcast_in_dim %cst_10, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %38 = stablehlo.multiply %37, %arg4 : tensor<8xf32>
    %39 = stablehlo.add %38, %34 : tensor<8xf32>
    %cst_11 = stablehlo.constant dense<0.899999976> : tensor<f32>
    %40 = stablehlo.broadcast_in_dim %cst_11, dims = [] : (tensor<f32>) -> tensor<3xf32>
    %41 = stablehlo.multiply %40, %arg5 : tensor<3xf32>
    %42 = stablehlo.add %41, %26 : tensor<3xf32>
    %cst_12 = stablehlo.constant dense<0.899999976> : tensor<f32>
    %43 = stablehlo.broadcast_in_dim %cst_12, dims = [] : (tensor<f32>) -> tensor<6x8xf32>
    %44 = stablehlo.multiply %43, %arg6 : tensor<6x8xf32>
    %45 = stablehlo.add %44, %36 : tensor<6x8xf32>
    %cst_13 = stablehlo.constant dense<0.899999976> : tensor<f32>
    %46 = stablehlo.broadcast_in_dim %cst_13, dims = [] : (tensor<f32>) -> tensor<8x3xf32>
    %47 = stablehlo.multiply %46, %arg7 : tensor<8x3xf32>
    %48 = stablehlo.add %47, %28 : tensor<8x3xf32>
    %cst_14 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %49 = stablehlo.broadcast_in_dim %cst_14, dims = [] : (tensor<f32>) -> tensor<8xf32>
    %50 = stablehlo.multiply %49, %39 : tensor<8xf32>
    %51 = stablehlo.subtract %arg0, %50 : tensor<8xf32>
    %cst_15 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %52 = stablehlo.broadcast_in_dim %cst_15, dims = [] : (tensor<f32>) -> tensor<3xf32>
    %53 = stablehlo.multiply %52, %42 : tensor<3xf32>
    %54 = stablehlo.subtract %arg1, %53 : tensor<3xf32>
    %cst_16 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %55 = stablehlo.broadcast_in_dim %cst_16, dims = [] : (tensor<f32>) -> tensor<6x8xf32>
    %56 = stablehlo.multiply %55, %45 : tensor<6x8xf32>
    %57 = stablehlo.subtract %arg2, %56 : tensor<6x8xf32>
    %cst_17 = stablehlo.constant dense<1.000000e-01> : tensor<f32>
    %58 = stablehlo.broadcast_in_dim %cst_17, dims = [] : (tensor<f32>) -> tensor<8x3xf32>
    %59 = stablehlo.multiply %58, %48 : tensor<8x3xf32>
    %60 = stablehlo.subtract %arg3, %59 : tensor<8x3xf32>
    return %51, %54, %57, %60, %39, %42, %45, %48, %17 : tensor<8xf32>, tensor<3xf32>, tensor<6x8xf32>, tensor<8x3xf32>, tensor<8xf32>, tensor<3xf32>, tensor<6x8xf32>, tensor<8x3xf32>, tensor<f32>
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
