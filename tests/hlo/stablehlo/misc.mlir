module @jit_misc attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x6xf32>, %arg1: tensor<4xi32>) -> (tensor<5x8xf32> {jax.result_info = "result[0]"}, tensor<4x6xf32> {jax.result_info = "result[1]"}, tensor<6x4xf32> {jax.result_info = "result[2]"}, tensor<4xf32> {jax.result_info = "result[3]"}, tensor<2xf32> {jax.result_info = "result[4]"}) {
    %cst = stablehlo.constant dense<[1.000000e+00, 2.000000e+00, 0x7F800000, 5.000000e-01, -0.000000e+00, 3.000000e+00]> : tensor<6xf32>
    %c = stablehlo.constant dense<[1, -2, 3, 7]> : tensor<4xi32>
    %cst_0 = stablehlo.constant dense<-1.500000e+00> : tensor<f32>
    %0 = call @_pad(%arg0, %cst_0) : (tensor<4x6xf32>, tensor<f32>) -> tensor<5x8xf32>
    %1 = stablehlo.broadcast_in_dim %cst, dims = [1] : (tensor<6xf32>) -> tensor<1x6xf32>
    %2 = stablehlo.broadcast_in_dim %1, dims = [0, 1] : (tensor<1x6xf32>) -> tensor<4x6xf32>
    %3 = stablehlo.multiply %arg0, %2 : tensor<4x6xf32>
    %4 = stablehlo.transpose %arg0, dims = [1, 0] : (tensor<4x6xf32>) -> tensor<6x4xf32>
    %cst_1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %5 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<6x4xf32>
    %6 = stablehlo.compare GT, %4, %5, FLOAT : (tensor<6x4xf32>, tensor<6x4xf32>) -> tensor<6x4xi1>
    %7 = stablehlo.transpose %arg0, dims = [1, 0] : (tensor<4x6xf32>) -> tensor<6x4xf32>
    %cst_2 = stablehlo.constant dense<0x7FC00000> : tensor<f32>
    %8 = call @_where(%6, %7, %cst_2) : (tensor<6x4xi1>, tensor<6x4xf32>, tensor<f32>) -> tensor<6x4xf32>
    %9 = stablehlo.iota dim = 0 : tensor<4xf32>
    %10 = stablehlo.broadcast_in_dim %9, dims = [1] : (tensor<4xf32>) -> tensor<1x4xf32>
    %11 = stablehlo.broadcast_in_dim %10, dims = [0, 1] : (tensor<1x4xf32>) -> tensor<6x4xf32>
    %12 = stablehlo.add %8, %11 : tensor<6x4xf32>
    %c_3 = stablehlo.constant dense<3> : tensor<i32>
    %13 = stablehlo.broadcast_in_dim %c_3, dims = [] : (tensor<i32>) -> tensor<4xi32>
    %14 = stablehlo.multiply %arg1, %13 : tensor<4xi32>
    %15 = stablehlo.add %14, %c : tensor<4xi32>
    %16 = stablehlo.convert %15 : (tensor<4xi32>) -> tensor<4xf32>
    %17 = stablehlo.reshape %arg0 : (tensor<4x6xf32>) -> tensor<2x12xf32>
    %cst_4 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %18 = stablehlo.reduce(%17 init: %cst_4) applies stablehlo.add across dimensions = [1] : (tensor<2x12xf32>, tensor<f32>) -> tensor<2xf32>
    %cst_5 = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %19 = stablehlo.reduce(%arg0 init: %cst_5) applies stablehlo.maximum across dimensions = [0, 1] : (tensor<4x6xf32>, tensor<f32>) -> tensor<f32>
    %20 = stablehlo.broadcast_in_dim %19, dims = [] : (tensor<f32>) -> tensor<2xf32>
    %21 = stablehlo.add %18, %20 : tensor<2xf32>
    return %0, %3, %12, %16, %21 : tensor<5x8xf32>, tensor<4x6xf32>, tensor<6x4xf32>, tensor<4xf32>, tensor<2xf32>
  }
  func.func private @_pad(%arg0: tensor<4x6xf32>, %arg1: tensor<f32>) -> tensor<5x8xf32> {
    %0 = stablehlo.convert %arg1 : tensor<f32>
    %1 = stablehlo.pad %arg0, %0, low = [1, 0], high = [0, 2], interior = [0, 0] : (tensor<4x6xf32>, tensor<f32>) -> tensor<5x8xf32>
    return %1 : tensor<5x8xf32>
  }
  func.func private @_where(%arg0: tensor<6x4xi1>, %arg1: tensor<6x4xf32>, %arg2: tensor<f32>) -> tensor<6x4xf32> {
    %0 = stablehlo.broadcast_in_dim %arg2, dims = [] : (tensor<f32>) -> tensor<6x4xf32>
    %1 = stablehlo.select %arg0, %arg1, %0 : tensor<6x4xi1>, tensor<6x4xf32>
    return %1 : tensor<6x4xf32>
  }
}
