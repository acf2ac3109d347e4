`default_nettype none
// Accumulator memory: ROWS rows of N int32. The write port is a one-cycle read-modify-write
// (combinational read of the addressed row, registered write), so back-to-back accumulates to
// one row see each other. Two registered read ports (activate unit, store unit).
module tpu_acc #(
    parameter N = 16,
    parameter ROWS = 4096
) (
    input wire clk,
    // Addresses arrive validated (< ROWS): only their low AW bits are used, hence the
    // UNUSEDSIGNAL waivers on the address ports.
    input wire w_en,
    /* verilator lint_off UNUSEDSIGNAL */
    input wire [19:0] w_addr,
    /* verilator lint_on UNUSEDSIGNAL */
    input wire w_accumulate,
    input wire [32*N-1:0] w_data,
    input wire r0_en,
    /* verilator lint_off UNUSEDSIGNAL */
    input wire [19:0] r0_addr,
    /* verilator lint_on UNUSEDSIGNAL */
    output reg [32*N-1:0] r0_data,
    input wire r1_en,
    /* verilator lint_off UNUSEDSIGNAL */
    input wire [19:0] r1_addr,
    /* verilator lint_on UNUSEDSIGNAL */
    output reg [32*N-1:0] r1_data
);
    localparam AW = (ROWS > 1) ? $clog2(ROWS) : 1;

    reg [32*N-1:0] mem[0:ROWS-1]  /*verilator public_flat_rd*/;

    wire [AW-1:0] wa = w_addr[AW-1:0];
    wire [32*N-1:0] old_row = mem[wa];
    wire [32*N-1:0] new_row;

    genvar c;
    generate
        for (c = 0; c < N; c = c + 1) begin : lane
            // Per-lane add: carries must not cross into the next int32.
            assign new_row[32*c +: 32] =
                (w_accumulate ? old_row[32*c +: 32] : 32'd0) + w_data[32*c +: 32];
        end
    endgenerate

    always @(posedge clk) begin
        if (w_en) mem[wa] <= new_row;
        if (r0_en) r0_data <= mem[r0_addr[AW-1:0]];
        if (r1_en) r1_data <= mem[r1_addr[AW-1:0]];
    end
endmodule
