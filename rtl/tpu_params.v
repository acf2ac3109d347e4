`default_nettype none
// Activation parameter registers (RD_PARAMS): bias and mult are N int32 lanes, shift keeps the
// low 6 bits of each int32 lane. The load unit writes one vector per cycle, selected by prm_sel
// (0 bias, 1 mult, 2 shift; 3 is never sent and is ignored). Zero after reset.
module tpu_params #(
    parameter N = 16
) (
    input wire clk,
    input wire rst,
    input wire prm_en,
    input wire [1:0] prm_sel,
    input wire [32*N-1:0] prm_data,
    output reg [32*N-1:0] bias,
    output reg [32*N-1:0] mult,
    output reg [6*N-1:0] shift
);
    integer c;

    always @(posedge clk) begin
        if (rst) begin
            bias  <= {32 * N{1'b0}};
            mult  <= {32 * N{1'b0}};
            shift <= {6 * N{1'b0}};
        end else if (prm_en) begin
            case (prm_sel)
                2'd0: bias <= prm_data;
                2'd1: mult <= prm_data;
                2'd2: for (c = 0; c < N; c = c + 1) shift[6*c+:6] <= prm_data[32*c+:6];
                default: ;
            endcase
        end
    end
endmodule
