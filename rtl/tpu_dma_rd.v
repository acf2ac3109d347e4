`default_nettype none
`include "tpu_isa.vh"
// Load unit: RD_HOST, RD_WEIGHT, RD_PARAMS and RD_ACC (docs/isa.md), up to LD_SLOTS instructions in
// flight, and ZERO beside them.
// The zero engine takes one ZERO at a time through its own handshake (zero_valid/ready, the
// cmd_* fields) and sets its rows to zero through the UB's zero port, one per cycle from the
// cycle after it is taken, without reading memory; zero_done pulses with the last row, and the
// next ZERO is taken in that cycle. It runs on its own, not in order with the loads (the
// sequencer orders a ZERO and a load that share UB rows).
// The loads have two decoupled sides joined by a FIFO of write-back descriptors (destination,
// base row, rows, len), one per instruction accepted and not yet done:
// - Request side: one instruction at a time, requests back to back, one per cycle the port
//   accepts. Memory rows i .. i+k-1 (at a + i*stride, len bytes each) go in one request of
//   (k-1)*stride + len bytes from a + i*stride, any stride (0 repeats a row, below len they
//   overlap), for the largest k whose rows fit one write-back cycle (k*S <= 4 UB rows for an
//   RD_HOST, S = ceil(len / N); k*S <= WF_ROWS for an RD_WEIGHT, S = 1, or 2 with BF16: its
//   rows are 2N bytes) and whose bytes fit the 4N-byte bus, capped by the rows left; RD_PARAMS
//   and RD_ACC (one ACC row per write-back cycle) take k = 1. It takes the next instruction in
//   the cycle it issues the last request of the current one, so the memory's latency overlaps
//   across instructions too.
// - Write-back side: responses come back in request order (one id) and are written, in order, to
//   the destination of the oldest descriptor the cycle after they arrive, all the k rows of one
//   response in that cycle: an RD_HOST's k*S UB rows b + i*S .. through the UB's wide load port,
//   an RD_WEIGHT's tile rows i .. i+k-1 through the FIFO's wide port (wf_bf16: as bf16), a
//   parameter row, or an RD_ACC's ACC row b + i through the accumulators' write port (added to
//   the row with acc_accumulate, in fp32 with acc_bf16; the sequencer keeps the MXU off it).
//   Memory row l of the response is its bytes l*stride .. (so the descriptor keeps the stride's
//   low bits, all a k > 1 needs) with bytes >= len forced to zero, at bytes l*S*N of the written
//   data (an RD_HOST's UB row s: bytes s*N of it). Done (with fault) pulses with the
//   last write of an instruction, or with its tile push, and retires the descriptor.
// A response with err is written as zero rows (all the rows it carries; an ACC row not added to),
// so the result never depends on what a failing memory drives on rdata; the instruction still
// runs to the end and raises fault with done.
// Responses cannot be held, so an RD_WEIGHT issues no request before it has reserved a free tile:
// the FIFO's tiles plus those reserved and not yet pushed must be below WFIFO_TILES. Its rows
// below `rows` come from memory and the rest are zeros, written in cycles with no response once
// its first response has arrived (its tile is then the FIFO's tail, as every older tile has been
// pushed). The push comes with the tile's last write, so a following RD_WEIGHT's responses
// may arrive right after. Only a short tile (rows < N) needs cycles of its own for the zeros:
// while one is in flight no new instruction is accepted, so no younger response can arrive
// while its zeros are written.
module tpu_dma_rd #(
    parameter N = 16,
    parameter WFIFO_TILES = 4,
    parameter LD_SLOTS = 4,
    parameter WF_ROWS = 4  // rows the weight FIFO's write port takes per cycle
) (
    input wire clk,
    input wire rst,
    input wire cmd_valid,
    output wire cmd_ready,
    input wire [`TPU_INSN_OP_W-1:0] cmd_op,
    input wire [`TPU_INSN_ROWS_W-1:0] cmd_rows,
    input wire [`TPU_INSN_A_W-1:0] cmd_a,
    input wire [`TPU_INSN_B_W-1:0] cmd_b,
    input wire [`TPU_INSN_LEN_W-1:0] cmd_len,
    input wire [`TPU_INSN_STRIDE_W-1:0] cmd_stride,
    input wire cmd_bf16,
    input wire cmd_acc,  // RD_ACC: add to the ACC rows
    output reg done,
    output reg fault,
    // ZERO: the zero engine's handshake and done, and the UB zero port
    input wire zero_valid,
    output wire zero_ready,
    output wire zero_done,
    output wire ub_z_en,
    output wire [`TPU_INSN_B_W-1:0] ub_z_addr,
    // memory master (reads)
    output wire req_valid,
    input wire req_ready,
    output reg [31:0] req_addr,
    output wire [15:0] req_len,
    input wire rsp_valid,
    input wire rsp_err,
    input wire [32*N-1:0] rsp_rdata,
    // UB write port: ub_rows (1..4) rows from ub_addr on, row ub_addr + s from ub_data's lane s
    output reg ub_en,
    output reg [`TPU_INSN_B_W-1:0] ub_addr,
    output reg [2:0] ub_rows,
    output wire [32*N-1:0] ub_data,
    // weight FIFO write side
    input wire [8:0] wf_count,
    output reg wf_en,
    output wire [8:0] wf_row,
    output reg [$clog2(WF_ROWS+1)-1:0] wf_rows,
    output reg wf_bf16,
    output wire [8*N*WF_ROWS-1:0] wf_data,
    output reg wf_push,
    // activation parameter registers
    output reg prm_en,
    output wire [1:0] prm_sel,
    output wire [32*N-1:0] prm_data,
    // accumulator write port (RD_ACC)
    output reg acc_en,
    output wire [`TPU_INSN_B_W-1:0] acc_addr,
    output reg acc_accumulate,
    output reg acc_bf16,
    output wire [32*N-1:0] acc_data
);
    // The fields' widths (rtl/tpu_isa.toml).
    localparam ROWS_W = `TPU_INSN_ROWS_W, B_W = `TPU_INSN_B_W, LEN_W = `TPU_INSN_LEN_W;
    localparam STRIDE_W = `TPU_INSN_STRIDE_W;
    localparam integer N_I = N;
    localparam [ROWS_W-1:0] TILE_ROWS = N_I[ROWS_W-1:0];
    localparam integer TILES_I = WFIFO_TILES;
    localparam [9:0] TILES = TILES_I[9:0];
    localparam PW = $clog2(LD_SLOTS + 1);
    localparam [PW-1:0] PEND_ONE = 1;
    localparam BUS_BYTES = 4 * N;
    localparam BUS_ROWS = BUS_BYTES / N;  // full rows on the bus: the UB load port's rows
    localparam LANES = (WF_ROWS > BUS_ROWS) ? WF_ROWS : BUS_ROWS;  // N-byte rows written at once
    localparam CW = $clog2(LANES + 1);  // a count of memory rows per request, 1..LANES
    localparam WCW = $clog2(WF_ROWS + 1);
    localparam SW = $clog2(BUS_BYTES);  // a stride below 4N, the only one a k > 1 can have
    localparam [CW-1:0] CNT_ONE = 1;
    localparam [2:0] SPAN_ONE = 1;
    localparam WDW = 8 * N * LANES;  // the written data
    // descriptor: {ub, wf, prm, acc, accumulate, bf16}, per, rows, base, len, stride's low bits
    localparam DW = 6 + CW + ROWS_W + B_W + LEN_W + SW;

    // UB rows an RD_HOST row of len bytes fills: S = ceil(len / N), 1..4 (len <= 4N).
    function [2:0] span_of(input [LEN_W-1:0] len);
        integer s;
        begin
            span_of = SPAN_ONE;
            for (s = 1; s < BUS_ROWS; s = s + 1)
            if ({{(32 - LEN_W) {1'b0}}, len} > s * N) span_of = span_of + SPAN_ONE;
        end
    endfunction

    // Memory rows per request: the most whose UB or tile rows one write-back cycle takes and
    // whose (k-1)*stride + len bytes fit the bus (both only shrink as k grows).
    function [CW-1:0] rows_per(input [`TPU_INSN_OP_W-1:0] op, input bf16, input [LEN_W-1:0] len,
                               input [STRIDE_W-1:0] stride);
        integer k;
        reg port_ok;
        begin
            rows_per = CNT_ONE;
            for (k = 2; k <= LANES; k = k + 1) begin
                port_ok = op == `TPU_OP_RD_HOST ? k * span_of(len) <= BUS_ROWS :
                    op == `TPU_OP_RD_WEIGHT && k * (bf16 ? 2 : 1) <= WF_ROWS;
                if (port_ok && stride < BUS_BYTES &&
                    (k - 1) * stride + {{(32 - LEN_W) {1'b0}}, len} <= BUS_BYTES)
                    rows_per = k[CW-1:0];
            end
        end
    endfunction

    // ----------------------------------------------------------------- zero engine
    reg              z_busy;
    reg [ROWS_W-1:0] z_left;  // rows still to zero, nonzero while z_busy
    reg [   B_W-1:0] z_row;
    assign ub_z_en = z_busy;
    assign ub_z_addr = z_row;
    assign zero_done = z_busy && z_left == 1;
    assign zero_ready = !z_busy || zero_done;

    always @(posedge clk) begin
        if (rst) z_busy <= 1'b0;
        else if (zero_valid && zero_ready) z_busy <= 1'b1;
        else if (zero_done) z_busy <= 1'b0;
    end

    // z_left and z_row need no reset: z_busy qualifies them.
    always @(posedge clk) begin
        if (zero_valid && zero_ready) begin
            z_left <= cmd_rows;
            z_row  <= cmd_b;
        end else if (z_busy) begin
            z_left <= z_left - 1;
            z_row  <= z_row + 1;
        end
    end

    // ---------------------------------------------------------------- request side
    reg                 r_busy;  // an instruction is issuing its requests
    reg                 r_wf;  // it is an RD_WEIGHT
    reg                 r_tile;  // ... and has reserved its tile
    reg  [  ROWS_W-1:0] r_left;  // requests still to issue (nonzero while r_busy)
    reg  [STRIDE_W-1:0] r_stride;
    reg  [   LEN_W-1:0] r_len;
    reg  [      CW-1:0] r_per;  // memory rows per request
    reg                 short_wf;  // a short RD_WEIGHT (rows < N) is in flight
    reg  [      PW-1:0] pend;  // tiles reserved and not yet pushed

    wire [         9:0] tiles_used = {1'b0, wf_count} + {{(10 - PW) {1'b0}}, pend};
    wire                tile_free = tiles_used < TILES;
    wire                reserve = r_busy && r_wf && !r_tile && tile_free;
    assign req_valid = r_busy && (!r_wf || r_tile || tile_free);
    wire [ROWS_W-1:0] r_per_w = {{(ROWS_W - CW) {1'b0}}, r_per};
    wire [ROWS_W-1:0] req_rows = r_left < r_per_w ? r_left : r_per_w;
    // With k > 1 rows the stride is below 4N: its low bits are all of it. The request's length
    // is the memory port's 16 bits.
    wire [ROWS_W-1:0] req_rows_m1 = req_rows - 1;
    wire [15:0] req_span = req_rows_m1[15:0] * {{(16 - SW) {1'b0}}, r_stride[SW-1:0]};
    assign req_len = req_span + {{(16 - LEN_W) {1'b0}}, r_len};
    wire req_take = req_valid && req_ready;
    wire req_last = req_take && r_left == req_rows;
    wire [CW-1:0] cmd_per = rows_per(cmd_op, cmd_bf16, cmd_len, cmd_stride);

    wire d_full;
    wire d_empty;
    assign cmd_ready = (!r_busy || req_last) && !d_full && !short_wf;
    wire accept = cmd_valid && cmd_ready;

    // ------------------------------------------------------------ descriptor FIFO
    wire [DW-1:0] d_in = {
        cmd_op == `TPU_OP_RD_HOST,
        cmd_op == `TPU_OP_RD_WEIGHT,
        cmd_op == `TPU_OP_RD_PARAMS,
        cmd_op == `TPU_OP_RD_ACC,
        cmd_acc,
        cmd_bf16,
        cmd_per,
        cmd_rows,
        cmd_b,
        cmd_len,
        cmd_stride[SW-1:0]
    };
    wire [DW-1:0] d_head;
    wire h_ub = d_head[DW-1];
    wire h_wf = d_head[DW-2];
    wire h_prm = d_head[DW-3];
    wire h_acc = d_head[DW-4];
    wire h_accumulate = d_head[DW-5];
    wire h_bf16 = d_head[DW-6];
    wire [CW-1:0] h_per = d_head[DW-7-:CW];
    wire [ROWS_W-1:0] h_rows = d_head[DW-7-CW-:ROWS_W];
    wire [B_W-1:0] h_base = d_head[SW+LEN_W+B_W-1:SW+LEN_W];
    wire [LEN_W-1:0] h_len = d_head[SW+LEN_W-1:SW];
    wire [SW-1:0] h_stride = d_head[SW-1:0];
    wire complete;
    // The FIFO's count is not needed: full and empty say all.
    /* verilator lint_off UNUSEDSIGNAL */
    wire [PW-1:0] d_count_unused;
    /* verilator lint_on UNUSEDSIGNAL */

    tpu_fifo #(
        .W(DW),
        .DEPTH(LD_SLOTS)
    ) u_desc (
        .clk  (clk),
        .rst  (rst),
        .push (accept),
        .din  (d_in),
        .full (d_full),
        .pop  (complete),
        .dout (d_head),
        .empty(d_empty),
        .count(d_count_unused)
    );

    // --------------------------------------------------------------- write-back side
    reg [ROWS_W-1:0] received;  // responses written for the oldest instruction
    reg [ROWS_W-1:0] zeros;  // RD_WEIGHT: zero rows written after its `rows` rows
    reg err_seen;

    // The row being written: one data register serves all four destinations, one row index the
    // tile and parameter rows (ub_addr is also the ACC row's).
    reg [WDW-1:0] wdata;
    reg [8:0] wrow;

    // Memory rows the response carries, and its data: memory row l (bytes l*stride .., the
    // bytes >= len zero) in lanes l*S .. l*S + S-1 (S = 1 but for an RD_HOST, and 2 for an
    // RD_WEIGHT.BF16).
    wire [ROWS_W-1:0] h_per_w = {{(ROWS_W - CW) {1'b0}}, h_per};
    wire [ROWS_W-1:0] h_left = h_rows - received;
    wire [ROWS_W-1:0] rsp_rows = h_left < h_per_w ? h_left : h_per_w;
    wire [2:0] h_span = h_ub ? span_of(h_len) : h_wf && h_bf16 ? 3'd2 : SPAN_ONE;
    wire [WDW-1:0] len_mask = ~({WDW{1'b1}} << {h_len, 3'b000});
    reg [WDW-1:0] rsp_lanes;
    reg [WDW-1:0] rsp_row;
    integer l;
    always @(*) begin
        rsp_lanes = {WDW{1'b0}};
        for (l = 0; l < LANES; l = l + 1) begin
            rsp_row = {WDW{1'b0}};
            rsp_row[32*N-1:0] = rsp_rdata;
            rsp_row = (rsp_row >> (l * 8 * h_stride)) & len_mask;
            if (l < rsp_rows) rsp_lanes = rsp_lanes | (rsp_row << (l * 8 * N * h_span));
        end
    end
    wire [ROWS_W-1:0] zero_row = h_rows + zeros;
    wire fill_zero = !d_empty && h_wf && !rsp_valid && received != 0 && zero_row != TILE_ROWS;
    wire [ROWS_W-1:0] received_n = received + (rsp_valid ? rsp_rows : {ROWS_W{1'b0}});
    wire [ROWS_W-1:0] zero_row_n = zero_row + {{(ROWS_W - 1) {1'b0}}, fill_zero};
    assign complete = (rsp_valid || fill_zero) && received_n == h_rows
                      && (!h_wf || zero_row_n == TILE_ROWS);

    assign ub_data = wdata[32*N-1:0];
    assign wf_data = wdata[8*N*WF_ROWS-1:0];
    assign prm_data = wdata[32*N-1:0];
    assign acc_addr = ub_addr;
    assign acc_data = wdata[32*N-1:0];
    assign wf_row = wrow;
    assign prm_sel = wrow[1:0];

    always @(posedge clk) begin
        if (rst) begin
            r_busy <= 1'b0;
            short_wf <= 1'b0;
            pend <= {PW{1'b0}};
        end else begin
            if (accept) begin
                r_busy <= 1'b1;
                r_wf <= cmd_op == `TPU_OP_RD_WEIGHT;
                r_tile <= 1'b0;
                r_left <= cmd_rows;
                r_stride <= cmd_stride;
                r_len <= cmd_len;
                r_per <= cmd_per;
                req_addr <= cmd_a;
                short_wf <= cmd_op == `TPU_OP_RD_WEIGHT && cmd_rows != TILE_ROWS;
            end else begin
                if (req_last) r_busy <= 1'b0;
                if (req_take) begin
                    req_addr <= req_addr + r_stride * {{(STRIDE_W - ROWS_W) {1'b0}}, req_rows};
                    r_left   <= r_left - req_rows;
                end
                if (reserve) r_tile <= 1'b1;
                if (complete && h_wf && h_rows != TILE_ROWS) short_wf <= 1'b0;
            end
            // The FIFO counts a pushed tile at the edge that ends wf_push's cycle: so does pend.
            if (reserve && !wf_push) pend <= pend + PEND_ONE;
            else if (wf_push && !reserve) pend <= pend - PEND_ONE;
        end
    end

    always @(posedge clk) begin
        if (rst) begin
            ub_en <= 1'b0;
            wf_en <= 1'b0;
            prm_en <= 1'b0;
            acc_en <= 1'b0;
            wf_push <= 1'b0;
            done <= 1'b0;
            fault <= 1'b0;
            received <= {ROWS_W{1'b0}};
            zeros <= {ROWS_W{1'b0}};
            err_seen <= 1'b0;
        end else begin
            ub_en <= rsp_valid && h_ub;
            wf_en <= (rsp_valid && h_wf) || fill_zero;
            prm_en <= rsp_valid && h_prm;
            acc_en <= rsp_valid && h_acc;
            wf_push <= complete && h_wf;
            done <= complete;
            fault <= complete && (err_seen || (rsp_valid && rsp_err));
            if (rsp_valid) begin
                ub_addr <= h_base + {{(B_W - ROWS_W) {1'b0}}, received} * {{(B_W - 3) {1'b0}}, h_span};
                ub_rows <= rsp_rows[2:0] * h_span;
                wrow <= received[8:0];
                wf_rows <= rsp_rows[WCW-1:0];
                wf_bf16 <= h_bf16;
                acc_accumulate <= h_accumulate && !rsp_err;
                acc_bf16 <= h_bf16;
                // Bytes k >= len are zero, all of them after an error.
                wdata <= rsp_err ? {WDW{1'b0}} : rsp_lanes;
            end else if (fill_zero) begin
                wrow <= zero_row[8:0];
                wf_rows <= {{(WCW - 1) {1'b0}}, 1'b1};
                wdata <= {WDW{1'b0}};
            end
            if (complete) begin
                received <= {ROWS_W{1'b0}};
                zeros <= {ROWS_W{1'b0}};
                err_seen <= 1'b0;
            end else begin
                received <= received_n;
                zeros <= zeros + {{(ROWS_W - 1) {1'b0}}, fill_zero};
                err_seen <= err_seen || (rsp_valid && rsp_err);
            end
        end
    end
endmodule
