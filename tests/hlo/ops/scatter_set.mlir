module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x6xf32>, %arg1: tensor<2xi32>, %arg2: tensor<2xf32>) -> (tensor<4x6xf32> {jax.result_info = "result"}) {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<i32>) -> tensor<2xi32>
    %1 = stablehlo.compare LT, %arg1, %0, SIGNED : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi1>
    %c_0 = stablehlo.constant dense<4> : tensor<i32>
    %2 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<i32>) -> tensor<2xi32>
    %3 = stablehlo.add %arg1, %2 : tensor<2xi32>
    %4 = stablehlo.select %1, %3, %arg1 : tensor<2xi1>, tensor<2xi32>
    %c_1 = stablehlo.constant dense<2> : tensor<i32>
    %5 = stablehlo.broadcast_in_dim %c_1, dims = [] : (tensor<i32>) -> tensor<2xi32>
    %6 = stablehlo.convert %5 : tensor<2xi32>
    %7 = stablehlo.broadcast_in_dim %4, dims = [0] : (tensor<2xi32>) -> tensor<2x1xi32>
    %8 = stablehlo.broadcast_in_dim %6, dims = [0] : (tensor<2xi32>) -> tensor<2x1xi32>
    %9 = stablehlo.concatenate %7, %8, dim = 1 : (tensor<2x1xi32>, tensor<2x1xi32>) -> tensor<2x2xi32>
    %10 = "stablehlo.scatter"(%arg0, %9, %arg2) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0, 1], scatter_dims_to_operand_dims = [0, 1], index_vector_dim = 1>, unique_indices = false}> ({
    ^bb0(%arg3: tensor<f32>, %arg4: tensor<f32>):
      stablehlo.return %arg4 : tensor<f32>
    }) : (tensor<4x6xf32>, tensor<2x2xi32>, tensor<2xf32>) -> tensor<4x6xf32>
    return %10 : tensor<4x6xf32>
  }
}
