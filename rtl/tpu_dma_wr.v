`default_nettype none
`include "tpu_isa.vh"
// Store unit: WR_HOST (docs/isa.md), one instruction at a time.
// Memory row i is read from ACC[b+i] (data the next cycle, then relu(acc + bias) through
// tpu_act, 3 more cycles; int32, or fp32 with BF16) or, from UB, as its S = ceil(len / N) UB rows b + i*S + s (s = 0..S-1,
// len up to 4N), one per cycle through the single read port (data the next cycle), placed at
// bytes s*N.. of the row. Rows back to back in memory (stride == len) go k = floor(4N / len) at a
// time (fewer for the last) in one write request of k*len bytes at a + i*len, row l of it at
// bytes l*len..; other strides send one request per row at a + i*stride. Each read's data is
// placed over the bytes from its offset up, so a later row (or lane) overwrites the junk an
// earlier one left past its len. Each request is queued in a DEPTH-entry buffer. A request's
// reads only start when the buffer has room for it counting every request still in the read
// pipeline, so back-pressure from the memory never has to stall the pipeline, and one request
// per cycle is sustained for k = S = 1 when DEPTH covers the read-to-send latency (6 cycles on
// the ACC path). done (with fault if any ack had err) pulses the cycle after the last
// acknowledgement arrives.
// Bytes >= the request's len of the write data are not masked: the memory writes only those below.
module tpu_dma_wr #(
    parameter N = 16,
    parameter DEPTH = 8  // requests buffered, at least 2
) (
    input wire clk,
    input wire rst,
    input wire cmd_valid,
    output wire cmd_ready,
    input wire [`TPU_INSN_ROWS_W-1:0] cmd_rows,
    input wire [`TPU_INSN_A_W-1:0] cmd_a,
    input wire [`TPU_INSN_B_W-1:0] cmd_b,
    input wire [`TPU_INSN_LEN_W-1:0] cmd_len,
    input wire [`TPU_INSN_STRIDE_W-1:0] cmd_stride,
    input wire cmd_src_acc,
    input wire cmd_bias,
    input wire cmd_relu,
    input wire cmd_bf16,
    output reg done,
    output reg fault,
    // memory master (writes)
    output wire req_valid,
    input wire req_ready,
    output reg [31:0] req_addr,
    output wire [15:0] req_len,
    output wire [32*N-1:0] req_wdata,
    input wire rsp_valid,
    input wire rsp_err,
    // UB and ACC read ports
    output wire ub_en,
    output wire [`TPU_INSN_B_W-1:0] ub_addr,
    input wire [8*N-1:0] ub_data,
    output wire acc_en,
    output wire [`TPU_INSN_B_W-1:0] acc_addr,
    input wire [32*N-1:0] acc_data,
    input wire [32*N-1:0] bias
);
    localparam PW = $clog2(DEPTH);
    localparam integer DEPTH_I = DEPTH;
    localparam integer LAST_I = DEPTH - 1;
    localparam [PW:0] FULL = DEPTH_I[PW:0];
    localparam [PW-1:0] LAST = LAST_I[PW-1:0];
    // The fields' widths (rtl/tpu_isa.toml).
    localparam ROWS_W = `TPU_INSN_ROWS_W, LEN_W = `TPU_INSN_LEN_W;
    localparam STRIDE_W = `TPU_INSN_STRIDE_W;
    localparam integer N_I = N;
    localparam [LEN_W-1:0] LEN_N = N_I[LEN_W-1:0];
    localparam BUS_BYTES = 4 * N;
    localparam OW = $clog2(BUS_BYTES);  // a byte offset in a request
    localparam KW = $clog2(BUS_BYTES + 1);  // memory rows per request, 1..4N
    localparam [KW-1:0] BUS_K = BUS_BYTES[KW-1:0];
    localparam [KW-1:0] K_ONE = 1;

    reg busy;
    // The instruction being executed.
    reg [ROWS_W-1:0] rows;
    reg [LEN_W-1:0] len;
    reg [STRIDE_W-1:0] stride;
    reg src_acc;
    reg add_bias;
    reg relu;
    reg bf16;
    reg [1:0] lane_last;  // S - 1: UB rows per memory row, less one (0 from ACC)
    reg [KW-1:0] per;  // memory rows per request

    reg [`TPU_INSN_B_W-1:0] src_row;  // next UB/ACC row to read
    reg [1:0] lane;  // lane of the memory row that read fills
    reg [ROWS_W-1:0] read;  // memory rows whose reads have all started
    reg [KW-1:0] g_row;  // index of the row being read in its request
    reg [OW-1:0] row_off;  // ... and its byte offset there
    reg [ROWS_W-1:0] unsent;  // memory rows not yet sent
    reg [ROWS_W-1:0] acked;  // memory rows acknowledged
    reg [PW:0] reserved;  // requests whose reads started, not yet sent: being read or buffered
    reg err_seen;

    reg [32*N-1:0] buf_mem[0:DEPTH-1];
    reg [PW-1:0] buf_wp;
    reg [PW-1:0] buf_rp;
    reg [PW:0] buf_count;

    reg ub_q;  // UB data is on ub_data this cycle ...
    reg [OW-1:0] q_off;  // ... for this byte offset of its request
    reg q_end;  // ... the request's last
    reg acc_q;  // ACC data is on acc_data this cycle
    reg [32*N-1:0] asm_q;  // the request assembled so far

    // A request's first read reserves its buffer entry; the rest of its reads follow.
    wire grp_start = lane == 2'd0 && g_row == {KW{1'b0}};
    wire rd = busy && (lane != 2'd0 || (read != rows && (!grp_start || reserved != FULL)));
    wire rd_grp = rd && grp_start;
    wire rd_end = rd && lane == lane_last;  // a memory row's last read
    wire [OW-1:0] rd_off = row_off + {{(OW - 2) {1'b0}}, lane} * LEN_N[OW-1:0];
    wire rd_last = lane == lane_last && (g_row == per - K_ONE || read + 1 == rows);
    wire send = req_valid && req_ready;
    wire [ROWS_W-1:0] per_w = {{(ROWS_W - KW) {1'b0}}, per};
    wire [ROWS_W-1:0] send_rows = unsent < per_w ? unsent : per_w;
    wire [KW-1:0] cmd_per = BUS_K / cmd_len[KW-1:0];  // len <= 4N
    wire [ROWS_W-1:0] ack_rows = rows - acked < per_w ? rows - acked : per_w;

    // The accumulator path. The credit scheme above means the pipeline never needs to stall;
    // mult/shift/out_ub are ACTIVATE's output, unused for the int32 or fp32 one; the tag carries
    // where the row goes in its request.
    wire act_valid;
    wire [32*N-1:0] act_i32;
    wire [OW:0] act_tag;  // {the request's last row, its byte offset}
    /* verilator lint_off UNUSEDSIGNAL */
    wire [16*N-1:0] act_ub_unused;
    wire act_bf16_unused;
    /* verilator lint_on UNUSEDSIGNAL */
    reg a_end;  // tags of the ACC row read the cycle before
    reg [OW-1:0] a_off;
    tpu_act #(
        .N(N),
        .TAG_W(OW + 1)
    ) act (
        .clk(clk),
        .rst(rst),
        .stall(1'b0),
        .in_valid(acc_q),
        .in_first(1'b1),
        .in_last(1'b1),
        .in_data(acc_data),
        .in_bias(add_bias),
        .in_relu(relu),
        .in_bf16(bf16),
        .in_tag({a_end, a_off}),
        .bias(bias),
        .mult({32 * N{1'b0}}),
        .shift({6 * N{1'b0}}),
        .out_valid(act_valid),
        .out_i32(act_i32),
        .out_ub(act_ub_unused),
        .out_bf16(act_bf16_unused),
        .out_tag(act_tag)
    );

    // This cycle's data placed over the request's bytes from its offset up.
    wire in_valid = ub_q || act_valid;
    wire [OW-1:0] in_off = src_acc ? act_tag[OW-1:0] : q_off;
    wire [32*N-1:0] in_data = src_acc ? act_i32 : {{24 * N{1'b0}}, ub_data};
    wire [32*N-1:0] asm_n = (asm_q & ~({32 * N{1'b1}} << {in_off, 3'b000}))
                            | (in_data << {in_off, 3'b000});
    wire push = (ub_q && q_end) || (act_valid && act_tag[OW]);

    assign cmd_ready = !busy;
    assign ub_en = rd && !src_acc;
    assign acc_en = rd && src_acc;
    assign ub_addr = src_row;
    assign acc_addr = src_row;
    assign req_valid = buf_count != {(PW + 1) {1'b0}};
    assign req_len = send_rows * {{(ROWS_W - LEN_W) {1'b0}}, len};  // at most 4N bytes
    assign req_wdata = buf_mem[buf_rp];

    always @(posedge clk) begin
        if (push) buf_mem[buf_wp] <= asm_n;
        if (in_valid) asm_q <= asm_n;
        q_off <= rd_off;
        q_end <= rd_last;
        a_off <= rd_off;
        a_end <= rd_last;
    end

    always @(posedge clk) begin
        if (rst) begin
            busy <= 1'b0;
            ub_q <= 1'b0;
            acc_q <= 1'b0;
            buf_wp <= {PW{1'b0}};
            buf_rp <= {PW{1'b0}};
            buf_count <= {(PW + 1) {1'b0}};
            reserved <= {(PW + 1) {1'b0}};
            done <= 1'b0;
            fault <= 1'b0;
        end else begin
            done  <= 1'b0;
            fault <= 1'b0;
            ub_q  <= ub_en;
            acc_q <= acc_en;
            if (push) buf_wp <= (buf_wp == LAST) ? {PW{1'b0}} : buf_wp + 1'b1;
            if (send) buf_rp <= (buf_rp == LAST) ? {PW{1'b0}} : buf_rp + 1'b1;
            if (push && !send) buf_count <= buf_count + 1'b1;
            else if (send && !push) buf_count <= buf_count - 1'b1;
            if (rd_grp && !send) reserved <= reserved + 1'b1;
            else if (send && !rd_grp) reserved <= reserved - 1'b1;

            if (!busy) begin
                if (cmd_valid) begin
                    busy <= 1'b1;
                    rows <= cmd_rows;
                    len <= cmd_len;
                    stride <= cmd_stride;
                    src_acc <= cmd_src_acc;
                    add_bias <= cmd_bias;
                    relu <= cmd_relu;
                    bf16 <= cmd_bf16;
                    // ceil(len / N) - 1, len <= 4N
                    lane_last <= cmd_src_acc ? 2'd0 : {1'b0, cmd_len > LEN_N} +
                        {1'b0, cmd_len > (LEN_N << 1)} + {1'b0, cmd_len > LEN_N + (LEN_N << 1)};
                    // Rows back to back: as many per request as fit the bus.
                    per <= cmd_stride == {{(STRIDE_W - LEN_W) {1'b0}}, cmd_len} && cmd_len != 0 ?
                        cmd_per : K_ONE;
                    lane <= 2'd0;
                    src_row <= cmd_b;
                    req_addr <= cmd_a;
                    read <= {ROWS_W{1'b0}};
                    g_row <= {KW{1'b0}};
                    row_off <= {OW{1'b0}};
                    unsent <= cmd_rows;
                    acked <= {ROWS_W{1'b0}};
                    err_seen <= 1'b0;
                end
            end else begin
                if (rd) begin
                    src_row <= src_row + 1;
                    lane <= (lane == lane_last) ? 2'd0 : lane + 2'd1;
                end
                if (rd_end) begin
                    read <= read + 1;
                    g_row <= g_row == per - K_ONE ? {KW{1'b0}} : g_row + K_ONE;
                    row_off <= g_row == per - K_ONE ? {OW{1'b0}} : row_off + len[OW-1:0];
                end
                if (send) begin
                    // One row: stride on; k rows back to back: the request's bytes on.
                    req_addr <= req_addr + (per == K_ONE ? stride : {{(STRIDE_W - 16) {1'b0}}, req_len});
                    unsent <= unsent - send_rows;
                end
                if (rsp_valid) begin
                    acked <= acked + ack_rows;
                    err_seen <= err_seen || rsp_err;
                    if (acked + ack_rows == rows) begin
                        done  <= 1'b1;
                        fault <= err_seen || rsp_err;
                        busy  <= 1'b0;
                    end
                end
            end
        end
    end
endmodule
