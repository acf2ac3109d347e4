"builtin.module"() <{sym_name = "jit__lambda"}> ({
  "func.func"() <{arg_attrs = [{}], function_type = (tensor<4x6xf32>) -> tensor<4x6xf32>, res_attrs = [{jax.result_info = "result"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg3: tensor<4x6xf32>):
    %16 = "func.call"(%arg3) <{callee = @sort}> : (tensor<4x6xf32>) -> tensor<4x6xf32>
    "func.return"(%16) : (tensor<4x6xf32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}], function_type = (tensor<4x6xf32>) -> tensor<4x6xf32>, res_attrs = [{}], sym_name = "sort", sym_visibility = "private"}> ({
  ^bb0(%arg0: tensor<4x6xf32>):
    %0 = "stablehlo.sort"(%arg0) <{dimension = 1 : i64, is_stable = true}> ({
    ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>):
      %1 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %2 = "stablehlo.compare"(%arg1, %1) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction EQ>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %3 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %4 = "stablehlo.select"(%2, %3, %arg1) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
      %5 = "stablehlo.compare"(%arg1, %arg1) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction NE>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %6 = "stablehlo.constant"() <{value = dense<0x7FC00000> : tensor<f32>}> : () -> tensor<f32>
      %7 = "stablehlo.select"(%5, %6, %4) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
      %8 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %9 = "stablehlo.compare"(%arg2, %8) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction EQ>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %10 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %11 = "stablehlo.select"(%9, %10, %arg2) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
      %12 = "stablehlo.compare"(%arg2, %arg2) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction NE>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %13 = "stablehlo.constant"() <{value = dense<0x7FC00000> : tensor<f32>}> : () -> tensor<f32>
      %14 = "stablehlo.select"(%12, %13, %11) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
      %15 = "stablehlo.compare"(%7, %14) <{compare_type = #stablehlo<comparison_type TOTALORDER>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      "stablehlo.return"(%15) : (tensor<i1>) -> ()
    }) : (tensor<4x6xf32>) -> tensor<4x6xf32>
    "func.return"(%0) : (tensor<4x6xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
