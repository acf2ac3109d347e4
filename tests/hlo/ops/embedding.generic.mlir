"builtin.module"() <{sym_name = "jit__lambda"}> ({
  "func.func"() <{arg_attrs = [{}, {}], function_type = (tensor<4x6xf32>, tensor<2x2xi32>) -> tensor<2x2x6xf32>, res_attrs = [{jax.result_info = "result"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<4x6xf32>, %arg1: tensor<2x2xi32>):
    %0 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %1 = "stablehlo.broadcast_in_dim"(%0) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<2x2xi32>
    %2 = "stablehlo.compare"(%arg1, %1) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<2x2xi32>, tensor<2x2xi32>) -> tensor<2x2xi1>
    %3 = "stablehlo.constant"() <{value = dense<4> : tensor<i32>}> : () -> tensor<i32>
    %4 = "stablehlo.broadcast_in_dim"(%3) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<2x2xi32>
    %5 = "stablehlo.add"(%arg1, %4) : (tensor<2x2xi32>, tensor<2x2xi32>) -> tensor<2x2xi32>
    %6 = "stablehlo.select"(%2, %5, %arg1) : (tensor<2x2xi1>, tensor<2x2xi32>, tensor<2x2xi32>) -> tensor<2x2xi32>
    %7 = "stablehlo.broadcast_in_dim"(%6) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<2x2xi32>) -> tensor<2x2x1xi32>
    %8 = "stablehlo.gather"(%arg0, %7) <{dimension_numbers = #stablehlo.gather<offset_dims = [2], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 2>, indices_are_sorted = false, slice_sizes = array<i64: 1, 6>}> : (tensor<4x6xf32>, tensor<2x2x1xi32>) -> tensor<2x2x6xf32>
    "func.return"(%8) : (tensor<2x2x6xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
