module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<8xf32>) -> (tensor<3xf32> {jax.result_info = "result"}) {
    %0 = stablehlo.slice %arg0 [2:5] : (tensor<8xf32>) -> tensor<3xf32>
    return %0 : tensor<3xf32>
  }
}
