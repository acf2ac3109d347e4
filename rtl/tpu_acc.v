`default_nettype none
`include "tpu_isa.vh"
// Accumulator memory: ROWS rows of N int32. The write port is a one-cycle read-modify-write (the
// addressed row as it is before the clock edge, plus the data, written at the edge), so
// back-to-back accumulates to one row see each other; the row is read and added only in a cycle
// that writes. Two registered read ports (activate unit, store unit).
module tpu_acc #(
    parameter N = 16,
    parameter ROWS = 4096
) (
    input wire clk,
    // Addresses arrive validated (< ROWS): only their low AW bits are used, hence the
    // UNUSEDSIGNAL waivers on the address ports.
    input wire w_en,
    /* verilator lint_off UNUSEDSIGNAL */
    input wire [`TPU_INSN_B_W-1:0] w_addr,
    /* verilator lint_on UNUSEDSIGNAL */
    input wire w_accumulate,
    input wire [32*N-1:0] w_data,
    input wire r0_en,
    /* verilator lint_off UNUSEDSIGNAL */
    input wire [`TPU_INSN_B_W-1:0] r0_addr,
    /* verilator lint_on UNUSEDSIGNAL */
    output reg [32*N-1:0] r0_data,
    input wire r1_en,
    /* verilator lint_off UNUSEDSIGNAL */
    input wire [`TPU_INSN_B_W-1:0] r1_addr,
    /* verilator lint_on UNUSEDSIGNAL */
    output reg [32*N-1:0] r1_data
);
    localparam AW = (ROWS > 1) ? $clog2(ROWS) : 1;

    reg [32*N-1:0] mem[0:ROWS-1]  /*verilator public_flat_rd*/;

    wire [AW-1:0] wa = w_addr[AW-1:0];

    // The new row: per-lane adds, carries must not cross into the next int32.
    function [32*N-1:0] rmw(input [32*N-1:0] old, input [32*N-1:0] data, input accumulate);
        integer c;
        begin
            for (c = 0; c < N; c = c + 1)
            rmw[32*c+:32] = (accumulate ? old[32*c+:32] : 32'd0) + data[32*c+:32];
        end
    endfunction

    always @(posedge clk) begin
        if (w_en) mem[wa] <= rmw(mem[wa], w_data, w_accumulate);
        if (r0_en) r0_data <= mem[r0_addr[AW-1:0]];
        if (r1_en) r1_data <= mem[r1_addr[AW-1:0]];
    end
endmodule
