`default_nettype none
// Unified buffer: ROWS rows of N int8, two write ports (load unit, activate unit), a zero port
// that sets a row to zero (the load unit's ZERO) and two registered read ports (MXU, store
// unit). The sequencer's interlocks guarantee that no two ports touch the same row in one cycle,
// so there is no collision logic.
module tpu_ub #(
    parameter N = 16,
    parameter ROWS = 4096
) (
    input wire clk,
    // Addresses arrive validated (< ROWS): only their low AW bits are used, hence the
    // UNUSEDSIGNAL waivers on the address ports.
    input wire w0_en,
    /* verilator lint_off UNUSEDSIGNAL */
    input wire [19:0] w0_addr,
    /* verilator lint_on UNUSEDSIGNAL */
    input wire [8*N-1:0] w0_data,
    input wire w1_en,
    /* verilator lint_off UNUSEDSIGNAL */
    input wire [19:0] w1_addr,
    /* verilator lint_on UNUSEDSIGNAL */
    input wire [8*N-1:0] w1_data,
    input wire z_en,
    /* verilator lint_off UNUSEDSIGNAL */
    input wire [19:0] z_addr,
    /* verilator lint_on UNUSEDSIGNAL */
    input wire r0_en,
    /* verilator lint_off UNUSEDSIGNAL */
    input wire [19:0] r0_addr,
    /* verilator lint_on UNUSEDSIGNAL */
    output reg [8*N-1:0] r0_data,
    input wire r1_en,
    /* verilator lint_off UNUSEDSIGNAL */
    input wire [19:0] r1_addr,
    /* verilator lint_on UNUSEDSIGNAL */
    output reg [8*N-1:0] r1_data
);
    localparam AW = (ROWS > 1) ? $clog2(ROWS) : 1;

    reg [8*N-1:0] mem[0:ROWS-1]  /*verilator public_flat_rd*/;

    always @(posedge clk) begin
        if (w0_en) mem[w0_addr[AW-1:0]] <= w0_data;
        if (w1_en) mem[w1_addr[AW-1:0]] <= w1_data;
        if (z_en) mem[z_addr[AW-1:0]] <= {8 * N{1'b0}};
        if (r0_en) r0_data <= mem[r0_addr[AW-1:0]];
        if (r1_en) r1_data <= mem[r1_addr[AW-1:0]];
    end
endmodule
