`default_nettype none
`include "tpu_isa.vh"
// tpu_core: the sequencer and CSRs, the four execution units (load = tpu_dma_rd, MXU, activate,
// store = tpu_dma_wr), the unified buffer, accumulators, weight FIFO and activation parameters,
// and the memory port (docs/isa.md "Ports of tpu_core").
// Memory ports: UB w0 load, w1 activate, zero port the load unit's ZERO, r0 MXU, r1 store; ACC
// write MXU or the load unit's RD_ACC (the sequencer never lets both write: a plain mux), r0
// activate, r1 store.
module tpu_core #(
    parameter N = 16,
    parameter UB_ROWS = 16384,
    parameter ACC_ROWS = 4096,
    parameter WFIFO_TILES = 4,
    parameter IQ_DEPTH = 32,
    parameter LD_SLOTS = 4,  // load instructions in flight
    parameter ID_W = 4
) (
    input wire clk,
    input wire rst,
    input wire iq_valid,
    output wire iq_ready,
    input wire [`TPU_INSN_W-1:0] iq_data,
    input wire csr_we,
    input wire [`TPU_CSR_ADDR_W-1:0] csr_addr,
    input wire [31:0] csr_wdata,
    output wire [31:0] csr_rdata,
    output wire mem_req_valid,
    input wire mem_req_ready,
    output wire mem_req_we,
    output wire [31:0] mem_req_addr,
    output wire [15:0] mem_req_len,
    output wire [ID_W-1:0] mem_req_id,
    output wire [32*N-1:0] mem_req_wdata,
    input wire mem_rsp_valid,
    output wire mem_rsp_ready,
    input wire [ID_W-1:0] mem_rsp_id,
    input wire mem_rsp_err,
    input wire [32*N-1:0] mem_rsp_rdata,
    output wire irq
);
    // ------------------------------------------------------------ sequencer
    wire [31:0] mem_size;
    wire [`TPU_INSN_OP_W-1:0] cmd_op;
    wire [`TPU_F_W-1:0] cmd_flags;
    wire [`TPU_INSN_ROWS_W-1:0] cmd_rows;
    wire [`TPU_INSN_A_W-1:0] cmd_a;
    wire [`TPU_INSN_B_W-1:0] cmd_b;
    wire [`TPU_INSN_LEN_W-1:0] cmd_len;
    wire [`TPU_INSN_STRIDE_W-1:0] cmd_stride;
    wire ld_valid, ld_ready, ld_done, ld_fault;
    wire zr_valid, zr_ready, zr_done;
    wire mx_valid, mx_ready, mx_done;
    wire ac_valid, ac_ready, ac_done;
    wire st_valid, st_ready, st_done, st_fault;
    wire busy, halted, error;
    wire [`TPU_FAULT_W-1:0] error_code;
    wire [31:0] error_pc;
    wire [31:0] iq_free;
    wire stall_hazard, stall_unit, stall_issue, sync_retire;
    wire [2:0] retired;
    // For the waveform viewer only, hence unused: the head instruction's opcode (0 when the
    // queue is empty) and a pulse for every instruction that issues.
    /* verilator lint_off UNUSEDSIGNAL */
    wire [`TPU_INSN_OP_W-1:0] seq_op;
    wire insn_start;
    /* verilator lint_on UNUSEDSIGNAL */

    tpu_seq #(
        .N(N),
        .UB_ROWS(UB_ROWS),
        .ACC_ROWS(ACC_ROWS),
        .WFIFO_TILES(WFIFO_TILES),
        .IQ_DEPTH(IQ_DEPTH),
        .LD_SLOTS(LD_SLOTS)
    ) u_seq (
        .clk(clk),
        .rst(rst),
        .iq_valid(iq_valid),
        .iq_ready(iq_ready),
        .iq_data(iq_data),
        .mem_size(mem_size),
        .cmd_op(cmd_op),
        .cmd_flags(cmd_flags),
        .cmd_rows(cmd_rows),
        .cmd_a(cmd_a),
        .cmd_b(cmd_b),
        .cmd_len(cmd_len),
        .cmd_stride(cmd_stride),
        .ld_valid(ld_valid),
        .ld_ready(ld_ready),
        .ld_done(ld_done),
        .ld_fault(ld_fault),
        .zr_valid(zr_valid),
        .zr_ready(zr_ready),
        .zr_done(zr_done),
        .mx_valid(mx_valid),
        .mx_ready(mx_ready),
        .mx_done(mx_done),
        .ac_valid(ac_valid),
        .ac_ready(ac_ready),
        .ac_done(ac_done),
        .st_valid(st_valid),
        .st_ready(st_ready),
        .st_done(st_done),
        .st_fault(st_fault),
        .busy(busy),
        .halted(halted),
        .error(error),
        .error_code(error_code),
        .error_pc(error_pc),
        .iq_free(iq_free),
        .head_op(seq_op),
        .issue(insn_start),
        .stall_hazard(stall_hazard),
        .stall_unit(stall_unit),
        .stall_issue(stall_issue),
        .sync_retire(sync_retire),
        .retired(retired)
    );

    assign irq = halted || error;

    // ------------------------------------------------------------------ CSRs
    wire row_fire, weight_stall;
    wire mem_take = mem_req_valid && mem_req_ready;

    tpu_csr #(
        .N(N),
        .UB_ROWS(UB_ROWS),
        .ACC_ROWS(ACC_ROWS),
        .WFIFO_TILES(WFIFO_TILES),
        .IQ_DEPTH(IQ_DEPTH)
    ) u_csr (
        .clk(clk),
        .rst(rst),
        .csr_we(csr_we),
        .csr_addr(csr_addr),
        .csr_wdata(csr_wdata),
        .csr_rdata(csr_rdata),
        .mem_size(mem_size),
        .busy(busy),
        .halted(halted),
        .error(error),
        .error_code(error_code),
        .error_pc(error_pc),
        .iq_free(iq_free),
        .ev_push(iq_valid && iq_ready),
        .ev_sync(sync_retire),
        .ev_mxu_row(row_fire),
        .ev_stall_hazard(stall_hazard),
        .ev_stall_unit(stall_unit),
        .ev_stall_weight(weight_stall),
        .ev_stall_mem(mem_req_valid && !mem_req_ready),
        .ev_stall_issue(stall_issue),
        .rd_bytes((mem_take && !mem_req_we) ? mem_req_len : 16'd0),
        .wr_bytes((mem_take && mem_req_we) ? mem_req_len : 16'd0),
        .retired(retired)
    );

    // -------------------------------------------------------------- storage
    wire ub_w0_en, ub_w1_en, ub_z_en, ub_r0_en, ub_r1_en;
    // UB and ACC row addresses: the b field's width (a UB row in a is validated below UB_ROWS).
    wire [`TPU_INSN_B_W-1:0] ub_w0_addr, ub_w1_addr, ub_z_addr, ub_r0_addr, ub_r1_addr;
    wire ub_w1_pair, ub_r0_pair;  // bf16: the activate unit's and the MXU's row pairs
    wire [16*N-1:0] ub_w1_data, ub_r0_data;
    wire [8*N-1:0] ub_r1_data;
    // The load unit writes an RD_HOST row of up to 4N bytes (the bus) as up to 4 UB rows at once.
    localparam UB_W0_ROWS = 4;
    wire [$clog2(UB_W0_ROWS+1)-1:0] ub_w0_rows;
    wire [8*N*UB_W0_ROWS-1:0] ub_w0_data;

    tpu_ub #(
        .N(N),
        .ROWS(UB_ROWS),
        .W0_ROWS(UB_W0_ROWS)
    ) u_ub (
        .clk(clk),
        .w0_en(ub_w0_en),
        .w0_addr(ub_w0_addr),
        .w0_rows(ub_w0_rows),
        .w0_data(ub_w0_data),
        .w1_en(ub_w1_en),
        .w1_addr(ub_w1_addr),
        .w1_pair(ub_w1_pair),
        .w1_data(ub_w1_data),
        .z_en(ub_z_en),
        .z_addr(ub_z_addr),
        .r0_en(ub_r0_en),
        .r0_addr(ub_r0_addr),
        .r0_pair(ub_r0_pair),
        .r0_data(ub_r0_data),
        .r1_en(ub_r1_en),
        .r1_addr(ub_r1_addr),
        .r1_data(ub_r1_data)
    );

    wire acc_w_en, acc_w_accumulate, acc_w_bf16, acc_r0_en, acc_r1_en;
    wire [`TPU_INSN_B_W-1:0] acc_w_addr, acc_r0_addr, acc_r1_addr;
    wire [32*N-1:0] acc_w_data, acc_r0_data, acc_r1_data;
    // The write port's two sources: the MXU's results and RD_ACC's rows.
    wire mx_acc_en, mx_acc_accumulate, mx_acc_bf16, ld_acc_en, ld_acc_accumulate, ld_acc_bf16;
    wire [`TPU_INSN_B_W-1:0] mx_acc_addr, ld_acc_addr;
    wire [32*N-1:0] mx_acc_data, ld_acc_data;
    assign acc_w_en = mx_acc_en || ld_acc_en;
    assign acc_w_addr = ld_acc_en ? ld_acc_addr : mx_acc_addr;
    assign acc_w_accumulate = ld_acc_en ? ld_acc_accumulate : mx_acc_accumulate;
    assign acc_w_bf16 = ld_acc_en ? ld_acc_bf16 : mx_acc_bf16;
    assign acc_w_data = ld_acc_en ? ld_acc_data : mx_acc_data;

    tpu_acc #(
        .N(N),
        .ROWS(ACC_ROWS)
    ) u_acc (
        .clk(clk),
        .w_en(acc_w_en),
        .w_addr(acc_w_addr),
        .w_accumulate(acc_w_accumulate),
        .w_bf16(acc_w_bf16),
        .w_data(acc_w_data),
        .r0_en(acc_r0_en),
        .r0_addr(acc_r0_addr),
        .r0_data(acc_r0_data),
        .r1_en(acc_r1_en),
        .r1_addr(acc_r1_addr),
        .r1_data(acc_r1_data)
    );

    wire wf_wr_en, wf_wr_bf16, wf_push, wf_empty, wf_pop;
    // The load unit writes up to a bus's worth of full rows (4N bytes) per cycle.
    localparam WF_ROWS = 4;
    wire [8:0] wf_count, wf_wr_row, wf_rd_row;
    wire [$clog2(WF_ROWS+1)-1:0] wf_wr_rows;
    wire [8*N*WF_ROWS-1:0] wf_wr_data;
    wire [16*N-1:0] wf_rd_data;
    // The load unit reserves tiles against the FIFO's count; full is not needed.
    /* verilator lint_off UNUSEDSIGNAL */
    wire wf_full_unused;
    /* verilator lint_on UNUSEDSIGNAL */

    tpu_wfifo #(
        .N(N),
        .TILES(WFIFO_TILES),
        .WR_ROWS(WF_ROWS)
    ) u_wfifo (
        .clk(clk),
        .rst(rst),
        .wr_en(wf_wr_en),
        .wr_row(wf_wr_row),
        .wr_rows(wf_wr_rows),
        .wr_bf16(wf_wr_bf16),
        .wr_data(wf_wr_data),
        .push(wf_push),
        .full(wf_full_unused),
        .empty(wf_empty),
        .count(wf_count),
        .rd_row(wf_rd_row),
        .rd_data(wf_rd_data),
        .pop(wf_pop)
    );

    wire prm_en;
    wire [1:0] prm_sel;
    wire [32*N-1:0] prm_data;
    wire [32*N-1:0] bias, mult;
    wire [6*N-1:0] shift;

    tpu_params #(
        .N(N)
    ) u_params (
        .clk(clk),
        .rst(rst),
        .prm_en(prm_en),
        .prm_sel(prm_sel),
        .prm_data(prm_data),
        .bias(bias),
        .mult(mult),
        .shift(shift)
    );

    // ----------------------------------------------------------------- units
    wire m0_req_valid, m0_req_ready, m0_rsp_valid, m0_rsp_err;
    wire [31:0] m0_req_addr;
    wire [15:0] m0_req_len;
    wire [32*N-1:0] m0_rsp_rdata;
    wire m1_req_valid, m1_req_ready, m1_rsp_valid, m1_rsp_err;
    wire [31:0] m1_req_addr;
    wire [15:0] m1_req_len;
    wire [32*N-1:0] m1_req_wdata;

    tpu_dma_rd #(
        .N(N),
        .WFIFO_TILES(WFIFO_TILES),
        .LD_SLOTS(LD_SLOTS),
        .WF_ROWS(WF_ROWS)
    ) u_dma_rd (
        .clk(clk),
        .rst(rst),
        .cmd_valid(ld_valid),
        .cmd_ready(ld_ready),
        .cmd_op(cmd_op),
        .cmd_rows(cmd_rows),
        .cmd_a(cmd_a),
        .cmd_b(cmd_b),
        .cmd_len(cmd_len),
        .cmd_stride(cmd_stride),
        .cmd_bf16(cmd_flags[`TPU_F_BF16_BIT]),
        .cmd_acc(cmd_flags[`TPU_F_ACC_BIT]),
        .done(ld_done),
        .fault(ld_fault),
        .zero_valid(zr_valid),
        .zero_ready(zr_ready),
        .zero_done(zr_done),
        .ub_z_en(ub_z_en),
        .ub_z_addr(ub_z_addr),
        .req_valid(m0_req_valid),
        .req_ready(m0_req_ready),
        .req_addr(m0_req_addr),
        .req_len(m0_req_len),
        .rsp_valid(m0_rsp_valid),
        .rsp_err(m0_rsp_err),
        .rsp_rdata(m0_rsp_rdata),
        .ub_en(ub_w0_en),
        .ub_addr(ub_w0_addr),
        .ub_rows(ub_w0_rows),
        .ub_data(ub_w0_data),
        .wf_count(wf_count),
        .wf_en(wf_wr_en),
        .wf_row(wf_wr_row),
        .wf_rows(wf_wr_rows),
        .wf_bf16(wf_wr_bf16),
        .wf_data(wf_wr_data),
        .wf_push(wf_push),
        .prm_en(prm_en),
        .prm_sel(prm_sel),
        .prm_data(prm_data),
        .acc_en(ld_acc_en),
        .acc_addr(ld_acc_addr),
        .acc_accumulate(ld_acc_accumulate),
        .acc_bf16(ld_acc_bf16),
        .acc_data(ld_acc_data)
    );

    // MATMUL in flight are counted by the sequencer; the MXU's own count is not needed.
    /* verilator lint_off UNUSEDSIGNAL */
    wire mxu_busy_unused;
    /* verilator lint_on UNUSEDSIGNAL */

    tpu_mxu #(
        .N(N)
    ) u_mxu (
        .clk(clk),
        .rst(rst),
        .cmd_valid(mx_valid),
        .cmd_ready(mx_ready),
        .cmd_ub_addr(cmd_a[`TPU_INSN_B_W-1:0]),
        .cmd_acc_addr(cmd_b),
        .cmd_rows(cmd_rows),
        .cmd_ub_stride(cmd_stride[7:0]),
        .cmd_acc(cmd_flags[`TPU_F_ACC_BIT]),
        .cmd_load(cmd_flags[`TPU_F_LOAD_BIT]),
        .cmd_unsigned(cmd_flags[`TPU_F_UNSIGNED_BIT]),
        .cmd_bf16(cmd_flags[`TPU_F_BF16_BIT]),
        .done(mx_done),
        .wf_empty(wf_empty),
        .wf_row(wf_rd_row),
        .wf_rdata(wf_rd_data),
        .wf_pop(wf_pop),
        .ub_en(ub_r0_en),
        .ub_addr(ub_r0_addr),
        .ub_pair(ub_r0_pair),
        .ub_data(ub_r0_data),
        .acc_en(mx_acc_en),
        .acc_addr(mx_acc_addr),
        .acc_accumulate(mx_acc_accumulate),
        .acc_bf16(mx_acc_bf16),
        .acc_data(mx_acc_data),
        .row_fire(row_fire),
        .weight_stall(weight_stall),
        .busy(mxu_busy_unused)
    );

    tpu_act_eng #(
        .N(N)
    ) u_act_eng (
        .clk(clk),
        .rst(rst),
        .cmd_valid(ac_valid),
        .cmd_ready(ac_ready),
        .cmd_rows(cmd_rows),
        .cmd_ub_addr(cmd_a[`TPU_INSN_B_W-1:0]),
        .cmd_ub_step(cmd_len[7:0]),  // validated: len <= 255
        .cmd_acc_addr(cmd_b),
        .cmd_bias(cmd_flags[`TPU_F_BIAS_BIT]),
        .cmd_relu(cmd_flags[`TPU_F_RELU_BIT]),
        .cmd_pool(cmd_flags[`TPU_F_POOL_BIT]),
        .cmd_bf16(cmd_flags[`TPU_F_BF16_BIT]),
        .cmd_window(cmd_stride),
        .done(ac_done),
        .acc_en(acc_r0_en),
        .acc_addr(acc_r0_addr),
        .acc_data(acc_r0_data),
        .ub_en(ub_w1_en),
        .ub_addr(ub_w1_addr),
        .ub_pair(ub_w1_pair),
        .ub_data(ub_w1_data),
        .bias(bias),
        .mult(mult),
        .shift(shift)
    );

    tpu_dma_wr #(
        .N(N)
    ) u_dma_wr (
        .clk(clk),
        .rst(rst),
        .cmd_valid(st_valid),
        .cmd_ready(st_ready),
        .cmd_rows(cmd_rows),
        .cmd_a(cmd_a),
        .cmd_b(cmd_b),
        .cmd_len(cmd_len),
        .cmd_stride(cmd_stride),
        .cmd_src_acc(cmd_flags[`TPU_F_SRC_ACC_BIT]),
        .cmd_bias(cmd_flags[`TPU_F_BIAS_BIT]),
        .cmd_relu(cmd_flags[`TPU_F_RELU_BIT]),
        .cmd_bf16(cmd_flags[`TPU_F_BF16_BIT]),
        .done(st_done),
        .fault(st_fault),
        .req_valid(m1_req_valid),
        .req_ready(m1_req_ready),
        .req_addr(m1_req_addr),
        .req_len(m1_req_len),
        .req_wdata(m1_req_wdata),
        .rsp_valid(m1_rsp_valid),
        .rsp_err(m1_rsp_err),
        .ub_en(ub_r1_en),
        .ub_addr(ub_r1_addr),
        .ub_data(ub_r1_data),
        .acc_en(acc_r1_en),
        .acc_addr(acc_r1_addr),
        .acc_data(acc_r1_data),
        .bias(bias)
    );

    tpu_mem_arb #(
        .N(N),
        .ID_W(ID_W)
    ) u_arb (
        .clk(clk),
        .rst(rst),
        .m0_req_valid(m0_req_valid),
        .m0_req_ready(m0_req_ready),
        .m0_req_addr(m0_req_addr),
        .m0_req_len(m0_req_len),
        .m0_rsp_valid(m0_rsp_valid),
        .m0_rsp_err(m0_rsp_err),
        .m0_rsp_rdata(m0_rsp_rdata),
        .m1_req_valid(m1_req_valid),
        .m1_req_ready(m1_req_ready),
        .m1_req_addr(m1_req_addr),
        .m1_req_len(m1_req_len),
        .m1_req_wdata(m1_req_wdata),
        .m1_rsp_valid(m1_rsp_valid),
        .m1_rsp_err(m1_rsp_err),
        .mem_req_valid(mem_req_valid),
        .mem_req_ready(mem_req_ready),
        .mem_req_we(mem_req_we),
        .mem_req_addr(mem_req_addr),
        .mem_req_len(mem_req_len),
        .mem_req_id(mem_req_id),
        .mem_req_wdata(mem_req_wdata),
        .mem_rsp_valid(mem_rsp_valid),
        .mem_rsp_ready(mem_rsp_ready),
        .mem_rsp_id(mem_rsp_id),
        .mem_rsp_err(mem_rsp_err),
        .mem_rsp_rdata(mem_rsp_rdata)
    );
endmodule
