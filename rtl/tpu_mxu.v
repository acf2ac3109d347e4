`default_nettype none
`include "tpu_isa.vh"
// tpu_mxu: the matrix unit. Streams MATMUL commands through an N x N weight-stationary array.
//
// A command's row i reads UB row ub_addr + i*step (step = cmd_ub_stride, 0 meaning 1): the
// address advances by the step at each row, so any step streams one row per cycle. An int8 row
// is one UB row; a bf16 vector (cmd_bf16, docs/isa.md "Floating point (bf16)") is the row pair
// ub_addr, ub_addr + 1, which the UB port delivers together (ub_pair), element e at bytes 2e, 2e+1.
//
// Row pipeline (cycle T = the row's UB read, ub_en high):
//   T          ub_en/ub_addr; command queue head advances
//   T+1        ub_data arrives, is sign- or zero-extended to 16 bits (int8) or split into N
//              bf16, and registered
//   T+2        element 0 enters array row 0 (row_fire); element k enters row k at T+2+k
//   T+2+N+c    column c's sum leaves the array bottom; the de-skew aligns all columns at T+2N+1
//   T+2N+2     acc_en with the row's address, accumulate bit and data (registered);
//              done also pulses here for the command's last row.
// So a row's accumulator write is exactly 2N+2 cycles after its UB read (LAT below). The row's
// type travels through the array with it (tpu_array picks the int32 or fp32 sum by it) and comes
// out with its accumulator write (acc_bf16), so int8 and bf16 commands follow each other without
// a drain.
//
// Weights: a LOAD command's tile is shifted into the bank the previous command does not use.
// With t = the cycle a row enters array row 0, PE (r,c) uses that row's bank at t+r+c, and a
// shift that starts at ts (column 0) runs in column c during [ts+c, ts+c+N-1]. So:
//   - a shift into bank X may start only at ts >= t_last(X) + N, t_last(X) = the last row that
//     reads X (lb* counters);
//   - the first row reading the new tile may enter at t >= ts + N (sb* counters).
// A load is decided in cycle d and shifts during [d+1, d+N]: rows N-1 down to 0 of the FIFO
// head tile, one per cycle at column 0, columns skewed by tpu_skew; wf_pop with the last row.
// The next command's tile is shifted while the current command streams, so back-to-back LOAD
// commands of at least 2N-1 rows each stream without a bubble.
module tpu_mxu #(
    parameter N  = 16,
    parameter QD = 2    // command queue entries (>= 2: one streaming, one loading its tile)
) (
    input  wire                        clk,
    input  wire                        rst,
    // MATMUL commands from the sequencer (fields as in docs/isa.md)
    input  wire                        cmd_valid,
    output wire                        cmd_ready,
    input  wire [   `TPU_INSN_B_W-1:0] cmd_ub_addr,
    input  wire [   `TPU_INSN_B_W-1:0] cmd_acc_addr,
    input  wire [`TPU_INSN_ROWS_W-1:0] cmd_rows,        // 1..65535
    input  wire [                 7:0] cmd_ub_stride,   // UB rows between rows, 0 meaning 1
    input  wire                        cmd_acc,
    input  wire                        cmd_load,
    input  wire                        cmd_unsigned,
    input  wire                        cmd_bf16,
    output wire                        done,
    // weight FIFO head tile, read one row per cycle: N 16-bit cells
    input  wire                        wf_empty,
    output wire [                 8:0] wf_row,
    input  wire [            16*N-1:0] wf_rdata,
    output wire                        wf_pop,
    // unified buffer read port: row ub_addr (low half), with ub_pair (bf16) also ub_addr + 1,
    // valid the cycle after ub_en
    output wire                        ub_en,
    output wire [   `TPU_INSN_B_W-1:0] ub_addr,
    output wire                        ub_pair,
    input  wire [            16*N-1:0] ub_data,
    // accumulator write port: acc_bf16 says the row's sums are fp32
    output wire                        acc_en,
    output wire [   `TPU_INSN_B_W-1:0] acc_addr,
    output wire                        acc_accumulate,
    output wire                        acc_bf16,
    output wire [            32*N-1:0] acc_data,
    // status / performance
    output wire                        row_fire,
    output wire                        weight_stall,
    output wire                        busy
);
    localparam AW = 16;
    localparam WW = 16;
    localparam PW = 32;
    localparam LAT = 2 * N + 2;  // UB read to accumulator write, cycles
    localparam CW = $clog2(N + 1);
    // Sized constants are cut from integer ones so that lint sees matching widths.
    localparam integer LB_WAIT_I = N;  // load decision d >= T_last + N + 1  <=>  ts >= t_last + N
    localparam integer SB_WAIT_I = (N > 2) ? N - 2 : 0;  // first read T >= d+N-1 <=> t >= ts+N
    localparam integer LAST_ROW_I = N - 1;
    localparam [CW-1:0] LB_WAIT = LB_WAIT_I[CW-1:0];
    localparam [CW-1:0] SB_WAIT = SB_WAIT_I[CW-1:0];
    localparam [8:0] LAST_ROW = LAST_ROW_I[8:0];
    localparam PTRW = $clog2(QD);
    localparam integer LASTQ_I = QD - 1;
    localparam [PTRW-1:0] LASTQ = LASTQ_I[PTRW-1:0];
    localparam IFW = $clog2(QD + LAT + 1);  // commands queued plus commands draining
    localparam RAW = `TPU_INSN_B_W;  // a UB or ACC row address: the b field's width
    localparam CTW = 1 + 1 + 1 + 1 + RAW;  // valid, last row, accumulate, bf16, ACC address

    // ------------------------------------------------------------ command queue (ring) --
    reg [RAW-1:0] q_ub[0:QD-1];
    reg [RAW-1:0] q_acc[0:QD-1];
    reg [`TPU_INSN_ROWS_W-1:0] q_rows[0:QD-1];
    reg [7:0] q_step[0:QD-1];
    reg [QD-1:0] q_val;
    reg [QD-1:0] q_need;  // queued LOAD whose tile shift has not been started
    reg [QD-1:0] q_bank;
    reg [QD-1:0] q_accum;
    reg [QD-1:0] q_uns;
    reg [QD-1:0] q_bf16;
    reg [PTRW-1:0] q_hd;
    reg [PTRW-1:0] q_tl;
    reg tail_bank;  // bank of the most recently accepted command

    reg [CW-1:0] lb0, lb1;  // per bank: cycles until a shift into it may be decided
    reg [CW-1:0] sb0, sb1;  // per bank: cycles until rows may read it

    wire          push = cmd_valid && cmd_ready;
    wire          hd_valid = q_val[q_hd];
    wire          hd_bank = q_bank[q_hd];
    wire [CW-1:0] sb_hd = hd_bank ? sb1 : sb0;
    wire          issue = hd_valid && !q_need[q_hd] && sb_hd == {CW{1'b0}};
    wire          hd_last = q_rows[q_hd] == 1;
    wire          pop = issue && hd_last;

    assign cmd_ready = !q_val[q_tl];

    // The oldest queued command still waiting for its tile. No command queued before it can
    // still read the target bank: load decisions are in order and at least N+1 cycles apart, so
    // by the next one the head streams without pause, and if it uses the target bank lb keeps
    // the bank busy (a command on the other bank ahead of the previous LOAD would have blocked
    // that LOAD).
    reg                ld_found;
    reg     [PTRW-1:0] ld_idx;
    reg     [PTRW-1:0] ld_p;
    integer            k;
    always @* begin
        ld_found = 1'b0;
        ld_idx   = q_hd;
        ld_p     = q_hd;
        for (k = 0; k < QD; k = k + 1) begin
            if (!ld_found && q_need[ld_p]) begin
                ld_found = 1'b1;
                ld_idx   = ld_p;
            end
            ld_p = (ld_p == LASTQ) ? {PTRW{1'b0}} : ld_p + 1'b1;
        end
    end

    reg           ld_active;
    reg           ld_sel;
    reg  [   8:0] ld_row;
    wire          ld_bank = q_bank[ld_idx];
    wire [CW-1:0] lb_ld = ld_bank ? lb1 : lb0;
    wire          ld_go = !ld_active && ld_found && !wf_empty && lb_ld == {CW{1'b0}};

    always @(posedge clk) begin
        if (rst) begin
            q_val     <= {QD{1'b0}};
            q_need    <= {QD{1'b0}};
            q_bank    <= {QD{1'b0}};
            q_accum   <= {QD{1'b0}};
            q_uns     <= {QD{1'b0}};
            q_bf16    <= {QD{1'b0}};
            q_hd      <= {PTRW{1'b0}};
            q_tl      <= {PTRW{1'b0}};
            tail_bank <= 1'b0;
        end else begin
            if (push) begin
                q_ub[q_tl]    <= cmd_ub_addr;
                q_acc[q_tl]   <= cmd_acc_addr;
                q_rows[q_tl]  <= cmd_rows;
                q_step[q_tl]  <= (cmd_ub_stride == 8'd0) ? 8'd1 : cmd_ub_stride;
                q_accum[q_tl] <= cmd_acc;
                q_uns[q_tl]   <= cmd_unsigned;
                q_bf16[q_tl]  <= cmd_bf16;
                q_bank[q_tl]  <= tail_bank ^ cmd_load;
                q_need[q_tl]  <= cmd_load;
                q_val[q_tl]   <= 1'b1;
                tail_bank     <= tail_bank ^ cmd_load;
                q_tl          <= (q_tl == LASTQ) ? {PTRW{1'b0}} : q_tl + 1'b1;
            end
            if (ld_go) q_need[ld_idx] <= 1'b0;
            if (issue) begin
                q_ub[q_hd]   <= q_ub[q_hd] + {{(RAW - 8) {1'b0}}, q_step[q_hd]};
                q_acc[q_hd]  <= q_acc[q_hd] + 1;
                q_rows[q_hd] <= q_rows[q_hd] - 1;
            end
            if (pop) begin
                q_val[q_hd] <= 1'b0;
                q_hd        <= (q_hd == LASTQ) ? {PTRW{1'b0}} : q_hd + 1'b1;
            end
        end
    end

    // -------------------------------------------------------------- bank interlocks --
    function [CW-1:0] countdown(input [CW-1:0] cur, input set, input [CW-1:0] init);
        countdown = set ? init : (cur == {CW{1'b0}}) ? cur : cur - 1'b1;
    endfunction

    always @(posedge clk) begin
        if (rst) begin
            lb0 <= {CW{1'b0}};
            lb1 <= {CW{1'b0}};
            sb0 <= {CW{1'b0}};
            sb1 <= {CW{1'b0}};
        end else begin
            lb0 <= countdown(lb0, issue && !hd_bank, LB_WAIT);
            lb1 <= countdown(lb1, issue && hd_bank, LB_WAIT);
            sb0 <= countdown(sb0, ld_go && !ld_bank, SB_WAIT);
            sb1 <= countdown(sb1, ld_go && ld_bank, SB_WAIT);
        end
    end

    // ----------------------------------------------------------------- weight loader --
    always @(posedge clk) begin
        if (rst) begin
            ld_active <= 1'b0;
            ld_sel    <= 1'b0;
            ld_row    <= 9'd0;
        end else if (ld_go) begin
            ld_active <= 1'b1;
            ld_sel    <= ld_bank;
            ld_row    <= LAST_ROW;
        end else if (ld_active) begin
            if (ld_row == 9'd0) ld_active <= 1'b0;
            else ld_row <= ld_row - 9'd1;
        end
    end

    assign wf_row = ld_row;
    assign wf_pop = ld_active && ld_row == 9'd0;

    // Column c shifts c cycles after column 0: the weight rows through a skew line, the enable
    // and bank select (the same for every column) through their histories, bit c = c cycles ago.
    wire [WW*N-1:0] w_sk;
    wire [   N-1:0] we_sk;
    wire [   N-1:0] ws_sk;

    tpu_skew #(
        .N(N),
        .W(WW)
    ) u_skew_w (
        .clk(clk),
        .rst(rst),
        .d  (wf_rdata),
        .q  (w_sk)
    );
    generate
        if (N > 1) begin : g_wsk
            reg [N-2:0] we_h, ws_h;  // bit j: j + 1 cycles ago
            assign we_sk = {we_h, ld_active};
            assign ws_sk = {ws_h, ld_sel};
            always @(posedge clk) begin
                we_h <= rst ? {(N - 1) {1'b0}} : we_sk[N-2:0];
                ws_h <= rst ? {(N - 1) {1'b0}} : ws_sk[N-2:0];
            end
        end else begin : g_wsk1
            assign we_sk = ld_active;
            assign ws_sk = ld_sel;
        end
    endgenerate

    // ------------------------------------------------------------- activation input --
    reg v1, uns1, bank1, bf1;  // the row whose UB data arrives this cycle
    reg v2;  // the row entering array row 0 this cycle
    always @(posedge clk) begin
        if (rst) begin
            v1    <= 1'b0;
            uns1  <= 1'b0;
            bank1 <= 1'b0;
            bf1   <= 1'b0;
            v2    <= 1'b0;
        end else begin
            v1    <= issue;
            uns1  <= q_uns[q_hd];
            bank1 <= hd_bank;
            bf1   <= q_bf16[q_hd];
            v2    <= v1;
        end
    end

    // Slots without a row carry zero int8 activations, so no valid bit is needed inside the
    // array. A bf16 vector is the two rows' bytes as they are.
    reg     [AW*N-1:0] a_ext;
    integer            e;
    always @* begin
        for (e = 0; e < N; e = e + 1)
        a_ext[e*AW+:AW] = !v1 ? {AW{1'b0}} : bf1 ? ub_data[e*16+:16] :
            {{8{ub_data[e*8+7] & !uns1}}, ub_data[e*8+:8]};
    end

    reg [AW*N-1:0] a_r;
    always @(posedge clk) a_r <= rst ? {AW * N{1'b0}} : a_ext;

    // Element k enters array row k k cycles after element 0; the row's bank select and type (one
    // bit each for the whole row) follow it through their histories, bit k = the row entering
    // row k's. The array takes the type as the row enters its last row.
    wire [AW*N-1:0] a_sk;
    wire [   N-1:0] s_sk;
    tpu_skew #(
        .N(N),
        .W(AW)
    ) u_skew_a (
        .clk(clk),
        .rst(rst),
        .d  (a_r),
        .q  (a_sk)
    );
    reg [N-1:0] s_h, f_h;
    wire s_in = v1 && bank1;
    wire f_in = v1 && bf1;
    generate
        if (N > 1) begin : g_ssk
            always @(posedge clk) begin
                s_h <= rst ? {N{1'b0}} : {s_h[N-2:0], s_in};
                f_h <= rst ? {N{1'b0}} : {f_h[N-2:0], f_in};
            end
        end else begin : g_ssk1
            always @(posedge clk) begin
                s_h <= rst ? 1'b0 : s_in;
                f_h <= rst ? 1'b0 : f_in;
            end
        end
    endgenerate
    assign s_sk = s_h;

    // A bf16 row is in the array: from the cycle it enters row 0 until it leaves PE (N-1, N-1)
    // 2N-2 cycles later. It gates the array's float clock (tpu_array): an int8 stream leaves the
    // fp32 registers alone.
    localparam BW = $clog2(2 * N + 1);
    localparam integer BF_SPAN_I = 2 * N;
    localparam [BW-1:0] BF_SPAN = BF_SPAN_I[BW-1:0];
    reg [BW-1:0] bf_live;
    always @(posedge clk)
        bf_live <= rst ? {BW{1'b0}} : f_in ? BF_SPAN : bf_live - {{(BW - 1) {1'b0}}, bf_live != 0};

    // ------------------------------------------------------------------ array, output --
    wire [PW*N-1:0] p_bot;
    wire [PW*N-1:0] p_al;

    tpu_array #(
        .N (N),
        .AW(AW),
        .WW(WW),
        .PW(PW)
    ) u_array (
        .clk  (clk),
        .rst  (rst),
        .a_in (a_sk),
        .s_in (s_sk),
        .f_in (f_h[N-1]),
        .bf   (bf_live != {BW{1'b0}}),
        .w_in (w_sk),
        .w_en (we_sk),
        .w_sel(ws_sk),
        .p_out(p_bot)
    );

    tpu_skew #(
        .N(N),
        .W(PW),
        .REVERSE(1)
    ) u_deskew (
        .clk(clk),
        .rst(rst),
        .d  (p_bot),
        .q  (p_al)
    );

    reg [PW*N-1:0] acc_data_r;
    always @(posedge clk) acc_data_r <= rst ? {PW * N{1'b0}} : p_al;

    // A row's address, accumulate and bf16 bits and last-row flag follow it through LAT cycles: a
    // ring of 2^LP entries, written every cycle at ctl_wp and read LAT entries behind it. ctl_age
    // counts the cycles since reset up to LAT; until then the output is zero, as a cleared
    // pipeline's.
    localparam LP = $clog2(LAT);
    localparam integer LAT_I = LAT;
    localparam [LP-1:0] LAT_P = LAT_I[LP-1:0];
    localparam [LP:0] LAT_A = LAT_I[LP:0];
    localparam [LP-1:0] LP_ONE = 1;
    localparam [LP:0] LA_ONE = 1;
    reg  [CTW-1:0] ctl                                                             [0:(1<<LP)-1];
    reg  [ LP-1:0] ctl_wp;
    reg  [   LP:0] ctl_age;
    wire [ LP-1:0] ctl_rp = ctl_wp - LAT_P;  // written LAT cycles ago
    wire [CTW-1:0] ctl_in = {issue, pop, q_accum[q_hd], q_bf16[q_hd], q_acc[q_hd]};
    wire [CTW-1:0] ctl_out = (ctl_age == LAT_A) ? ctl[ctl_rp] : {CTW{1'b0}};
    always @(posedge clk) begin
        ctl[ctl_wp] <= ctl_in;
        if (rst) begin
            ctl_wp  <= {LP{1'b0}};
            ctl_age <= {(LP + 1) {1'b0}};
        end else begin
            ctl_wp <= ctl_wp + LP_ONE;
            if (ctl_age != LAT_A) ctl_age <= ctl_age + LA_ONE;
        end
    end

    assign acc_en         = ctl_out[RAW+3];
    assign done           = ctl_out[RAW+2];
    assign acc_accumulate = ctl_out[RAW+1];
    assign acc_bf16       = ctl_out[RAW];
    assign acc_addr       = ctl_out[RAW-1:0];
    assign acc_data       = acc_data_r;

    assign ub_en          = issue;
    assign ub_addr        = q_ub[q_hd];
    assign ub_pair        = q_bf16[q_hd];
    assign row_fire       = v2;
    assign weight_stall   = hd_valid && !issue;

    reg [IFW-1:0] inflight;  // commands accepted and not yet done
    always @(posedge clk) begin
        if (rst) inflight <= {IFW{1'b0}};
        else inflight <= inflight + {{(IFW - 1) {1'b0}}, push} - {{(IFW - 1) {1'b0}}, done};
    end
    assign busy = inflight != {IFW{1'b0}};
endmodule
