module @jit_gru attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x5x5xf32>) -> (tensor<4x6xf32> {jax.result_info = "result"}) {
    %cst = stablehlo.constant dense<[[0.0502920896, -0.0528419465, 0.256169051, 0.0419600457, -0.214267746, 0.144638017, 5.216000e-01, 0.3788324, -0.281494081, -0.506168604, -0.249309778, 0.0165303908, -0.930012285, -0.0875166655, -0.498364389, -0.29290694, -0.217703596, -0.126520067], [0.164652213, 0.41700536, -0.0514138639, 0.546585381, -0.266077876, 0.140604034, 0.361388087, 0.0376049206, -0.2973997, -0.368690163, -0.183090329, 0.0880780518, -0.403847277, -0.0836702287, -0.0636900067, 0.216338232, 0.0858636498, 0.142149091], [-0.261531442, -0.0518454537, 0.313590199, 0.597372472, -0.503626227, 0.605569482, 0.538350165, 0.312524557, 0.105782256, -0.12556912, 0.583208263, 0.784103333, 0.720653951, 0.526041508, 0.142952159, -0.483327448, -0.00178165326, 0.262589961], [-0.51534456, 0.158048823, 0.171945482, 0.278417081, -0.473647177, -0.264681041, -0.174574092, -0.46792075, 0.695747137, -0.198364288, 0.131587848, -0.103429019, 0.633389174, 0.528144419, 0.253341049, -0.881403923, 0.0208115894, 0.273474485], [0.401584625, -0.247162819, 0.728804528, -0.528172374, -0.264611214, 0.37401998, 0.0196218453, 8.009570e-01, 0.0754076764, -0.25327763, -0.1510254, -0.436458439, -0.51107204, 0.252164602, 0.232466325, 0.517823517, -0.301842302, 0.675642967]]> : tensor<5x18xf32>
    %cst_0 = stablehlo.constant dense<[-0.0472587682, 0.0586337298, -0.0663535222, -0.0613417849, -0.160514936, 0.0729349405, 0.0806139335, -0.047637675, 0.0163339954, -0.129264608, -0.0471813157, 0.137795091, 0.0135730738, 0.23103635, -0.0787192732, 0.0580284409, -0.0195505824, 0.056581784]> : tensor<18xf32>
    %cst_1 = stablehlo.constant dense<"0x926DEBBD2B38213FE34431BE82A096BECA9FCC3DD93DD33E28E6833D26D56FBE455709BF03840FBF1EE64D3E77B1CA3E139786BDA907DCBE8DCCB23EC21C03BF4E0992BE715E7E3E1A6A66BFCA411E3E763D6EBE3A0B333D0B0FF8BC7692A53D9A2A8E3E6A509BBE3182113F3AB4943EE4CBAC3E6C90EE3E4E4CA13E08DEAC3E84B4F73C051A12BF05425DBDBB989DBE52B011BF7BB9D33DBBE068BE69E7D2BE4C9BD5BE24E3DB3D7BE9123E6E6B073FE161B6BB695ED53E88970F3FCE8DEB3E063572BF6AA2FB3EBD1B0B3EA6932D3E040E183EFFC61C3E02D5023ECA0213BE3ABA42BF267232BDB29AA4BEAC37DD3EBA8EECBD1AC4083DD2FFADBEA62651BE892A97BB381A18BF3D52F63DEDC92DBDDED5F2BE3C9475BF6A25523EE5C7F3BD691759BE3775C1BDD4013A3F1530A3BCC1EA0D3DB94618BF01B0283FCBE6BB3E1D82DA3EC9369C3C1CBBBB3E98F0173E89297B3E5A5A79BD17ED16BF99B5D23ECE2346BF5E8EC4BD798BA7BDE893D5BE9F227B3E2F1CA4BDF7F032BE5BED543EEF3443BE473B0E3FBCF40F3E6B4942BEBD1747BFF7E905BF3C95DE3EC4D1A5BCA1EFE7BDDB44283FE15703BFACE26FBE"> : tensor<6x18xf32>
    %cst_2 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    %0 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f32>) -> tensor<4x6xf32>
    %1 = stablehlo.transpose %arg0, dims = [1, 0, 2] : (tensor<4x5x5xf32>) -> tensor<5x4x5xf32>
    %c = stablehlo.constant dense<0> : tensor<i32>
    %2:6 = stablehlo.while(%iterArg = %1, %iterArg_3 = %cst, %iterArg_4 = %cst_0, %iterArg_5 = %cst_1, %iterArg_6 = %c, %iterArg_7 = %0) : tensor<5x4x5xf32>, tensor<5x18xf32>, tensor<18xf32>, tensor<6x18xf32>, tensor<i32>, tensor<4x6xf32>
    cond {
      %c_8 = stablehlo.constant dense<5> : tensor<i32>
      %3 = stablehlo.compare LT, %iterArg_6, %c_8, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %3 : tensor<i1>
    } do {
      %3 = func.call @dynamic_index_in_dim(%iterArg, %iterArg_6) : (tensor<5x4x5xf32>, tensor<i32>) -> tensor<4x5xf32>
      %4 = func.call @closed_call(%iterArg_3, %iterArg_4, %iterArg_5, %iterArg_7, %3) : (tensor<5x18xf32>, tensor<18xf32>, tensor<6x18xf32>, tensor<4x6xf32>, tensor<4x5xf32>) -> tensor<4x6xf32>
      %c_8 = stablehlo.constant dense<1> : tensor<i32>
      %5 = stablehlo.add %iterArg_6, %c_8 : tensor<i32>
      stablehlo.return %iterArg, %iterArg_3, %iterArg_4, %iterArg_5, %5, %4 : tensor<5x4x5xf32>, tensor<5x18xf32>, tensor<18xf32>, tensor<6x18xf32>, tensor<i32>, tensor<4x6xf32>
    }
    return %2#5 : tensor<4x6xf32>
  }
  func.func private @dynamic_index_in_dim(%arg0: tensor<5x4x5xf32>, %arg1: tensor<i32>) -> tensor<4x5xf32> {
    %c = stablehlo.constant dense<0> : tensor<i32>
    %c_0 = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.dynamic_slice %arg0, %arg1, %c, %c_0, sizes = [1, 4, 5] : (tensor<5x4x5xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x4x5xf32>
    %1 = stablehlo.reshape %0 : (tensor<1x4x5xf32>) -> tensor<4x5xf32>
    return %1 : tensor<4x5xf32>
  }
  func.func private @closed_call(%arg0: tensor<5x18xf32>, %arg1: tensor<18xf32>, %arg2: tensor<6x18xf32>, %arg3: tensor<4x6xf32>, %arg4: tensor<4x5xf32>) -> tensor<4x6xf32> {
    %0 = stablehlo.dot_general %arg4, %arg0, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x5xf32>, tensor<5x18xf32>) -> tensor<4x18xf32>
    %1 = stablehlo.broadcast_in_dim %arg1, dims = [1] : (tensor<18xf32>) -> tensor<1x18xf32>
    %2 = stablehlo.broadcast_in_dim %1, dims = [0, 1] : (tensor<1x18xf32>) -> tensor<4x18xf32>
    %3 = stablehlo.add %0, %2 : tensor<4x18xf32>
    %4 = stablehlo.dot_general %arg3, %arg2, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<4x6xf32>, tensor<6x18xf32>) -> tensor<4x18xf32>
    %5 = stablehlo.slice %3 [0:4, 0:6] : (tensor<4x18xf32>) -> tensor<4x6xf32>
    %6 = stablehlo.slice %4 [0:4, 0:6] : (tensor<4x18xf32>) -> tensor<4x6xf32>
    %7 = stablehlo.add %5, %6 : tensor<4x6xf32>
    %8 = stablehlo.negate %7 : tensor<4x6xf32>
    %9 = stablehlo.exponential %8 : tensor<4x6xf32>
    %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %10 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<4x6xf32>
    %11 = stablehlo.add %10, %9 : tensor<4x6xf32>
    %cst_0 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %12 = stablehlo.broadcast_in_dim %cst_0, dims = [] : (tensor<f32>) -> tensor<4x6xf32>
    %13 = stablehlo.divide %12, %11 : tensor<4x6xf32>
    %14 = stablehlo.slice %3 [0:4, 6:12] : (tensor<4x18xf32>) -> tensor<4x6xf32>
    %15 = stablehlo.slice %4 [0:4, 6:12] : (tensor<4x18xf32>) -> tensor<4x6xf32>
    %16 = stablehlo.add %14, %15 : tensor<4x6xf32>
    %17 = stablehlo.negate %16 : tensor<4x6xf32>
    %18 = stablehlo.exponential %17 : tensor<4x6xf32>
    %cst_1 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %19 = stablehlo.broadcast_in_dim %cst_1, dims = [] : (tensor<f32>) -> tensor<4x6xf32>
    %20 = stablehlo.add %19, %18 : tensor<4x6xf32>
    %cst_2 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %21 = stablehlo.broadcast_in_dim %cst_2, dims = [] : (tensor<f32>) -> tensor<4x6xf32>
    %22 = stablehlo.divide %21, %20 : tensor<4x6xf32>
    %23 = stablehlo.slice %3 [0:4, 12:18] : (tensor<4x18xf32>) -> tensor<4x6xf32>
    %24 = stablehlo.slice %4 [0:4, 12:18] : (tensor<4x18xf32>) -> tensor<4x6xf32>
    %25 = stablehlo.multiply %13, %24 : tensor<4x6xf32>
    %26 = stablehlo.add %23, %25 : tensor<4x6xf32>
    %27 = stablehlo.tanh %26 : tensor<4x6xf32>
    %cst_3 = stablehlo.constant dense<1.000000e+00> : tensor<f32>
    %28 = stablehlo.broadcast_in_dim %cst_3, dims = [] : (tensor<f32>) -> tensor<4x6xf32>
    %29 = stablehlo.subtract %28, %22 : tensor<4x6xf32>
    %30 = stablehlo.multiply %29, %27 : tensor<4x6xf32>
    %31 = stablehlo.multiply %22, %arg3 : tensor<4x6xf32>
    %32 = stablehlo.add %30, %31 : tensor<4x6xf32>
    return %32 : tensor<4x6xf32>
  }
}
