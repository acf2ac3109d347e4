"builtin.module"() <{sym_name = "jit__lambda"}> ({
  "func.func"() <{arg_attrs = [{}, {}, {}], function_type = (tensor<4x6xf32>, tensor<2xi32>, tensor<2xf32>) -> tensor<4x6xf32>, res_attrs = [{jax.result_info = "result"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<4x6xf32>, %arg1: tensor<2xi32>, %arg2: tensor<2xf32>):
    %0 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %1 = "stablehlo.broadcast_in_dim"(%0) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<2xi32>
    %2 = "stablehlo.compare"(%arg1, %1) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi1>
    %3 = "stablehlo.constant"() <{value = dense<4> : tensor<i32>}> : () -> tensor<i32>
    %4 = "stablehlo.broadcast_in_dim"(%3) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<2xi32>
    %5 = "stablehlo.add"(%arg1, %4) : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>
    %6 = "stablehlo.select"(%2, %5, %arg1) : (tensor<2xi1>, tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>
    %7 = "stablehlo.constant"() <{value = dense<2> : tensor<i32>}> : () -> tensor<i32>
    %8 = "stablehlo.broadcast_in_dim"(%7) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<2xi32>
    %9 = "stablehlo.convert"(%8) : (tensor<2xi32>) -> tensor<2xi32>
    %10 = "stablehlo.broadcast_in_dim"(%6) <{broadcast_dimensions = array<i64: 0>}> : (tensor<2xi32>) -> tensor<2x1xi32>
    %11 = "stablehlo.broadcast_in_dim"(%9) <{broadcast_dimensions = array<i64: 0>}> : (tensor<2xi32>) -> tensor<2x1xi32>
    %12 = "stablehlo.concatenate"(%10, %11) <{dimension = 1 : i64}> : (tensor<2x1xi32>, tensor<2x1xi32>) -> tensor<2x2xi32>
    %13 = "stablehlo.scatter"(%arg0, %12, %arg2) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0, 1], scatter_dims_to_operand_dims = [0, 1], index_vector_dim = 1>, unique_indices = false}> ({
    ^bb0(%arg3: tensor<f32>, %arg4: tensor<f32>):
      "stablehlo.return"(%arg4) : (tensor<f32>) -> ()
    }) : (tensor<4x6xf32>, tensor<2x2xi32>, tensor<2xf32>) -> tensor<4x6xf32>
    "func.return"(%13) : (tensor<4x6xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
