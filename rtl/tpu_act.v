`default_nettype none
// Activation datapath, per column (docs/isa.md "Activation arithmetic"):
//   stage 1: x = relu(acc + bias)                 32-bit wrapping add
//            m = in_first ? x : max(m, x)         signed; the row leaves with in_last
//   stage 2: p = (int64)m * (int64)mult            exact in 64 bits
//   stage 3: q = round(p >> shift), ties away from zero, 64-bit wrapping add; clamp to int8
// or, for a row with in_bf16, in fp32 (docs/isa.md "Floating point (bf16)", rtl/tpu_fp.vh):
//   stage 1: x = relu(acc + bias), m = in_first ? x : max(m, x)   fp32_add, fp32_relu, fp32_max
//   stage 3: fp32_to_bf16(m)                       (stage 2 only carries the row)
// out_i32 is m (int32 or fp32 bits: WR_HOST's ACC path); out_ub the UB data: the int8 row in its
// low half, or the bf16 row pair (element c at bits 16*c, as the UB row pair holds it).
// A pooling window (ACTIVATE.POOL) enters as consecutive rows, the first with in_first, the last
// with in_last; stage 1 keeps their running maximum and only the last moves on, with its tag, so
// a window of k rows leaves 3 cycles after its last. A plain row has both flags set.
// Fixed latency 3. stall holds every pipeline register, so a row's latency grows by the number
// of stalled cycles and the outputs stay stable while stalled. bias, mult and shift must be
// static while a row is in the pipeline (each stage reads its own operand).
module tpu_act #(
    parameter N = 16,
    parameter TAG_W = 21
) (
    input wire clk,
    input wire rst,
    input wire stall,
    input wire in_valid,
    input wire in_first,  // first row of a window: starts a new maximum
    input wire in_last,  // last row of its window: the maximum moves on
    input wire [32*N-1:0] in_data,
    input wire in_bias,
    input wire in_relu,
    input wire in_bf16,
    input wire [TAG_W-1:0] in_tag,
    input wire [32*N-1:0] bias,
    input wire [32*N-1:0] mult,
    input wire [6*N-1:0] shift,
    output reg out_valid,
    output reg [32*N-1:0] out_i32,
    output wire [16*N-1:0] out_ub,
    output reg out_bf16,
    output reg [TAG_W-1:0] out_tag
);
    `include "tpu_fp.vh"

    reg s1_valid;
    reg s2_valid;
    reg s1_bf16;
    reg s2_bf16;
    reg [TAG_W-1:0] s1_tag;
    reg [TAG_W-1:0] s2_tag;
    reg [32*N-1:0] s1_x;
    reg [32*N-1:0] s2_x;
    reg [64*N-1:0] s2_p;
    reg [8*N-1:0] out_i8;
    reg [32*N-1:0] f1_x;  // stage 1 of a bf16 row
    reg [16*N-1:0] out_b16;  // its output

    // One function per stage and column, called only for a valid row: an idle pipeline computes
    // nothing. The datapath is procedural (Icarus evaluates a 64-bit multiply in a continuous
    // assignment tens of times slower than in procedural code).
    function [31:0] stage1(input [31:0] acc, input [31:0] b, input add_bias, input do_relu,
                           input first, input [31:0] max);
        reg [31:0] sum;
        reg [31:0] x;
        begin
            sum = acc + (add_bias ? b : 32'd0);
            x = (do_relu && sum[31]) ? 32'd0 : sum;
            stage1 = (first || $signed(x) > $signed(max)) ? x : max;
        end
    endfunction

    // Stage 1 in fp32: without bias and ReLU, a plain row's x is the ACC bits as they are. The
    // fp32 functions are C++ functions of their own under Verilator (no_inline_task): inlined,
    // their locals would be cleared at every clock edge, with a row or without.
    function [31:0] stage1_fp(input [31:0] acc, input [31:0] b, input add_bias, input do_relu,
                              input first, input [31:0] max);
        /*verilator no_inline_task*/
        reg [31:0] sum;
        reg [31:0] x;
        begin
            sum = add_bias ? fp32_add(acc, b) : acc;
            x = do_relu ? fp32_relu(sum) : sum;
            stage1_fp = first ? x : fp32_max(max, x);
        end
    endfunction

    // (A task: Verilator keeps no function wider than 64 bits out of line.)
    task stage3_fp(input [32*N-1:0] m, output [16*N-1:0] b16);
        /*verilator no_inline_task*/
        integer c;
        begin
            for (c = 0; c < N; c = c + 1) b16[16*c+:16] = fp32_to_bf16(m[32*c+:32]);
        end
    endtask

    // Sign-extend both operands; the low 64 bits of the product are exact.
    function [63:0] stage2(input [31:0] x, input [31:0] m);
        stage2 = {{32{x[31]}}, x} * {{32{m[31]}}, m};
    endfunction

    function [7:0] stage3(input [63:0] p, input [5:0] s);
        reg [63:0] half;
        reg [63:0] q;
        begin
            // Add 2^(s-1) (one less when p < 0, so ties go away from zero), then shift
            // arithmetically; s == 0 passes p through. (An if, not ?: with the unsigned p,
            // which would make the shift logical.)
            half = 64'd1 << (s - 6'd1);
            if (s == 6'd0) q = p;
            else q = $signed(p + (p[63] ? half - 64'd1 : half)) >>> s;
            // q fits in int8 exactly when bits 63..7 are all copies of the sign.
            if (q[63:7] == {57{1'b0}} || q[63:7] == {57{1'b1}}) stage3 = q[7:0];
            else stage3 = q[63] ? 8'h80 : 8'h7f;
        end
    endfunction

    always @(posedge clk) begin
        if (rst) begin
            s1_valid  <= 1'b0;
            s2_valid  <= 1'b0;
            out_valid <= 1'b0;
        end else if (!stall) begin
            s1_valid  <= in_valid && in_last;
            s2_valid  <= s1_valid;
            out_valid <= s2_valid;
        end
    end

    // Data registers need no reset: the valid bits qualify them. A stage loads only when a row
    // enters it, so between rows they hold the last one. Every row goes through the int8 stages;
    // a bf16 row also through the fp32 ones beside them (f1_x, out_b16), which take the place of
    // the int8 results where it leaves a stage: the int8 code is as without bf16, and the fp32
    // code runs only in the branches of bf16 rows, each of more than one statement (tpu_fp.vh's
    // header: no float function behind a ?: that an int8 row evaluates).
    integer c;
    always @(posedge clk) begin
        if (!stall) begin
            if (in_valid) begin
                for (c = 0; c < N; c = c + 1)
                s1_x[32*c+:32] <= stage1(
                    in_data[32*c+:32], bias[32*c+:32], in_bias, in_relu, in_first, s1_x[32*c+:32]
                );
                s1_tag  <= in_tag;
                s1_bf16 <= in_bf16;
            end
            if (s1_valid) begin
                for (c = 0; c < N; c = c + 1)
                s2_p[64*c+:64] <= stage2(s1_x[32*c+:32], mult[32*c+:32]);
                s2_x    <= s1_bf16 ? f1_x : s1_x;
                s2_tag  <= s1_tag;
                s2_bf16 <= s1_bf16;
            end
            if (s2_valid) begin
                for (c = 0; c < N; c = c + 1)
                out_i8[8*c+:8] <= stage3(s2_p[64*c+:64], shift[6*c+:6]);
                out_i32  <= s2_x;
                out_tag  <= s2_tag;
                out_bf16 <= s2_bf16;
            end
        end
    end

    integer e;
    always @(posedge clk) begin
        if (!stall) begin
            if (in_valid && in_bf16)
                for (e = 0; e < N; e = e + 1)
                f1_x[32*e+:32] <= stage1_fp(
                    in_data[32*e+:32], bias[32*e+:32], in_bias, in_relu, in_first, f1_x[32*e+:32]
                );
            if (s2_valid && s2_bf16) begin : s3_fp
                reg [16*N-1:0] b16;
                stage3_fp(s2_x, b16);
                out_b16 <= b16;
            end
        end
    end

    assign out_ub = out_bf16 ? out_b16 : {{8 * N{1'b0}}, out_i8};
endmodule
