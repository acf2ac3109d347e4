"builtin.module"() <{sym_name = "jit__lambda"}> ({
  "func.func"() <{arg_attrs = [{}, {}], function_type = (tensor<4x6xf32>, tensor<i32>) -> tensor<2x3xf32>, res_attrs = [{jax.result_info = "result"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<4x6xf32>, %arg1: tensor<i32>):
    %0 = "stablehlo.constant"() <{value = dense<1> : tensor<i32>}> : () -> tensor<i32>
    %1 = "stablehlo.add"(%arg1, %0) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %2 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %3 = "stablehlo.compare"(%arg1, %2) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %4 = "stablehlo.constant"() <{value = dense<4> : tensor<i32>}> : () -> tensor<i32>
    %5 = "stablehlo.add"(%arg1, %4) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %6 = "stablehlo.select"(%3, %5, %arg1) : (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>
    %7 = "stablehlo.constant"() <{value = dense<0> : tensor<i32>}> : () -> tensor<i32>
    %8 = "stablehlo.compare"(%1, %7) <{compare_type = #stablehlo<comparison_type SIGNED>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %9 = "stablehlo.constant"() <{value = dense<6> : tensor<i32>}> : () -> tensor<i32>
    %10 = "stablehlo.add"(%1, %9) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %11 = "stablehlo.select"(%8, %10, %1) : (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>
    %12 = "stablehlo.dynamic_slice"(%arg0, %6, %11) <{slice_sizes = array<i64: 2, 3>}> : (tensor<4x6xf32>, tensor<i32>, tensor<i32>) -> tensor<2x3xf32>
    "func.return"(%12) : (tensor<2x3xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
