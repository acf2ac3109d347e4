`default_nettype none
// Weight FIFO: TILES tiles of N rows of N 16-bit cells, stored as one memory of TILES*N rows.
// The producer writes rows of the tail tile in any order and then pushes it; the consumer reads
// rows of the head tile combinationally and then pops it. The sequencer never pushes when full
// or pops when empty, so there are no guards for either.
// The write port takes up to WR_ROWS consecutive rows per cycle: wr_rows rows from wr_row on, as
// the memory rows' bytes, row wr_row + i from wr_data's lane i: N int8 (bits 8*N*i and up,
// wr_rows 1..WR_ROWS), each stored sign-extended to 16 bits, or with wr_bf16 N bf16 (bits
// 16*N*i and up, wr_rows 1..WR_ROWS/2); the producer keeps wr_row + wr_rows <= N.
module tpu_wfifo #(
    parameter N = 16,
    parameter TILES = 4,
    parameter WR_ROWS = 4
) (
    input wire clk,
    input wire rst,
    input wire wr_en,
    // Row indices are below N: only their low RW bits are used, hence the UNUSEDSIGNAL waivers.
    /* verilator lint_off UNUSEDSIGNAL */
    input wire [8:0] wr_row,
    /* verilator lint_on UNUSEDSIGNAL */
    input wire [$clog2(WR_ROWS+1)-1:0] wr_rows,
    input wire wr_bf16,
    input wire [8*N*WR_ROWS-1:0] wr_data,
    input wire push,
    output wire full,
    output wire empty,
    output reg [8:0] count,
    /* verilator lint_off UNUSEDSIGNAL */
    input wire [8:0] rd_row,
    /* verilator lint_on UNUSEDSIGNAL */
    output wire [16*N-1:0] rd_data,
    input wire pop
);
    localparam DEPTH = TILES * N;
    localparam AW = (DEPTH > 1) ? $clog2(DEPTH) : 1;
    localparam RW = (N > 1) ? $clog2(N) : 1;
    // Integer copies so the sized constants below are part-selects, not width-mismatched
    // assignments of (possibly overridden, 32-bit) parameters.
    localparam integer STEP_I = N;
    localparam integer LAST_I = (TILES - 1) * N;
    localparam integer TILES_I = TILES;
    localparam [AW-1:0] STEP = STEP_I[AW-1:0];
    localparam [AW-1:0] LAST_BASE = LAST_I[AW-1:0];
    localparam [8:0] CNT_FULL = TILES_I[8:0];
    localparam CW = $clog2(WR_ROWS + 1);

    reg [16*N-1:0] mem[0:DEPTH-1];
    // First memory row of the tail and head tiles; they step by N and wrap explicitly, so
    // neither N nor TILES has to be a power of two.
    reg [AW-1:0] wr_base;
    reg [AW-1:0] rd_base;

    wire [AW-1:0] wr_addr = wr_base + {{(AW - RW) {1'b0}}, wr_row[RW-1:0]};
    wire [AW-1:0] rd_addr = rd_base + {{(AW - RW) {1'b0}}, rd_row[RW-1:0]};

    assign rd_data = mem[rd_addr];
    assign full = count == CNT_FULL;
    assign empty = count == 9'd0;

    // N int8 sign-extended to 16-bit cells.
    function [16*N-1:0] sext(input [8*N-1:0] b);
        integer c;
        for (c = 0; c < N; c = c + 1) sext[16*c+:16] = {{8{b[8*c+7]}}, b[8*c+:8]};
    endfunction

    integer i;
    always @(posedge clk) begin
        for (i = 0; i < WR_ROWS; i = i + 1)
        if (wr_en && !wr_bf16 && i < {{(32 - CW) {1'b0}}, wr_rows})
            mem[wr_addr+i[AW-1:0]] <= sext(wr_data[8*N*i+:8*N]);
        for (i = 0; i < WR_ROWS / 2; i = i + 1)
        if (wr_en && wr_bf16 && i < {{(32 - CW) {1'b0}}, wr_rows})
            mem[wr_addr+i[AW-1:0]] <= wr_data[16*N*i+:16*N];
    end

    always @(posedge clk) begin
        if (rst) begin
            wr_base <= {AW{1'b0}};
            rd_base <= {AW{1'b0}};
            count   <= 9'd0;
        end else begin
            if (push) wr_base <= (wr_base == LAST_BASE) ? {AW{1'b0}} : wr_base + STEP;
            if (pop) rd_base <= (rd_base == LAST_BASE) ? {AW{1'b0}} : rd_base + STEP;
            if (push && !pop) count <= count + 9'd1;
            else if (pop && !push) count <= count - 9'd1;
        end
    end
endmodule
