`default_nettype none
// tpu_array: N x N grid of tpu_pe.
//
// Row r takes its activation and bank select from a_in/s_in lane r at the left edge (the MXU has
// already skewed them: row r one cycle behind row r-1). Partial sums, an int32 and an fp32 one,
// start at zero (+0) at the top; every PE adds to both on every row. At the bottom of column c
// the row's type picks one for p_out lane c: f_in, the type of the row entering row N-1 with a_in
// lane N-1, travels along the bottom row with it. Weights enter the top of column c from w_in
// lane c and shift down under that column's w_en/w_sel. Every link between two PEs is its own
// net, declared in the generate block of the PE that drives it.
//
// The fp32 registers are clocked by fclk, clk gated by tpu_icg while bf is low: an int8 workload
// never toggles them (nor, under Verilator, evaluates them).
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
    input  wire            f_in,   // the row entering row N-1 (lane N-1 of a_in) is bf16
    input  wire            bf,     // a bf16 row is in the array, or enters it at this edge
    input  wire [WW*N-1:0] w_in,
    input  wire [   N-1:0] w_en,
    input  wire [   N-1:0] w_sel,
    output wire [PW*N-1:0] p_out
);
    wire fclk;
    tpu_icg u_icg (
        .clk (clk),
        .en  (bf | rst),  // reset clears the float registers too
        .gclk(fclk)
    );

    genvar r, c;
    generate
        for (r = 0; r < N; r = r + 1) begin : g_row
            for (c = 0; c < N; c = c + 1) begin : g_col
                // The last column's a_o/s_o and the last row's w_o leave the array and are not
                // used.
                /* verilator lint_off UNUSEDSIGNAL */
                wire [AW-1:0] a_o;
                wire          s_o;
                wire [WW-1:0] w_o;
                /* verilator lint_on UNUSEDSIGNAL */
                wire [PW-1:0] p_o;
                wire [PW-1:0] q_o;
                wire [AW-1:0] a_i;
                wire          s_i;
                wire [PW-1:0] p_i;
                wire [PW-1:0] q_i;
                wire [WW-1:0] w_i;

                if (c == 0) begin : g_left
                    assign a_i = a_in[r*AW+:AW];
                    assign s_i = s_in[r];
                end else begin : g_inner_c
                    assign a_i = g_row[r].g_col[c-1].a_o;
                    assign s_i = g_row[r].g_col[c-1].s_o;
                end

                if (r == 0) begin : g_top
                    assign p_i = {PW{1'b0}};
                    assign q_i = {PW{1'b0}};
                    assign w_i = w_in[c*WW+:WW];
                end else begin : g_inner_r
                    assign p_i = g_row[r-1].g_col[c].p_o;
                    assign q_i = g_row[r-1].g_col[c].q_o;
                    assign w_i = g_row[r-1].g_col[c].w_o;
                end

                // f: the type of the row whose sums PE (N-1, c) holds.
                if (r == N - 1) begin : g_bottom
                    wire f_i;
                    reg  f;
                    if (c == 0) begin : g_first
                        assign f_i = f_in;
                    end else begin : g_next
                        assign f_i = g_row[r].g_col[c-1].g_bottom.f;
                    end
                    always @(posedge clk) f <= rst ? 1'b0 : f_i;
                    assign p_out[c*PW+:PW] = f ? q_o : p_o;
                end

                tpu_pe #(
                    .AW(AW),
                    .WW(WW),
                    .PW(PW)
                ) u_pe (
                    .clk  (clk),
                    .fclk (fclk),
                    .rst  (rst),
                    .a_in (a_i),
                    .s_in (s_i),
                    .p_in (p_i),
                    .q_in (q_i),
                    .w_in (w_i),
                    .w_en (w_en[c]),
                    .w_sel(w_sel[c]),
                    .a_out(a_o),
                    .s_out(s_o),
                    .p_out(p_o),
                    .q_out(q_o),
                    .w_out(w_o)
                );
            end
        end
    endgenerate
endmodule
