`default_nettype none
// tb_fp: every function of rtl/tpu_fp.vh against the golden model (sim/fp.c), bit for bit, on
// the vectors tests/rtl/fp_vectors.c writes into fp_vectors.hex in the working directory (the
// ctest fixture rtl.fp_vectors): {op, x, y, result} a line, bf16 in the low 16 bits.
module tb_fp;
    parameter N = 8;  // the array size: the arithmetic does not depend on it

    `include "tpu_fp.vh"

    localparam NOPS = 6;
    reg [103:0] v;
    reg [ 31:0] got;
    integer fd, n, errors, i;
    integer count[0:NOPS-1];

    initial begin
        errors = 0;
        for (i = 0; i < NOPS; i = i + 1) count[i] = 0;
        fd = $fopen("fp_vectors.hex", "r");
        if (fd == 0) begin
            $display("FAIL: cannot open fp_vectors.hex (written by the rtl.fp_vectors fixture)");
            $finish;
        end
        n = $fscanf(fd, "%h\n", v);
        while (n == 1) begin
            case (v[103:96])
                8'd0: got = bf16_to_fp32(v[79:64]);
                8'd1: got = bf16_mul(v[79:64], v[47:32]);
                8'd2: got = fp32_add(v[95:64], v[63:32]);
                8'd3: got = {16'd0, fp32_to_bf16(v[95:64])};
                8'd4: got = fp32_max(v[95:64], v[63:32]);
                default: got = fp32_relu(v[95:64]);
            endcase
            count[v[103:96]] = count[v[103:96]] + 1;
            if (got !== v[31:0]) begin
                errors = errors + 1;
                if (errors <= 10)
                    $display(
                        "FAIL: op %0d x %h y %h: got %h, golden model %h",
                        v[103:96],
                        v[95:64],
                        v[63:32],
                        got,
                        v[31:0]
                    );
            end
            n = $fscanf(fd, "%h\n", v);
        end
        $fclose(fd);
        $display(
            "cases: bf16_to_fp32 %0d, bf16_mul %0d, fp32_add %0d, to_bf16 %0d, max %0d, relu %0d",
            count[0], count[1], count[2], count[3], count[4], count[5]);
        for (i = 0; i < NOPS; i = i + 1)
        if (count[i] == 0) begin
            $display("FAIL: no case of op %0d", i);
            errors = errors + 1;
        end
        if (errors == 0) $display("PASS");
        else $display("FAIL: %0d cases differ", errors);
        $finish;
    end
endmodule
