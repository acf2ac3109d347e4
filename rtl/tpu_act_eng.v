`default_nettype none
`include "tpu_isa.vh"
// Activate unit: ACTIVATE (docs/isa.md), one instruction at a time, one ACC row read per cycle.
// Output row i is written to UB[ub_addr + i*step], step = cmd_ub_step (ACTIVATE's len field, 0
// meaning 1: consecutive rows; it costs nothing). Its window of ACC rows is the one row acc_addr+i,
// or with POOL (cmd_window: the stride field's PH, PW, STEP, PITCH) PH window rows of PW
// consecutive ACC rows, the first at acc_addr + i*STEP, each PITCH rows after the last, read one
// per cycle in that order: an output row costs PH*PW cycles. Each read's data arrives the next
// cycle and enters tpu_act (bias, relu, the window's maximum, requantize; latency 3 after the
// window's last row), with BF16 in fp32 and rounded to bf16, written as the row pair
// UB[ub_addr + i*step .. +2) through the UB's pair write (ub_pair) in the same cycle.
// The UB row address and a last-row flag travel with the row as its tag;
// done pulses in the cycle the last row is written, and the next command is accepted in that
// cycle. Nothing downstream can refuse a row, so the pipeline never stalls.
module tpu_act_eng #(
    parameter N = 16
) (
    input wire clk,
    input wire rst,
    input wire cmd_valid,
    output wire cmd_ready,
    input wire [`TPU_INSN_ROWS_W-1:0] cmd_rows,
    input wire [`TPU_INSN_B_W-1:0] cmd_ub_addr,
    input wire [7:0] cmd_ub_step,  // UB rows between output rows, 0 meaning 1
    input wire [`TPU_INSN_B_W-1:0] cmd_acc_addr,
    input wire cmd_bias,
    input wire cmd_relu,
    input wire cmd_pool,
    input wire cmd_bf16,
    input wire [`TPU_INSN_STRIDE_W-1:0] cmd_window,  // with cmd_pool: the window (TPU_POOL_*)
    output wire done,
    // ACC read port (registered, data the cycle after acc_en)
    output wire acc_en,
    output reg [`TPU_INSN_B_W-1:0] acc_addr,
    input wire [32*N-1:0] acc_data,
    // UB write port: one row (ub_data's low half) or with ub_pair two
    output wire ub_en,
    output wire [`TPU_INSN_B_W-1:0] ub_addr,
    output wire ub_pair,
    output wire [16*N-1:0] ub_data,
    // activation parameters
    input wire [32*N-1:0] bias,
    input wire [32*N-1:0] mult,
    input wire [6*N-1:0] shift
);
    localparam RAW = `TPU_INSN_B_W;  // a UB or ACC row address: the b field's width
    reg                          busy;  // from accepting a command until its last row is written
    reg  [ `TPU_INSN_ROWS_W-1:0] left;  // output rows whose reads are not finished
    reg  [              RAW-1:0] rd_ub;  // UB row of the window read this cycle
    reg  [                  7:0] ub_step;  // UB rows between output rows, 1..255
    reg                          add_bias;
    reg                          relu;
    reg                          bf16;
    // The window (1 x 1, step 1 without POOL) and the position of this cycle's read in it.
    reg  [   `TPU_POOL_PH_W-1:0] ph;
    reg  [   `TPU_POOL_PW_W-1:0] pw;
    reg  [ `TPU_POOL_STEP_W-1:0] step;
    reg  [`TPU_POOL_PITCH_W-1:0] pitch;
    reg  [   `TPU_POOL_PH_W-1:0] wk;  // window row
    reg  [   `TPU_POOL_PW_W-1:0] wj;  // column within the window row
    reg  [              RAW-1:0] win_base;  // ACC row of the window's first row
    reg  [              RAW-1:0] row_base;  // ACC row of window row wk's first column
    reg                          q_valid;  // ACC data is on acc_data this cycle ...
    reg                          q_first;  // ... the first row of its window
    reg                          q_wlast;  // ... the last row of its window
    reg  [              RAW-1:0] q_ub;  // ... for this UB row
    reg                          q_last;  // ... of the instruction's last row

    wire                         col_last = wj == pw - 1;
    wire                         win_last = col_last && wk == ph - 1;

    wire                         out_valid;
    wire [                RAW:0] out_tag;
    // The int32 output serves WR_HOST's ACC path, not ACTIVATE.
    /* verilator lint_off UNUSEDSIGNAL */
    wire [             32*N-1:0] out_i32_unused;
    /* verilator lint_on UNUSEDSIGNAL */

    tpu_act #(
        .N(N),
        .TAG_W(RAW + 1)
    ) u_act (
        .clk(clk),
        .rst(rst),
        .stall(1'b0),
        .in_valid(q_valid),
        .in_first(q_first),
        .in_last(q_wlast),
        .in_data(acc_data),
        .in_bias(add_bias),
        .in_relu(relu),
        .in_bf16(bf16),
        .in_tag({q_last, q_ub}),
        .bias(bias),
        .mult(mult),
        .shift(shift),
        .out_valid(out_valid),
        .out_i32(out_i32_unused),
        .out_ub(ub_data),
        .out_bf16(ub_pair),
        .out_tag(out_tag)
    );

    wire accept = cmd_valid && cmd_ready;

    assign cmd_ready = !busy || done;
    assign acc_en = left != 0;
    assign ub_en = out_valid;
    assign ub_addr = out_tag[RAW-1:0];
    assign done = out_valid && out_tag[RAW];

    always @(posedge clk) begin
        if (rst) begin
            busy <= 1'b0;
            left <= 0;
            q_valid <= 1'b0;
        end else begin
            if (accept) busy <= 1'b1;
            else if (done) busy <= 1'b0;
            if (accept) left <= cmd_rows;
            else if (acc_en && win_last) left <= left - 1;
            q_valid <= acc_en;
        end
    end

    // Datapath registers need no reset: left and q_valid qualify them.
    always @(posedge clk) begin
        if (accept) begin
            acc_addr <= cmd_acc_addr;
            win_base <= cmd_acc_addr;
            row_base <= cmd_acc_addr;
            rd_ub <= cmd_ub_addr;
            ub_step <= (cmd_ub_step == 8'd0) ? 8'd1 : cmd_ub_step;
            add_bias <= cmd_bias;
            relu <= cmd_relu;
            bf16 <= cmd_bf16;
            ph <= cmd_pool ? cmd_window[`TPU_POOL_PH] : 1;
            pw <= cmd_pool ? cmd_window[`TPU_POOL_PW] : 1;
            step <= cmd_pool ? cmd_window[`TPU_POOL_STEP] : 1;
            pitch <= cmd_window[`TPU_POOL_PITCH];
            wk <= 0;
            wj <= 0;
        end else if (acc_en) begin
            if (!col_last) begin
                wj <= wj + 1;
                acc_addr <= acc_addr + 1;
            end else if (!win_last) begin
                wj <= 0;
                wk <= wk + 1;
                row_base <= row_base + {{(RAW - `TPU_POOL_PITCH_W) {1'b0}}, pitch};
                acc_addr <= row_base + {{(RAW - `TPU_POOL_PITCH_W) {1'b0}}, pitch};
            end else begin
                wj <= 0;
                wk <= 0;
                win_base <= win_base + {{(RAW - `TPU_POOL_STEP_W) {1'b0}}, step};
                row_base <= win_base + {{(RAW - `TPU_POOL_STEP_W) {1'b0}}, step};
                acc_addr <= win_base + {{(RAW - `TPU_POOL_STEP_W) {1'b0}}, step};
                rd_ub <= rd_ub + {{(RAW - 8) {1'b0}}, ub_step};
            end
        end
        q_first <= wj == 0 && wk == 0;
        q_wlast <= win_last;
        q_ub <= rd_ub;
        q_last <= left == 1 && win_last;
    end
endmodule
