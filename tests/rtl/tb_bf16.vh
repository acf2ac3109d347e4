// tb_bf16.vh - bf16 and fp32 test operands for the benches of blocks with a bf16 path, as
// functions of a random word x: an edge value of docs/isa.md "Floating point (bf16)" one time in
// four (+-0, +-inf, NaNs, a subnormal, the smallest normal, the largest finite values, 1 and -1),
// else a magnitude of 2^-8 .. 2^4 of either sign, so that sums grow, cancel and round. Included
// in a bench's module body, beside rtl/tpu_fp.vh (its reference arithmetic).
function [15:0] tb_bf16(input [31:0] x);
    if (x[1:0] != 2'd0) tb_bf16 = {x[31], 8'd119 + {4'd0, x[11:8] % 4'd13}, x[22:16]};
    else
        case (x[6:2] % 5'd12)
            0: tb_bf16 = 16'h0000;
            1: tb_bf16 = 16'h8000;
            2: tb_bf16 = 16'h7f80;
            3: tb_bf16 = 16'hff80;
            4: tb_bf16 = 16'h7fc0;
            5: tb_bf16 = 16'hffa1;  // a signalling NaN with a payload
            6: tb_bf16 = 16'h0001;  // subnormal
            7: tb_bf16 = 16'h0080;  // 2^-126
            8: tb_bf16 = 16'h7f7f;
            9: tb_bf16 = 16'hff7f;
            10: tb_bf16 = 16'h3f80;
            default: tb_bf16 = 16'hbf80;
        endcase
endfunction

// The same for fp32 (sums, biases), with a random full fraction.
function [31:0] tb_fp32(input [31:0] x);
    reg [31:0] y;
    begin
        y = $urandom;
        if (x[1:0] != 2'd0) tb_fp32 = {x[31], 8'd119 + {4'd0, x[11:8] % 4'd13}, y[22:0]};
        else
            case (x[6:2] % 5'd12)
                0: tb_fp32 = 32'h0000_0000;
                1: tb_fp32 = 32'h8000_0000;
                2: tb_fp32 = 32'h7f80_0000;
                3: tb_fp32 = 32'hff80_0000;
                4: tb_fp32 = 32'h7fc0_0000;
                5: tb_fp32 = 32'hff80_0a01;  // a signalling NaN with a payload
                6: tb_fp32 = 32'h8000_0001;  // subnormal
                7: tb_fp32 = 32'h0080_0000;  // 2^-126
                8: tb_fp32 = 32'h7f7f_ffff;
                9: tb_fp32 = 32'hff7f_ffff;
                10: tb_fp32 = 32'h3f80_0000;
                default: tb_fp32 = 32'hbf80_0000;
            endcase
    end
endfunction
