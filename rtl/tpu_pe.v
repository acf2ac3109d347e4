`default_nettype none
// tpu_pe: one weight-stationary processing element with two weight banks.
//
// Activations move left to right and partial sums top to bottom, one PE per cycle:
//   a_out <= a_in, s_out <= s_in, p_out <= p_in + a_in * w[s_in]   (PW-bit wrap)
// The bank select s_in travels with its activation, so a bank switch follows the wavefront.
// Weights shift down the column: when w_en, bank w_sel <= w_in. w_out is bank w_sel taken
// straight from the bank registers, so a column of PEs forms a shift register that moves one
// row per cycle. The MXU never shifts a bank that an in-flight activation still reads.
module tpu_pe #(
    parameter AW = 9,  // activation: int8 or uint8, extended to 9-bit signed at the array edge
    parameter WW = 8,  // weight, signed
    parameter PW = 32  // partial sum
) (
    input  wire          clk,
    input  wire          rst,
    input  wire [AW-1:0] a_in,
    input  wire          s_in,
    input  wire [PW-1:0] p_in,
    input  wire [WW-1:0] w_in,
    input  wire          w_en,
    input  wire          w_sel,
    output reg  [AW-1:0] a_out,
    output reg           s_out,
    output reg  [PW-1:0] p_out,
    output wire [WW-1:0] w_out
);
    reg [WW-1:0] w0, w1;

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
            // All operands are signed, so each is sign-extended to PW bits before the multiply. One
            // expression without intermediate nets: several times faster under Icarus.
            p_out <= $signed(p_in) + $signed(a_in) * $signed(s_in ? w1 : w0);
            if (w_en && !w_sel) w0 <= w_in;
            if (w_en && w_sel) w1 <= w_in;
        end
    end
endmodule
