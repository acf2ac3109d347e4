"builtin.module"() <{sym_name = "jit_mlp"}> ({
  "func.func"() <{arg_attrs = [{}, {}, {}, {}, {}], function_type = (tensor<8xf32>, tensor<3xf32>, tensor<4x8xf32>, tensor<8x3xf32>, tensor<2x4xf32>) -> tensor<2x3xf32>, res_attrs = [{jax.result_info = "result"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<8xf32>, %arg1: tensor<3xf32>, %arg2: tensor<4x8xf32>, %arg3: tensor<8x3xf32>, %arg4: tensor<2x4xf32>):
    %0 = "stablehlo.dot_general"(%arg4, %arg2) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<2x4xf32>, tensor<4x8xf32>) -> tensor<2x8xf32>
    %1 = "stablehlo.broadcast_in_dim"(%arg0) <{broadcast_dimensions = array<i64: 1>}> : (tensor<8xf32>) -> tensor<1x8xf32>
    %2 = "stablehlo.broadcast_in_dim"(%1) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x8xf32>) -> tensor<2x8xf32>
    %3 = "stablehlo.add"(%0, %2) : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
    %4 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %5 = "stablehlo.broadcast_in_dim"(%4) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<2x8xf32>
    %6 = "stablehlo.maximum"(%3, %5) : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
    %7 = "stablehlo.dot_general"(%6, %arg3) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<2x8xf32>, tensor<8x3xf32>) -> tensor<2x3xf32>
    %8 = "stablehlo.broadcast_in_dim"(%arg1) <{broadcast_dimensions = array<i64: 1>}> : (tensor<3xf32>) -> tensor<1x3xf32>
    %9 = "stablehlo.broadcast_in_dim"(%8) <{broadcast_dimensions = array<i64: 0, 1>}> : (tensor<1x3xf32>) -> tensor<2x3xf32>
    %10 = "stablehlo.add"(%7, %9) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
    "func.return"(%10) : (tensor<2x3xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
