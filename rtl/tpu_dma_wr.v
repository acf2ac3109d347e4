`default_nettype none
// Store unit: WR_HOST (docs/isa.md), one instruction at a time.
// Memory row i is read from ACC[b+i] (data the next cycle, then relu(acc + bias) through
// tpu_act, 3 more cycles) or, from UB, as its S = ceil(len / N) UB rows b + i*S + s (s = 0..S-1,
// len up to 4N), one per cycle through the single read port (data the next cycle), assembled
// into lane s of the row (bytes s*N..). Each memory row is queued in a DEPTH-row buffer and sent
// as one write request to a + i*stride. A memory row's reads only start when the buffer has room
// for it counting every row still in the read pipeline, so back-pressure from the memory never
// has to stall the pipeline, and one request per cycle is sustained for S = 1 when DEPTH covers
// the read-to-send latency (6 cycles on the ACC path); a wide row takes S cycles of the read
// port. done (with fault if any ack had err) pulses the cycle after the last acknowledgement
// arrives.
// Lanes >= len of the write data are not masked: the memory writes only bytes 0..len-1.
module tpu_dma_wr #(
    parameter N = 16,
    parameter DEPTH = 8  // rows buffered, at least 2
) (
    input wire clk,
    input wire rst,
    input wire cmd_valid,
    output wire cmd_ready,
    input wire [15:0] cmd_rows,
    input wire [31:0] cmd_a,
    input wire [19:0] cmd_b,
    input wire [11:0] cmd_len,
    input wire [31:0] cmd_stride,
    input wire cmd_src_acc,
    input wire cmd_bias,
    input wire cmd_relu,
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
    output wire [19:0] ub_addr,
    input wire [8*N-1:0] ub_data,
    output wire acc_en,
    output wire [19:0] acc_addr,
    input wire [32*N-1:0] acc_data,
    input wire [32*N-1:0] bias
);
    localparam PW = $clog2(DEPTH);
    localparam integer DEPTH_I = DEPTH;
    localparam integer LAST_I = DEPTH - 1;
    localparam [PW:0] FULL = DEPTH_I[PW:0];
    localparam [PW-1:0] LAST = LAST_I[PW-1:0];
    localparam integer N_I = N;
    localparam [11:0] LEN_N = N_I[11:0];

    reg busy;
    // The instruction being executed.
    reg [15:0] rows;
    reg [11:0] len;
    reg [31:0] stride;
    reg src_acc;
    reg add_bias;
    reg relu;
    reg [1:0] lane_last;  // S - 1: UB rows per memory row, less one (0 from ACC)

    reg [19:0] src_row;  // next UB/ACC row to read
    reg [1:0] lane;  // lane of the memory row that read fills
    reg [15:0] read;  // memory rows whose reads have started
    reg [15:0] acked;  // acknowledgements received
    reg [PW:0] reserved;  // memory rows whose reads started, not yet sent: being read or buffered
    reg err_seen;

    reg [32*N-1:0] buf_mem[0:DEPTH-1];
    reg [PW-1:0] buf_wp;
    reg [PW-1:0] buf_rp;
    reg [PW:0] buf_count;

    reg ub_q;  // UB data is on ub_data this cycle ...
    reg [1:0] q_lane;  // ... for this lane of its memory row
    reg q_end;  // ... the row's last
    reg acc_q;  // ACC data is on acc_data this cycle
    reg [32*N-1:0] asm_q;  // the UB lanes of the memory row assembled so far

    // A memory row's first read reserves its buffer entry; the rest of its reads follow.
    wire rd = busy && (lane != 2'd0 || (read != rows && reserved != FULL));
    wire rd_row = rd && lane == 2'd0;
    wire send = req_valid && req_ready;

    // The accumulator path. The credit scheme above means the pipeline never needs to stall;
    // mult/shift/out_i8 are the ACTIVATE requantizer, unused for the int32 output, and the row
    // order needs no tag.
    wire act_valid;
    wire [32*N-1:0] act_i32;
    /* verilator lint_off UNUSEDSIGNAL */
    wire [8*N-1:0] act_i8_unused;
    wire act_tag_unused;
    /* verilator lint_on UNUSEDSIGNAL */
    tpu_act #(
        .N(N),
        .TAG_W(1)
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
        .in_tag(1'b0),
        .bias(bias),
        .mult({32 * N{1'b0}}),
        .shift({6 * N{1'b0}}),
        .out_valid(act_valid),
        .out_i32(act_i32),
        .out_i8(act_i8_unused),
        .out_tag(act_tag_unused)
    );

    // The memory row with this cycle's UB data in its lane.
    reg [32*N-1:0] ub_row;
    always @* begin
        ub_row = asm_q;
        ub_row[8*N*q_lane+:8*N] = ub_data;
    end

    wire push = (ub_q && q_end) || act_valid;
    wire [32*N-1:0] push_data = src_acc ? act_i32 : ub_row;

    assign cmd_ready = !busy;
    assign ub_en = rd && !src_acc;
    assign acc_en = rd && src_acc;
    assign ub_addr = src_row;
    assign acc_addr = src_row;
    assign req_valid = buf_count != {(PW + 1) {1'b0}};
    assign req_len = {4'd0, len};
    assign req_wdata = buf_mem[buf_rp];

    always @(posedge clk) begin
        if (push) buf_mem[buf_wp] <= push_data;
        if (ub_q) asm_q <= ub_row;
        q_lane <= lane;
        q_end  <= lane == lane_last;
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
            if (rd_row && !send) reserved <= reserved + 1'b1;
            else if (send && !rd_row) reserved <= reserved - 1'b1;

            if (!busy) begin
                if (cmd_valid) begin
                    busy <= 1'b1;
                    rows <= cmd_rows;
                    len <= cmd_len;
                    stride <= cmd_stride;
                    src_acc <= cmd_src_acc;
                    add_bias <= cmd_bias;
                    relu <= cmd_relu;
                    // ceil(len / N) - 1, len <= 4N
                    lane_last <= cmd_src_acc ? 2'd0 : {1'b0, cmd_len > LEN_N} +
                        {1'b0, cmd_len > (LEN_N << 1)} + {1'b0, cmd_len > LEN_N + (LEN_N << 1)};
                    lane <= 2'd0;
                    src_row <= cmd_b;
                    req_addr <= cmd_a;
                    read <= 16'd0;
                    acked <= 16'd0;
                    err_seen <= 1'b0;
                end
            end else begin
                if (rd) begin
                    src_row <= src_row + 20'd1;
                    lane <= (lane == lane_last) ? 2'd0 : lane + 2'd1;
                end
                if (rd_row) read <= read + 16'd1;
                if (send) req_addr <= req_addr + stride;
                if (rsp_valid) begin
                    acked <= acked + 16'd1;
                    err_seen <= err_seen || rsp_err;
                    if (acked + 16'd1 == rows) begin
                        done  <= 1'b1;
                        fault <= err_seen || rsp_err;
                        busy  <= 1'b0;
                    end
                end
            end
        end
    end
endmodule
