module @jit_slicing attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x6xf32>) -> (tensor<4x3xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.slice %arg0 [1:3, 0:6:2] : (tensor<4x6xf32>) -> tensor<2x3xf32>
    %1 = stablehlo.slice %arg0 [0:2, 1:4] : (tensor<4x6xf32>) -> tensor<2x3xf32>
    %cst = stablehlo.constant dense<-5.000000e-01> : tensor<f32>
    %cst_0 = stablehlo.constant dense<5.000000e-01> : tensor<f32>
    %2 = call @clip(%1, %cst, %cst_0) : (tensor<2x3xf32>, tensor<f32>, tensor<f32>) -> tensor<2x3xf32>
    %3 = stablehlo.concatenate %0, %2, dim = 0 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
    return %3 : tensor<4x3xf32>
  }
  func.func private @clip(%arg0: tensor<2x3xf32>, %arg1: tensor<f32>, %arg2: tensor<f32>) -> tensor<2x3xf32> {
    %0 = stablehlo.convert %arg1 : tensor<f32>
    %1 = stablehlo.broadcast_in_dim %0, dims = [] : (tensor<f32>) -> tensor<2x3xf32>
    %2 = stablehlo.maximum %1, %arg0 : tensor<2x3xf32>
    %3 = stablehlo.convert %arg2 : tensor<f32>
    %4 = stablehlo.broadcast_in_dim %3, dims = [] : (tensor<f32>) -> tensor<2x3xf32>
    %5 = stablehlo.minimum %4, %2 : tensor<2x3xf32>
    return %5 : tensor<2x3xf32>
  }
}
