"builtin.module"() <{sym_name = "jit_slicing"}> ({
  "func.func"() <{arg_attrs = [{}], function_type = (tensor<4x6xf32>) -> tensor<4x3xf32>, res_attrs = [{jax.result_info = "result"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg3: tensor<4x6xf32>):
    %6 = "stablehlo.slice"(%arg3) <{limit_indices = array<i64: 3, 6>, start_indices = array<i64: 1, 0>, strides = array<i64: 1, 2>}> : (tensor<4x6xf32>) -> tensor<2x3xf32>
    %7 = "stablehlo.slice"(%arg3) <{limit_indices = array<i64: 2, 4>, start_indices = array<i64: 0, 1>, strides = array<i64: 1, 1>}> : (tensor<4x6xf32>) -> tensor<2x3xf32>
    %8 = "stablehlo.constant"() <{value = dense<-5.000000e-01> : tensor<f32>}> : () -> tensor<f32>
    %9 = "stablehlo.constant"() <{value = dense<5.000000e-01> : tensor<f32>}> : () -> tensor<f32>
    %10 = "func.call"(%7, %8, %9) <{callee = @clip}> : (tensor<2x3xf32>, tensor<f32>, tensor<f32>) -> tensor<2x3xf32>
    %11 = "stablehlo.concatenate"(%6, %10) <{dimension = 0 : i64}> : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
    "func.return"(%11) : (tensor<4x3xf32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}, {}, {}], function_type = (tensor<2x3xf32>, tensor<f32>, tensor<f32>) -> tensor<2x3xf32>, res_attrs = [{}], sym_name = "clip", sym_visibility = "private"}> ({
  ^bb0(%arg0: tensor<2x3xf32>, %arg1: tensor<f32>, %arg2: tensor<f32>):
    %0 = "stablehlo.convert"(%arg1) : (tensor<f32>) -> tensor<f32>
    %1 = "stablehlo.broadcast_in_dim"(%0) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<2x3xf32>
    %2 = "stablehlo.maximum"(%1, %arg0) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
    %3 = "stablehlo.convert"(%arg2) : (tensor<f32>) -> tensor<f32>
    %4 = "stablehlo.broadcast_in_dim"(%3) <{broadcast_dimensions = array<i64>}> : (tensor<f32>) -> tensor<2x3xf32>
    %5 = "stablehlo.minimum"(%4, %2) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
    "func.return"(%5) : (tensor<2x3xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
