"builtin.module"() <{sym_name = "jit__lambda"}> ({
  "func.func"() <{arg_attrs = [{}], function_type = (tensor<4x6xf32>) -> tensor<4x6xf32>, res_attrs = [{jax.result_info = "result"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg1: tensor<4x6xf32>):
    %1 = "func.call"(%arg1) <{callee = @_flip}> : (tensor<4x6xf32>) -> tensor<4x6xf32>
    "func.return"(%1) : (tensor<4x6xf32>) -> ()
  }) : () -> ()
  "func.func"() <{arg_attrs = [{}], function_type = (tensor<4x6xf32>) -> tensor<4x6xf32>, res_attrs = [{}], sym_name = "_flip", sym_visibility = "private"}> ({
  ^bb0(%arg0: tensor<4x6xf32>):
    %0 = "stablehlo.reverse"(%arg0) <{dimensions = array<i64: 0, 1>}> : (tensor<4x6xf32>) -> tensor<4x6xf32>
    "func.return"(%0) : (tensor<4x6xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
