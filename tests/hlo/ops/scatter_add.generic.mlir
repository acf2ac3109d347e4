"builtin.module"() <{sym_name = "jit__lambda"}> ({
  "func.func"() <{arg_attrs = [{}, {}, {}], function_type = (tensor<4x6xf32>, tensor<4xi32>, tensor<4x6xf32>) -> tensor<4x6xf32>, res_attrs = [{jax.result_info = "result"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<4x6xf32>, %arg1: tensor<4xi32>, %arg2: tensor<4x6xf32>):
    %0 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %1 = "stablehlo.broadcast_in_dim"(%0) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<4xi32>
    %2 = "stablehlo.compare"(%arg1, %1) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
    %3 = "stablehlo.constant"() <{value = dense<4> : tensor<i32>}> : () -> tensor<i32>
    %4 = "stablehlo.broadcast_in_dim"(%3) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<4xi32>
    %5 = "stablehlo.add"(%arg1, %4) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
    %6 = "stablehlo.select"(%2, %5, %arg1) : (tensor<4xi1>, tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
    %7 = "stablehlo.broadcast_in_dim"(%6) <{broadcast_dimensions = array<i64: 0>}> : (tensor<4xi32>) -> tensor<4x1xi32>
    %8 = "stablehlo.scatter"(%arg0, %7, %arg2) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({
    ^bb0(%arg3: tensor<f32>, %arg4: tensor<f32>):
      %9 = "stablehlo.add"(%arg3, %arg4) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%9) : (tensor<f32>) -> ()
    }) : (tensor<4x6xf32>, tensor<4x1xi32>, tensor<4x6xf32>) -> tensor<4x6xf32>
    "func.return"(%8) : (tensor<4x6xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
