`default_nettype none
// fp_array: bench_fp's harness, N x N multiply-add lanes wired like tpu_array (activations move
// right, sums down, one PE per cycle; weights stationary, shifted down the columns under w_en),
// each lane int8 (tpu_pe's p + a * w, 32-bit wrap) or bf16 (rtl/tpu_fp.vh: rne32(p + fp32(a * w)))
// as bf16 says. It measures what the bf16 arithmetic costs a verilated array, and checks it there.
module fp_array #(
    parameter N = 16
) (
    input  wire            clk,
    input  wire            bf16,  // 0: int8 (a in bits 8:0, w in 7:0, two's complement)
    input  wire [16*N-1:0] a_in,  // row r's activation at the left edge
    input  wire [16*N-1:0] w_in,  // column c's weight at the top
    input  wire            w_en,
    output wire [32*N-1:0] p_out  // column c's sum at the bottom
);
    `include "tpu_fp.vh"

    genvar r, c;
    generate
        for (r = 0; r < N; r = r + 1) begin : g_row
            for (c = 0; c < N; c = c + 1) begin : g_col
                // The last column's a and the last row's w leave the array unused.
                /* verilator lint_off UNUSEDSIGNAL */
                reg [15:0] a;
                reg [15:0] w;
                /* verilator lint_on UNUSEDSIGNAL */
                reg [31:0] p;
                wire [15:0] a_i, w_i;
                wire [31:0] p_i;
                if (c == 0) begin : g_left
                    assign a_i = a_in[r*16+:16];
                end else begin : g_inner_c
                    assign a_i = g_row[r].g_col[c-1].a;
                end
                if (r == 0) begin : g_top
                    assign w_i = w_in[c*16+:16];
                    assign p_i = 32'd0;
                end else begin : g_inner_r
                    assign w_i = g_row[r-1].g_col[c].w;
                    assign p_i = g_row[r-1].g_col[c].p;
                end
                if (r == N - 1) begin : g_bottom
                    assign p_out[c*32+:32] = p;
                end
                always @(posedge clk) begin
                    a <= a_i;
                    if (w_en) w <= w_i;
                    // Two statements keep this a branch (rtl/tpu_fp.vh).
                    if (bf16) begin : g_bf16
                        reg [31:0] prod;
                        prod = bf16_mul(a_i, w);
                        p <= fp32_add(p_i, prod);
                    end else p <= $signed(p_i) + $signed(a_i[8:0]) * $signed(w[7:0]);
                end
            end
        end
    endgenerate
endmodule
