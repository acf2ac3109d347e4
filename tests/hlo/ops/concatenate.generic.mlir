"builtin.module"() <{sym_name = "jit__lambda"}> ({
  "func.func"() <{arg_attrs = [{}, {}], function_type = (tensor<4x6xf32>, tensor<4x3xf32>) -> tensor<4x9xf32>, res_attrs = [{jax.result_info = "result"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<4x6xf32>, %arg1: tensor<4x3xf32>):
    %0 = "stablehlo.concatenate"(%arg0, %arg1) <{dimension = 1 : i64}> : (tensor<4x6xf32>, tensor<4x3xf32>) -> tensor<4x9xf32>
    "func.return"(%0) : (tensor<4x9xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
