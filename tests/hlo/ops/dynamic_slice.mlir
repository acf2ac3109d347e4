module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x6xf32>, %arg1: tensor<i32>) -> (tensor<2x3xf32> {jax.result_info = "result"}) {
    %c = stablehlo.constant dense<1> : tensor<i32>
    %0 = stablehlo.add %arg1, %c : tensor<i32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %1 = stablehlo.compare LT, %arg1, %c_0, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %c_1 = stablehlo.constant dense<4> : tensor<i32>
    %2 = stablehlo.add %arg1, %c_1 : tensor<i32>
    %3 = stablehlo.select %1, %2, %arg1 : tensor<i1>, tensor<i32>
    %c_2 = stablehlo.constant dense<0> : tensor<i32>
    %4 = stablehlo.compare LT, %0, %c_2, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %c_3 = stablehlo.constant dense<6> : tensor<i32>
    %5 = stablehlo.add %0, %c_3 : tensor<i32>
    %6 = stablehlo.select %4, %5, %0 : tensor<i1>, tensor<i32>
    %7 = stablehlo.dynamic_slice %arg0, %3, %6, sizes = [2, 3] : (tensor<4x6xf32>, tensor<i32>, tensor<i32>) -> tensor<2x3xf32>
    return %7 : tensor<2x3xf32>
  }
}
