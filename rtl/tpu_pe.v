`default_nettype none
// tpu_pe: one weight-stationary processing element with two weight banks, int8 and bf16.
//
// Activations move left to right and partial sums top to bottom, one PE per cycle, in two sums
// side by side, an int32 and an fp32 one:
//   a_out <= a_in, s_out <= s_in
//   p_out <= p_in + a_in * w[s_in][7:0]                    (PW-bit wrap), on clk
//   q_out <= fp32_add(q_in, bf16_mul(a_in, w[s_in]))       (rtl/tpu_fp.vh), on fclk
// Both read every row; the array keeps the sum of the row's type at the bottom (tpu_array).
// fclk is clk gated by tpu_icg while no bf16 row is in the array: the float datapath idles then.
// The bank select s_in travels with its activation, so a bank switch follows the wavefront.
// Weights shift down the column: when w_en, bank w_sel <= w_in. w_out is bank w_sel taken
// straight from the bank registers, so a column of PEs forms a shift register that moves one row
// per cycle. The MXU never shifts a bank that an in-flight activation still reads.
module tpu_pe #(
    parameter AW = 16,  // activation: int8/uint8 extended to 16 bits at the array edge, or bf16
    parameter WW = 16,  // weight cell: an int8 sign-extended (the low byte is used), or bf16
    parameter PW = 32   // partial sums: int32 and fp32
) (
    input  wire          clk,
    input  wire          fclk,   // clk, gated: ticks while a bf16 row is in the array
    input  wire          rst,
    input  wire [AW-1:0] a_in,
    input  wire          s_in,
    input  wire [PW-1:0] p_in,
    input  wire [PW-1:0] q_in,
    input  wire [WW-1:0] w_in,
    input  wire          w_en,
    input  wire          w_sel,
    output reg  [AW-1:0] a_out,
    output reg           s_out,
    output reg  [PW-1:0] p_out,
    output reg  [PW-1:0] q_out,
    output wire [WW-1:0] w_out
);
    // Flattened into the array like any small module: otherwise the float code makes Verilator
    // keep each PE a C++ object of its own, called through three functions a cycle (half the
    // core's int8 speed).
    /*verilator inline_module*/
    `include "tpu_fp.vh"

    reg [WW-1:0] w0, w1;

    // p + a * w, w a cell's low byte (PW-bit wrap). All operands are signed, so each is
    // sign-extended to PW bits before the multiply. One expression without intermediate nets:
    // several times faster under Icarus.
    function [PW-1:0] int8_mac(input [PW-1:0] p, input [AW-1:0] a, input [7:0] w);
        int8_mac = $signed(p) + $signed(a) * $signed(w);
    endfunction

    assign w_out = w_sel ? w1 : w0;

    always @(posedge clk) begin
        if (rst) begin
            a_out <= {AW{1'b0}};
            s_out <= 1'b0;
            p_out <= {PW{1'b0}};
            w0    <= {WW{1'b0}};
            w1    <= {WW{1'b0}};
        end else begin
            a_out <= a_in;
            s_out <= s_in;
            p_out <= int8_mac(p_in, a_in, s_in ? w1[7:0] : w0[7:0]);
            if (w_en && !w_sel) w0 <= w_in;
            if (w_en && w_sel) w1 <= w_in;
        end
    end

    // The fp32 sum (tpu_fp.vh) in one statement: a named block's reg for the product would be a
    // variable of the model under Verilator, stored and loaded at every tick.
    always @(posedge fclk)
        q_out <= rst ? {PW{1'b0}} : fp32_add(
            q_in, bf16_mul(a_in, s_in ? w1 : w0)
        );
endmodule
