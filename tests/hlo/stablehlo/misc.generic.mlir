"builtin.module"() <{sym_name = "jit_misc"}> ({
  "func.func"() <{arg_attrs = [{}, {}], function_type = (tensor<4x6xf32>, tensor<4xi32>) -> (tensor<5x8xf32>, tensor<4x6xf32>, tensor<6x4xf32>, tensor<4xf32>, tensor<2xf32>), res_attrs = [{jax.result_info = "result[0]"}, {jax.result_info = "result[1]"}, {jax.result_info = "result[2]"}, {jax.result_info = "result[3]"}, {jax.result_info = "result[4]"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg5: tensor<4x6xf32>, %arg6: tensor<4xi32>):
    %4 = "stablehlo.constant"() <{value = dense<[1.000000e+00, 2.000000e+00, 0x7F800000, 5.000000e-01, -0.000000e+00, 3.000000e+00]> : tensor<6xf32>}> : () -> tensor<6xf32>
    %5 = "stablehlo.constant"() <{value = dense<[1, -2, 3, 7]> : tensor<4xi32>}> : () -> tensor<4xi32>
    %6 = "stablehlo.constant"() <{value = dense<-1.500000e+00> : tensor<f32>}> : () -> tensor<f32>
    %7 = "func.call"(%arg5, %6) <{callee = @_pad}> : (tensor<4x6xf32>, tensor<f32>) -> tensor<5x8xf32>
    %8 = "stablehlo.broadcast_in_dim"(%4) <{broadcast_dimensions = array<i64: 1>}> : (tensor<6xf32>) -> tensor<1x6xf32>
    %9 = "stablehlo.broadcast_in_dim"(%8) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x6xf32>) -> tensor<4x6xf32>
    %10 = "stablehlo.multiply"(%arg5, %9) : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
    %11 = "stablehlo.transpose"(%arg5) <{permutation = array<i64: 1, 0>}> : (tensor<4x6xf32>) -> tensor<6x4xf32>
    %12 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %13 = "stablehlo.broadcast_in_dim"(%12) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<6x4xf32>
    %14 = "stablehlo.compare"(%11, %13) <{compare_type = #stablehlo<comparison_type FLOAT>, comparison_direction = #stablehlo<comparison_direction GT>}> : (tensor<6x4xf32>, tensor<6x4xf32>) -> tensor<6x4xi1>
    %15 = "stablehlo.transpose"(%arg5) <{permutation = array<i64: 1, 0>}> : (tensor<4x6xf32>) -> tensor<6x4xf32>
    %16 = "stablehlo.constant"() <{value = dense<0x7FC00000> : tensor<f32>}> : () -> tensor<f32>
    %17 = "func.call"(%14, %15, %16) <{callee = @_where}> : (tensor<6x4xi1>, tensor<6x4xf32>, tensor<f32>) -> tensor<6x4xf32>
    %18 = "stablehlo.iota"() <{iota_dimension = 0 : i64}> : () -> tensor<4xf32>
    %19 = "stablehlo.broadcast_in_dim"(%18) <{broadcast_dimensions = array<i64: 1>}> : (tensor<4xf32>) -> tensor<1x4xf32>
    %20 = "stablehlo.broadcast_in_dim"(%19) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x4xf32>) -> tensor<6x4xf32>
    %21 = "stablehlo.add"(%17, %20) : (tensor<6x4xf32>, tensor<6x4xf32>) -> tensor<6x4xf32>
    %22 = "stablehlo.constant"() <{value = dense<3> : tensor<i32>}> : () -> tensor<i32>
    %23 = "stablehlo.broadcast_in_dim"(%22) <{broadcast_dimensions = array<i64>}> : (tensor<i32>) -> tensor<4xi32>
    %24 = "stablehlo.multiply"(%arg6, %23) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
    %25 = "stablehlo.add"(%24, %5) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
    %26 = "stablehlo.convert"(%25) : (tensor<4xi32>) -> tensor<4xf32>
    %27 = "stablehlo.reshape"(%arg5) : (tensor<4x6xf32>) -> tensor<2x12xf32>
    %28 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %29 = "stablehlo.reduce"(%27, %28) <{dimensions = array<i64: 1>}> ({
    ^bb0(%arg9: tensor<f32>, %arg10: tensor<f32>):
      %35 = "stablehlo.add"(%arg9, %arg10) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%35) : (tensor<f32>) -> ()
    }) : (tensor<2x12xf32>, tensor<f32>) -> tensor<2xf32>
    %30 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
    %31 = "stablehlo.reduce"(%arg5, %30) <{dimensions = array<i64: 0, 1>}> ({
    ^bb0(%arg7: tensor<f32>, %arg8: tensor<f32>):
      %34 = "stablehlo.maximum"(%arg7, %arg8) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%34) : (tensor<f32>) -> ()
    }) : (tensor<4x6xf32>, tensor<f32>) -> tensor<f32>
    %32 = "stablehlo.broadcast_in_dim"(%31) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<2xf32>
    %33 = "stablehlo.add"(%29, %32) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
    "func.return"(%7, %10, %21, %26, %33) : (tensor<5x8xf32>, tensor<4x6xf32>, tensor<6x4xf32>, tensor<4xf32>, tensor<2xf32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}, {}], function_type = (tensor<4x6xf32>, tensor<f32>) -> tensor<5x8xf32>, res_attrs = [{}], sym_name = "_pad", sym_visibility = "private"}> ({
  ^bb0(%arg3: tensor<4x6xf32>, %arg4: tensor<f32>):
    %2 = "stablehlo.convert"(%arg4) : (tensor<f32>) -> tensor<f32>
    %3 = "stablehlo.pad"(%arg3, %2) <{edge_padding_high = array<i64: 0, 2>, edge_padding_low = array<i64: 1, 0>, interior_padding = array<i64: 0, 0>}> : (tensor<4x6xf32>, tensor<f32>) -> tensor<5x8xf32>
    "func.return"(%3) : (tensor<5x8xf32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}, {}, {}], function_type = (tensor<6x4xi1>, tensor<6x4xf32>, tensor<f32>) -> tensor<6x4xf32>, res_attrs = [{}], sym_name = "_where", sym_visibility = "private"}> ({
  ^bb0(%arg0: tensor<6x4xi1>, %arg1: tensor<6x4xf32>, %arg2: tensor<f32>):
    %0 = "stablehlo.broadcast_in_dim"(%arg2) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<6x4xf32>
    %1 = "stablehlo.select"(%arg0, %arg1, %0) : (tensor<6x4xi1>, tensor<6x4xf32>, tensor<6x4xf32>) -> tensor<6x4xf32>
    "func.return"(%1) : (tensor<6x4xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
