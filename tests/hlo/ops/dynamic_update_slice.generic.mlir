"builtin.module"() <{sym_name = "jit__lambda"}> ({
  "func.func"() <{arg_attrs = [{}, {}, {}], function_type = (tensor<4x6xf32>, tensor<2x2xf32>, tensor<i32>) -> tensor<4x6xf32>, res_attrs = [{jax.result_info = "result"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<4x6xf32>, %arg1: tensor<2x2xf32>, %arg2: tensor<i32>):
    %0 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %1 = "stablehlo.compare"(%arg2, %0) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %2 = "stablehlo.constant"() <{value = dense<4> : tensor<i32>}> : () -> tensor<i32>
    %3 = "stablehlo.add"(%arg2, %2) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %4 = "stablehlo.select"(%1, %3, %arg2) : (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>
    %5 = "stablehlo.constant"() <{value = dense<5> : tensor<i32>}> : () -> tensor<i32>
    %6 = "stablehlo.dynamic_update_slice"(%arg0, %arg1, %4, %5) : (tensor<4x6xf32>, tensor<2x2xf32>, tensor<i32>, tensor<i32>) -> tensor<4x6xf32>
    "func.return"(%6) : (tensor<4x6xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
