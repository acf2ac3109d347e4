`default_nettype none
`include "tpu_isa.vh"
// Unified buffer: ROWS rows of N bytes, two write ports (load unit, activate unit), a zero port
// that sets a row to zero (the load unit's ZERO) and two registered read ports (MXU, store
// unit). The sequencer's interlocks guarantee that no two ports touch the same row in one cycle,
// so there is no collision logic.
// Built as W0_ROWS (at least 2) banks interleaved by the low row bits, consecutive rows are in
// different banks, so a port may move several of them in one cycle, one access per bank:
// - the load port w0 writes up to W0_ROWS rows per cycle (an RD_HOST row of up to 4N bytes):
//   w0_rows (1..W0_ROWS) rows from w0_addr on, row w0_addr + i from w0_data's lane i (bits
//   8*N*i and up); the load unit keeps w0_addr + w0_rows <= ROWS;
// - the MXU's read port r0 and the activate unit's write port w1 move a row pair with r0_pair,
//   w1_pair (a bf16 vector, docs/isa.md "Floating point (bf16)"): rows addr and addr + 1 in the
//   low and high halves of the data, addr + 1 < ROWS; otherwise the one row addr in the low
//   half (r0_data's high half then holds the last pair's).
module tpu_ub #(
    parameter N = 16,
    parameter ROWS = 4096,
    parameter W0_ROWS = 4
) (
    input wire clk,
    // Addresses arrive validated (< ROWS): only their low AW bits are used, hence the
    // UNUSEDSIGNAL waivers on the address ports.
    input wire w0_en,
    /* verilator lint_off UNUSEDSIGNAL */
    input wire [`TPU_INSN_B_W-1:0] w0_addr,
    /* verilator lint_on UNUSEDSIGNAL */
    input wire [$clog2(W0_ROWS+1)-1:0] w0_rows,
    input wire [8*N*W0_ROWS-1:0] w0_data,
    input wire w1_en,
    /* verilator lint_off UNUSEDSIGNAL */
    input wire [`TPU_INSN_B_W-1:0] w1_addr,
    /* verilator lint_on UNUSEDSIGNAL */
    input wire w1_pair,
    input wire [16*N-1:0] w1_data,
    input wire z_en,
    /* verilator lint_off UNUSEDSIGNAL */
    input wire [`TPU_INSN_B_W-1:0] z_addr,
    /* verilator lint_on UNUSEDSIGNAL */
    input wire r0_en,
    /* verilator lint_off UNUSEDSIGNAL */
    input wire [`TPU_INSN_B_W-1:0] r0_addr,
    /* verilator lint_on UNUSEDSIGNAL */
    input wire r0_pair,
    output reg [16*N-1:0] r0_data,
    input wire r1_en,
    /* verilator lint_off UNUSEDSIGNAL */
    input wire [`TPU_INSN_B_W-1:0] r1_addr,
    /* verilator lint_on UNUSEDSIGNAL */
    output reg [8*N-1:0] r1_data
);
    localparam AW = (ROWS > 1) ? $clog2(ROWS) : 1;
    localparam [AW-1:0] ONE = 1;
    localparam CW = $clog2(W0_ROWS + 1);

    reg [8*N-1:0] mem[0:ROWS-1]  /*verilator public_flat_rd*/;

    integer i;
    always @(posedge clk) begin
        for (i = 0; i < W0_ROWS; i = i + 1)
        if (w0_en && i < {{(32 - CW) {1'b0}}, w0_rows})
            mem[w0_addr[AW-1:0]+i[AW-1:0]] <= w0_data[8*N*i+:8*N];
        if (w1_en) mem[w1_addr[AW-1:0]] <= w1_data[8*N-1:0];
        if (w1_en && w1_pair) mem[w1_addr[AW-1:0]+ONE] <= w1_data[16*N-1:8*N];
        if (z_en) mem[z_addr[AW-1:0]] <= {8 * N{1'b0}};
        if (r0_en) r0_data[8*N-1:0] <= mem[r0_addr[AW-1:0]];
        if (r0_en && r0_pair) r0_data[16*N-1:8*N] <= mem[r0_addr[AW-1:0]+ONE];
        if (r1_en) r1_data <= mem[r1_addr[AW-1:0]];
    end
endmodule
