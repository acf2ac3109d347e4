`default_nettype none
// Load unit: RD_HOST, RD_WEIGHT and RD_PARAMS (docs/isa.md), one instruction at a time.
// Each memory row is one read request; requests go out back to back, one per cycle the port
// accepts, without waiting for responses, so the memory's latency overlaps. Responses come back
// in order and each is written to its destination (UB row, weight tile row or parameter row) the
// cycle after it arrives, with bytes >= len forced to zero.
// A response with err is written as a zero row, so the result never depends on what a failing
// memory drives on rdata; the instruction still runs to the end and raises fault with done.
// RD_WEIGHT waits for a free tail tile, fills the rows below `rows` from memory and the rest with
// zeros (in cycles with no response to write), then pushes the tile a cycle after its last row.
module tpu_dma_rd #(
    parameter N = 16
) (
    input wire clk,
    input wire rst,
    input wire cmd_valid,
    output wire cmd_ready,
    input wire [7:0] cmd_op,
    input wire [15:0] cmd_rows,
    input wire [31:0] cmd_a,
    input wire [19:0] cmd_b,
    input wire [11:0] cmd_len,
    input wire [31:0] cmd_stride,
    output reg done,
    output reg fault,
    // memory master (reads)
    output wire req_valid,
    input wire req_ready,
    output reg [31:0] req_addr,
    output wire [15:0] req_len,
    input wire rsp_valid,
    input wire rsp_err,
    input wire [32*N-1:0] rsp_rdata,
    // UB write port
    output reg ub_en,
    output reg [19:0] ub_addr,
    output wire [8*N-1:0] ub_data,
    // weight FIFO write side
    input wire wf_full,
    output reg wf_en,
    output wire [8:0] wf_row,
    output wire [8*N-1:0] wf_data,
    output reg wf_push,
    // activation parameter registers
    output reg prm_en,
    output wire [1:0] prm_sel,
    output wire [32*N-1:0] prm_data
);
    localparam [7:0] OP_RD_HOST = 8'h01;
    localparam [7:0] OP_RD_WEIGHT = 8'h02;
    localparam [7:0] OP_RD_PARAMS = 8'h03;
    localparam integer N_I = N;
    localparam [15:0] TILE_ROWS = N_I[15:0];

    localparam [1:0] S_IDLE = 2'd0;
    localparam [1:0] S_WAIT_TILE = 2'd1;  // RD_WEIGHT: the FIFO has no free tail tile yet
    localparam [1:0] S_RUN = 2'd2;
    reg [1:0] state;

    // The instruction being executed.
    reg to_ub;
    reg to_wf;
    reg to_prm;
    reg [15:0] rows;
    reg [19:0] ub_base;
    reg [11:0] len;
    reg [31:0] stride;
    reg [4*N-1:0] byte_keep;  // byte k of a row is kept when k < len

    reg [15:0] issued;     // requests accepted by the port
    reg [15:0] received;   // responses received
    reg [15:0] zero_row;   // RD_WEIGHT: next tile row to fill with zeros (rows..N-1)
    reg err_seen;

    // The row being written: one data register and one row index serve all three destinations.
    reg [32*N-1:0] wdata;
    reg [8:0] wrow;

    wire [4*N-1:0] len_mask = ~({4 * N{1'b1}} << cmd_len);
    wire [32*N-1:0] rsp_kept;
    genvar k;
    generate
        for (k = 0; k < 4 * N; k = k + 1) begin : lane
            assign rsp_kept[8*k +: 8] = (byte_keep[k] && !rsp_err) ? rsp_rdata[8*k +: 8] : 8'd0;
        end
    endgenerate

    wire running = state == S_RUN;
    wire last_rsp = rsp_valid && received + 16'd1 == rows;
    wire fill_zero = running && to_wf && !rsp_valid && zero_row != TILE_ROWS;
    wire tile_done = running && to_wf && received == rows && zero_row == TILE_ROWS;

    assign cmd_ready = state == S_IDLE;
    assign req_valid = running && issued != rows;
    assign req_len = {4'd0, len};
    assign ub_data = wdata[8*N-1:0];
    assign wf_data = wdata[8*N-1:0];
    assign prm_data = wdata;
    assign wf_row = wrow;
    assign prm_sel = wrow[1:0];

    always @(posedge clk) begin
        if (rst) begin
            state <= S_IDLE;
            ub_en <= 1'b0;
            wf_en <= 1'b0;
            prm_en <= 1'b0;
            wf_push <= 1'b0;
            done <= 1'b0;
            fault <= 1'b0;
        end else begin
            ub_en <= 1'b0;
            wf_en <= 1'b0;
            prm_en <= 1'b0;
            wf_push <= 1'b0;
            done <= 1'b0;
            fault <= 1'b0;
            case (state)
                S_IDLE:
                if (cmd_valid) begin
                    to_ub <= cmd_op == OP_RD_HOST;
                    to_wf <= cmd_op == OP_RD_WEIGHT;
                    to_prm <= cmd_op == OP_RD_PARAMS;
                    rows <= cmd_rows;
                    ub_base <= cmd_b;
                    len <= cmd_len;
                    stride <= cmd_stride;
                    byte_keep <= len_mask;
                    req_addr <= cmd_a;
                    issued <= 16'd0;
                    received <= 16'd0;
                    zero_row <= cmd_rows;
                    err_seen <= 1'b0;
                    state <= (cmd_op == OP_RD_WEIGHT) ? S_WAIT_TILE : S_RUN;
                end
                S_WAIT_TILE:
                if (!wf_full) state <= S_RUN;
                default: begin  // S_RUN
                    if (req_valid && req_ready) begin
                        req_addr <= req_addr + stride;
                        issued <= issued + 16'd1;
                    end
                    if (rsp_valid) begin
                        ub_en <= to_ub;
                        wf_en <= to_wf;
                        prm_en <= to_prm;
                        ub_addr <= ub_base + {4'd0, received};
                        wrow <= received[8:0];
                        wdata <= rsp_kept;
                        received <= received + 16'd1;
                        err_seen <= err_seen || rsp_err;
                        if (last_rsp && !to_wf) begin
                            done <= 1'b1;
                            fault <= err_seen || rsp_err;
                            state <= S_IDLE;
                        end
                    end else if (fill_zero) begin
                        wf_en <= 1'b1;
                        wrow <= zero_row[8:0];
                        wdata <= {32 * N{1'b0}};
                        zero_row <= zero_row + 16'd1;
                    end
                    if (tile_done) begin
                        wf_push <= 1'b1;
                        done <= 1'b1;
                        fault <= err_seen;
                        state <= S_IDLE;
                    end
                end
            endcase
        end
    end
endmodule
