`default_nettype none
`include "tpu_isa.vh"
// Accumulator memory: ROWS rows of N 32-bit words, int32 or (w_bf16) fp32. The write port is a
// one-cycle read-modify-write (the addressed row as it is before the clock edge, plus the data,
// written at the edge), so back-to-back accumulates to one row see each other; the row is read and
// added only in a cycle that writes. An int32 add wraps; an fp32 one is tpu_fp.vh's fp32_add
// (docs/isa.md "Floating point (bf16)"), and without w_accumulate the data is written as it is.
// Two registered read ports (activate unit, store unit).
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
    input wire w_bf16,
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
    `include "tpu_fp.vh"

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

    // The same in fp32. Under Verilator a C++ function of its own (no_inline_task): inlined, the
    // locals of its N fp32_adds would be cleared at every clock edge, an int32 write's too.
    // (A task: Verilator keeps no function wider than 64 bits out of line.)
    task fp_rmw(input [32*N-1:0] old, input [32*N-1:0] data, output [32*N-1:0] sum);
        /*verilator no_inline_task*/
        integer c;
        begin
            for (c = 0; c < N; c = c + 1) sum[32*c+:32] = fp32_add(old[32*c+:32], data[32*c+:32]);
        end
    endtask

    // The fp32 add in a branch of its own, in two statements (tpu_fp.vh's header), so that an
    // int32 write never calls it. Written without accumulating, both types are the data.
    always @(posedge clk) begin
        if (w_en && w_bf16 && w_accumulate) begin : fp_row
            reg [32*N-1:0] fsum;
            fp_rmw(mem[wa], w_data, fsum);
            mem[wa] <= fsum;
        end else if (w_en) mem[wa] <= rmw(mem[wa], w_data, w_accumulate);
        if (r0_en) r0_data <= mem[r0_addr[AW-1:0]];
        if (r1_en) r1_data <= mem[r1_addr[AW-1:0]];
    end
endmodule
