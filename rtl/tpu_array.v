`default_nettype none
// tpu_array: N x N grid of tpu_pe.
//
// Row r takes its activation, bank select and type (int8 or bf16) from a_in/s_in/f_in lane r at
// the left edge (the MXU has already skewed them: row r one cycle behind row r-1). Partial sums start at zero at the
// top and leave the bottom of column c on p_out lane c. Weights enter the top of column c from
// w_in lane c and shift down under that column's w_en/w_sel. Every link between two PEs is its
// own net, declared in the generate block of the PE that drives it.
module tpu_array #(
    parameter N  = 16,
    parameter AW = 16,
    parameter WW = 16,
    parameter PW = 32
) (
    input  wire            clk,
    input  wire            rst,
    input  wire [AW*N-1:0] a_in,
    input  wire [   N-1:0] s_in,
    input  wire [   N-1:0] f_in,
    input  wire            bf,     // some row in the array is bf16 (every PE's f_in is 0 otherwise)
    input  wire [WW*N-1:0] w_in,
    input  wire [   N-1:0] w_en,
    input  wire [   N-1:0] w_sel,
    output wire [PW*N-1:0] p_out
);
    genvar r, c;
    generate
        for (r = 0; r < N; r = r + 1) begin : g_row
            for (c = 0; c < N; c = c + 1) begin : g_col
                // The last column's a_o/s_o/f_o and the last row's w_o leave the array and are not
                // used.
                /* verilator lint_off UNUSEDSIGNAL */
                wire [AW-1:0] a_o;
                wire          s_o;
                wire          f_o;
                wire [WW-1:0] w_o;
                /* verilator lint_on UNUSEDSIGNAL */
                wire [PW-1:0] p_o;
                wire [AW-1:0] a_i;
                wire          s_i;
                wire          f_i;
                wire [PW-1:0] p_i;
                wire [WW-1:0] w_i;

                if (c == 0) begin : g_left
                    assign a_i = a_in[r*AW+:AW];
                    assign s_i = s_in[r];
                    assign f_i = f_in[r];
                end else begin : g_inner_c
                    assign a_i = g_row[r].g_col[c-1].a_o;
                    assign s_i = g_row[r].g_col[c-1].s_o;
                    assign f_i = g_row[r].g_col[c-1].f_o;
                end

                if (r == 0) begin : g_top
                    assign p_i = {PW{1'b0}};
                    assign w_i = w_in[c*WW+:WW];
                end else begin : g_inner_r
                    assign p_i = g_row[r-1].g_col[c].p_o;
                    assign w_i = g_row[r-1].g_col[c].w_o;
                end

                if (r == N - 1) begin : g_bottom
                    assign p_out[c*PW+:PW] = p_o;
                end

                tpu_pe #(
                    .AW(AW),
                    .WW(WW),
                    .PW(PW)
                ) u_pe (
                    .clk  (clk),
                    .rst  (rst),
                    .a_in (a_i),
                    .s_in (s_i),
                    .f_in (f_i),
                    .bf   (bf),
                    .p_in (p_i),
                    .w_in (w_i),
                    .w_en (w_en[c]),
                    .w_sel(w_sel[c]),
                    .a_out(a_o),
                    .s_out(s_o),
                    .f_out(f_o),
                    .p_out(p_o),
                    .w_out(w_o)
                );
            end
        end
    endgenerate
endmodule
