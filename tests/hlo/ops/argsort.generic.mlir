"builtin.module"() <{sym_name = "jit__lambda"}> ({
  "func.func"() <{arg_attrs = [{}], function_type = (tensor<4x6xf32>) -> tensor<4x6xi32>, res_attrs = [{jax.result_info = "result"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg5: tensor<4x6xf32>):
    %17 = "func.call"(%arg5) <{callee = @argsort}> : (tensor<4x6xf32>) -> tensor<4x6xi32>
    "func.return"(%17) : (tensor<4x6xi32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}], function_type = (tensor<4x6xf32>) -> tensor<4x6xi32>, res_attrs = [{}], sym_name = "argsort", sym_visibility = "private"}> ({
  ^bb0(%arg0: tensor<4x6xf32>):
    %0 = "stablehlo.iota"() <{iota_dimension = 1 : i64}> : () -> tensor<4x6xi32>
    %1:2 = "stablehlo.sort"(%arg0, %0) <{dimension = 1 : i64, is_stable = true}> ({
    ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>, %arg3: tensor<i32>, %arg4: tensor<i32>):
      %2 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %3 = "stablehlo.compare"(%arg1, %2) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction EQ>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %4 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %5 = "stablehlo.select"(%3, %4, %arg1) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
      %6 = "stablehlo.compare"(%arg1, %arg1) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction NE>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %7 = "stablehlo.constant"() <{value = dense<0x7FC00000> : tensor<f32>}> : () -> tensor<f32>
      %8 = "stablehlo.select"(%6, %7, %5) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
      %9 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %10 = "stablehlo.compare"(%arg2, %9) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction EQ>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %11 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
      %12 = "stablehlo.select"(%10, %11, %arg2) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
      %13 = "stablehlo.compare"(%arg2, %arg2) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction NE>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      %14 = "stablehlo.constant"() <{value = dense<0x7FC00000> : tensor<f32>}> : () -> tensor<f32>
      %15 = "stablehlo.select"(%13, %14, %12) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
      %16 = "stablehlo.compare"(%8, %15) <{compare_type = #stablehlo<comparison_type TOTALORDER>, comparison_direction = #stablehlo<comparison_direction LT>}> : (tensor<f32>, tensor<f32>) -> tensor<i1>
      "stablehlo.return"(%16) : (tensor<i1>) -> ()
    }) : (tensor<4x6xf32>, tensor<4x6xi32>) -> (tensor<4x6xf32>, tensor<4x6xi32>)
    "func.return"(%1#1) : (tensor<4x6xi32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
