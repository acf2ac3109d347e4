`default_nettype none
// Activate unit: ACTIVATE (docs/isa.md), one instruction at a time, one row per cycle.
// Row i: ACC[acc_addr+i] is read (data the next cycle), passes through tpu_act (bias, relu,
// requantize; latency 3) and its int8 result is written to UB[ub_addr+i]. The UB row address
// and a last-row flag travel with the row as its tag; done pulses in the cycle the last row is
// written, and the next command is accepted in that cycle. Nothing downstream can refuse a row,
// so the pipeline never stalls.
module tpu_act_eng #(
    parameter N = 16
) (
    input wire clk,
    input wire rst,
    input wire cmd_valid,
    output wire cmd_ready,
    input wire [15:0] cmd_rows,
    input wire [19:0] cmd_ub_addr,
    input wire [19:0] cmd_acc_addr,
    input wire cmd_bias,
    input wire cmd_relu,
    output wire done,
    // ACC read port (registered, data the cycle after acc_en)
    output wire acc_en,
    output reg [19:0] acc_addr,
    input wire [32*N-1:0] acc_data,
    // UB write port
    output wire ub_en,
    output wire [19:0] ub_addr,
    output wire [8*N-1:0] ub_data,
    // activation parameters
    input wire [32*N-1:0] bias,
    input wire [32*N-1:0] mult,
    input wire [6*N-1:0] shift
);
    reg             busy;  // from accepting a command until its last row is written
    reg  [    15:0] left;  // ACC rows still to read
    reg  [    19:0] rd_ub;  // UB row of the ACC row read this cycle
    reg             add_bias;
    reg             relu;
    reg             q_valid;  // ACC data is on acc_data this cycle ...
    reg  [    19:0] q_ub;  // ... for this UB row
    reg             q_last;  // ... and it is the instruction's last row

    wire            out_valid;
    wire [    20:0] out_tag;
    // The int32 output serves WR_HOST's ACC path, not ACTIVATE.
    /* verilator lint_off UNUSEDSIGNAL */
    wire [32*N-1:0] out_i32_unused;
    /* verilator lint_on UNUSEDSIGNAL */

    tpu_act #(
        .N(N),
        .TAG_W(21)
    ) u_act (
        .clk(clk),
        .rst(rst),
        .stall(1'b0),
        .in_valid(q_valid),
        .in_data(acc_data),
        .in_bias(add_bias),
        .in_relu(relu),
        .in_tag({q_last, q_ub}),
        .bias(bias),
        .mult(mult),
        .shift(shift),
        .out_valid(out_valid),
        .out_i32(out_i32_unused),
        .out_i8(ub_data),
        .out_tag(out_tag)
    );

    wire accept = cmd_valid && cmd_ready;

    assign cmd_ready = !busy || done;
    assign acc_en = left != 16'd0;
    assign ub_en = out_valid;
    assign ub_addr = out_tag[19:0];
    assign done = out_valid && out_tag[20];

    always @(posedge clk) begin
        if (rst) begin
            busy <= 1'b0;
            left <= 16'd0;
            q_valid <= 1'b0;
        end else begin
            if (accept) busy <= 1'b1;
            else if (done) busy <= 1'b0;
            if (accept) left <= cmd_rows;
            else if (acc_en) left <= left - 16'd1;
            q_valid <= acc_en;
        end
    end

    // Datapath registers need no reset: left and q_valid qualify them.
    always @(posedge clk) begin
        if (accept) begin
            acc_addr <= cmd_acc_addr;
            rd_ub <= cmd_ub_addr;
            add_bias <= cmd_bias;
            relu <= cmd_relu;
        end else if (acc_en) begin
            acc_addr <= acc_addr + 20'd1;
            rd_ub <= rd_ub + 20'd1;
        end
        q_ub   <= rd_ub;
        q_last <= left == 16'd1;
    end
endmodule
