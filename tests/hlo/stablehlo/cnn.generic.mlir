"builtin.module"() <{sym_name = "jit_cnn"}> ({
  "func.func"() <{arg_attrs = [{}, {}, {}, {}], function_type = (tensor<2x6x6x3xf32>, tensor<3x3x3x4xf32>, tensor<2x2x4x5xf32>, tensor<20x7xf32>) -> tensor<2x7xf32>, res_attrs = [{jax.result_info = "result"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg1: tensor<2x6x6x3xf32>, %arg2: tensor<3x3x3x4xf32>, %arg3: tensor<2x2x4x5xf32>, %arg4: tensor<20x7xf32>):
    %3 = "stablehlo.convolution"(%arg1, %arg2) <{batch_group_count = 1 : i64, dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>, feature_group_count = 1 : i64, lhs_dilation = array<i64: 1, 1>, padding = dense<1> : tensor<2x2xi64>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>], rhs_dilation = array<i64: 1, 1>, window_reversal = array<i1: false, false>, window_strides = array<i64: 1, 1>}> : (tensor<2x6x6x3xf32>, tensor<3x3x3x4xf32>) -> tensor<2x6x6x4xf32>
    %4 = "func.call"(%3) <{callee = @relu}> : (tensor<2x6x6x4xf32>) -> tensor<2x6x6x4xf32>
    %5 = "stablehlo.constant"() <{value = dense<0xFF800000> : tensor<f32>}> : () -> tensor<f32>
    %6 = "stablehlo.broadcast_in_dim"(%5) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<f32>
    %7 = "stablehlo.reduce_window"(%4, %6) <{base_dilations = array<i64: 1, 1, 1, 1>, padding = dense<0> : tensor<4x2xi64>, window_dilations = array<i64: 1, 1, 1, 1>, window_dimensions = array<i64: 1, 2, 2, 1>, window_strides = array<i64: 1, 2, 2, 1>}> ({
    ^bb0(%arg5: tensor<f32>, %arg6: tensor<f32>):
      %11 = "stablehlo.maximum"(%arg5, %arg6) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%11) : (tensor<f32>) -> ()
    }) : (tensor<2x6x6x4xf32>, tensor<f32>) -> tensor<2x3x3x4xf32>
    %8 = "stablehlo.convolution"(%7, %arg3) <{batch_group_count = 1 : i64, dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>, feature_group_count = 1 : i64, lhs_dilation = array<i64: 1, 1>, padding = dense<[[1, 0], [0, 1]]> : tensor<2x2xi64>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>], rhs_dilation = array<i64: 1, 1>, window_reversal = array<i1: false, false>, window_strides = array<i64: 2, 2>}> : (tensor<2x3x3x4xf32>, tensor<2x2x4x5xf32>) -> tensor<2x2x2x5xf32>
    %9 = "stablehlo.reshape"(%8) : (tensor<2x2x2x5xf32>) -> tensor<2x20xf32>
    %10 = "stablehlo.dot_general"(%9, %arg4) <{dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]}> : (tensor<2x20xf32>, tensor<20x7xf32>) -> tensor<2x7xf32>
    "func.return"(%10) : (tensor<2x7xf32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}], function_type = (tensor<2x6x6x4xf32>) -> tensor<2x6x6x4xf32>, res_attrs = [{}], sym_name = "relu", sym_visibility = "private"}> ({
  ^bb0(%arg0: tensor<2x6x6x4xf32>):
    %0 = "stablehlo.constant"() <{value = dense<0.000000e+00> : tensor<f32>}> : () -> tensor<f32>
    %1 = "stablehlo.broadcast_in_dim"(%0) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<2x6x6x4xf32>
    %2 = "stablehlo.maximum"(%arg0, %1) : (tensor<2x6x6x4xf32>, tensor<2x6x6x4xf32>) -> tensor<2x6x6x4xf32>
    "func.return"(%2) : (tensor<2x6x6x4xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
