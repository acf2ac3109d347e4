"builtin.module"() <{sym_name = "jit__lambda"}> ({
  "func.func"() <{arg_attrs = [{}], function_type = (tensor<8xf32>) -> tensor<3xf32>, res_attrs = [{jax.result_info = "result"}], sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<8xf32>):
    %0 = "stablehlo.slice"(%arg0) <{limit_indices = array<i64: 5>, start_indices = array<i64: 2>, strides = array<i64: 1>}> : (tensor<8xf32>) -> tensor<3xf32>
    "func.return"(%0) : (tensor<3xf32>) -> ()
  }) : () -> ()
}) {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} : () -> ()
