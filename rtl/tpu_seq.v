`default_nettype none
`include "tpu_isa.vh"
// Sequencer: instruction queue, validation, hardware interlocks and in-order issue (docs/isa.md
// "Validation and errors", "Execution and interlocks").
//
// Two stages. The queue head is decoded combinationally into the head register: its unit, the
// first failing static check (codes 1..4), the end of its memory range, and its footprint (the UB,
// ACC and memory ranges and the parameter registers it reads or writes). The head register is
// checked against MEM_SIZE and the weight-FIFO count (codes 5, 7, 8) and against the footprint of
// every instruction in flight, and issues to its unit when nothing conflicts; the queue refills it
// in the same cycle, so independent instructions issue one per cycle.
//
// A footprint is kept as narrow fields, each its own register: per range (UB, ACC, memory) a
// valid and a write bit and the 32-bit bounds [lo, hi), then a valid and a write bit for the
// parameter registers. Two footprints conflict when one of their ranges overlaps with at least one
// of the two writing it, or both touch the parameters and one writes them: plain 32-bit compares,
// which a simulator evaluates cheaply every cycle.
//
// In flight: one instruction each in the activate and store units, up to LD_SLOTS loads and
// MXU_SLOTS MATMULs (each freed in order by its unit's done pulses), and one ZERO in the load
// unit's zero engine, which completes on its own, out of order with the loads. A unit's done
// frees its record in the same cycle, so a dependent instruction issues in the cycle its producer
// completes: every unit signals done no earlier than the clock edge of its last write, and a
// newly issued unit reads or writes at the earliest one cycle later. The load unit may hold
// fewer than LD_SLOTS loads (its cmd_ready says when it takes one), never more. The MXU and the
// load unit's RD_ACC share the accumulators' write port: an RD_ACC waits until no MATMUL is in
// flight, and a MATMUL while an RD_ACC is (a unit stall, whatever their rows).
//
// Errors: a failing check at the head, or a unit's fault, stops the sequencer and records the
// code and the instruction's index (the oldest instruction wins); nothing issues after it, the
// queue is emptied and refuses pushes until rst. STATUS.ERROR (and so irq) rises once the
// instructions in flight have completed: only they can fault, so ERROR_CODE and ERROR_PC are
// final by then, and software sees a core that has stopped. Likewise HALT, once everything before
// it has completed, sets HALTED, and nothing issues until the next push clears it.
module tpu_seq #(
    parameter N = 16,
    parameter UB_ROWS = 16384,
    parameter ACC_ROWS = 4096,
    parameter WFIFO_TILES = 4,
    parameter IQ_DEPTH = 32,
    parameter LD_SLOTS = 4
) (
    input wire clk,
    input wire rst,
    // instruction push
    input wire iq_valid,
    output wire iq_ready,
    input wire [`TPU_INSN_W-1:0] iq_data,
    input wire [31:0] mem_size,
    // fields of the head instruction, shared by the units' command ports
    output wire [`TPU_INSN_OP_W-1:0] cmd_op,
    output wire [`TPU_F_W-1:0] cmd_flags,
    output wire [`TPU_INSN_ROWS_W-1:0] cmd_rows,
    output wire [`TPU_INSN_A_W-1:0] cmd_a,
    output wire [`TPU_INSN_B_W-1:0] cmd_b,
    output wire [`TPU_INSN_LEN_W-1:0] cmd_len,
    output wire [`TPU_INSN_STRIDE_W-1:0] cmd_stride,
    // load unit: RD_HOST, RD_WEIGHT, RD_PARAMS, RD_ACC
    output wire ld_valid,
    input wire ld_ready,
    input wire ld_done,
    input wire ld_fault,
    // the load unit's zero engine: ZERO
    output wire zr_valid,
    input wire zr_ready,
    input wire zr_done,
    // MXU: MATMUL
    output wire mx_valid,
    input wire mx_ready,
    input wire mx_done,
    // activate unit: ACTIVATE
    output wire ac_valid,
    input wire ac_ready,
    input wire ac_done,
    // store unit: WR_HOST
    output wire st_valid,
    input wire st_ready,
    input wire st_done,
    input wire st_fault,
    // status
    output wire busy,
    output reg halted,
    output wire error,  // stopped on an error, nothing left in flight
    output reg [`TPU_FAULT_W-1:0] error_code,
    output reg [31:0] error_pc,
    output wire [31:0] iq_free,
    output wire [`TPU_INSN_OP_W-1:0] head_op,  // the head instruction's opcode, 0 when none
    output wire issue,  // an instruction issues (SYNC, HALT: retires) this cycle
    // performance events
    output wire stall_hazard,
    output wire stall_unit,
    output wire stall_issue,
    output wire sync_retire,
    output wire [2:0] retired
);
    // The fields' widths (rtl/tpu_isa.toml); footprint bounds are memory addresses (field a).
    localparam ROWS_W = `TPU_INSN_ROWS_W, A_W = `TPU_INSN_A_W, B_W = `TPU_INSN_B_W;
    localparam LEN_W = `TPU_INSN_LEN_W, STRIDE_W = `TPU_INSN_STRIDE_W;
    localparam PH_W = `TPU_POOL_PH_W, PW_W = `TPU_POOL_PW_W, PSTEP_W = `TPU_POOL_STEP_W;
    localparam PITCH_W = `TPU_POOL_PITCH_W;
    localparam STEP_W = 8;  // a UB row step (MATMUL's stride, ACTIVATE's len): the MXU's 8 bits
    localparam UBN_W = ROWS_W + STEP_W;  // UB rows a range spans
    localparam POOL_W = (ROWS_W + PSTEP_W > PH_W + PITCH_W ? ROWS_W + PSTEP_W : PH_W + PITCH_W) + 2;  // ACC rows, POOL
    localparam MEMHI_W = ROWS_W + STRIDE_W + 1;  // a + (rows - 1) * stride + len
    localparam integer N_I = N;
    localparam [LEN_W-1:0] LEN_N = N_I[LEN_W-1:0];
    localparam [LEN_W-1:0] LEN_4N = LEN_N << 2;
    localparam [LEN_W-1:0] LEN_2N = LEN_N << 1;
    localparam [LEN_W-1:0] LEN_3N = LEN_N + LEN_2N;
    localparam [ROWS_W-1:0] ROWS_N = N_I[ROWS_W-1:0];
    localparam [ROWS_W-1:0] ROWS_1 = 1;
    localparam [STRIDE_W-1:0] MM_STRIDE_MAX = (1 << STEP_W) - 1;
    localparam [A_W:0] UB_LIM = UB_ROWS;
    localparam [A_W:0] ACC_LIM = ACC_ROWS;
    localparam integer TILES_I = WFIFO_TILES;
    localparam [8:0] TILES = TILES_I[8:0];
    localparam CW = $clog2(IQ_DEPTH + 1);
    localparam integer IQ_DEPTH_I = IQ_DEPTH;
    localparam [31:0] IQ_DEPTH_W = IQ_DEPTH_I;

    // ------------------------------------------------------------------ queue
    wire push = iq_valid && iq_ready;
    wire q_full;
    wire q_empty;
    wire [CW-1:0] q_count;
    wire [`TPU_INSN_W-1:0] q;
    wire q_pop;

    // The queue is emptied at the edge an error is raised and held in reset after it.
    reg stop;  // an error was raised
    wire raise;  // one is raised this cycle
    tpu_fifo #(
        .W(`TPU_INSN_W),
        .DEPTH(IQ_DEPTH)
    ) u_iq (
        .clk  (clk),
        .rst  (rst || stop || raise),
        .push (push),
        .din  (iq_data),
        .full (q_full),
        .pop  (q_pop),
        .dout (q),
        .empty(q_empty),
        .count(q_count)
    );

    assign iq_ready = !q_full && !stop;
    assign iq_free  = IQ_DEPTH_W - {{(32 - CW) {1'b0}}, q_count};

    // ------------------------------------------------------ decode of the queue head
    wire [`TPU_INSN_OP_W-1:0] d_op = q[`TPU_INSN_OP];
    wire [`TPU_INSN_FLAGS_W-1:0] d_flags = q[`TPU_INSN_FLAGS];
    wire [`TPU_INSN_ROWS_W-1:0] d_rows = q[`TPU_INSN_ROWS];
    wire [`TPU_INSN_A_W-1:0] d_a = q[`TPU_INSN_A];
    wire [`TPU_INSN_B_W-1:0] d_b = q[`TPU_INSN_B];
    wire [`TPU_INSN_LEN_W-1:0] d_len = q[`TPU_INSN_LEN];
    wire [`TPU_INSN_STRIDE_W-1:0] d_stride = q[`TPU_INSN_STRIDE];

    wire d_rdh = d_op == `TPU_OP_RD_HOST;
    wire d_rdw = d_op == `TPU_OP_RD_WEIGHT;
    wire d_rdp = d_op == `TPU_OP_RD_PARAMS;
    wire d_mm = d_op == `TPU_OP_MATMUL;
    wire d_act = d_op == `TPU_OP_ACTIVATE;
    wire d_wr = d_op == `TPU_OP_WR_HOST;
    wire d_sync = d_op == `TPU_OP_SYNC;
    wire d_halt = d_op == `TPU_OP_HALT;
    wire d_zero = d_op == `TPU_OP_ZERO;
    wire d_rda = d_op == `TPU_OP_RD_ACC;
    wire d_src_acc = d_flags[`TPU_F_SRC_ACC_BIT];
    wire d_pool = d_flags[`TPU_F_POOL_BIT];
    wire d_bf16 = d_flags[`TPU_F_BF16_BIT];
    // ACTIVATE.POOL's window, from the stride field.
    wire [PH_W-1:0] d_ph = d_stride[`TPU_POOL_PH];
    wire [PW_W-1:0] d_pw = d_stride[`TPU_POOL_PW];
    wire [PSTEP_W-1:0] d_pstep = d_stride[`TPU_POOL_STEP];
    wire [PITCH_W-1:0] d_pitch = d_stride[`TPU_POOL_PITCH];

    wire d_len_n = d_len != 0 && d_len <= (d_bf16 ? LEN_2N : LEN_N);  // 1..N (BF16: 2N)
    wire d_len_4n = d_len >= 4 && d_len <= LEN_4N && d_len[1:0] == 2'b00;  // 4..4N, x4
    wire d_len_bus = d_len != 0 && d_len <= LEN_4N;  // 1..4N
    // RD_HOST, WR_HOST from UB: UB rows per memory row, ceil(len / N) (1..4 for a len that
    // passes).
    wire [2:0] d_span =
        3'd1 + {2'd0, d_len > LEN_N} + {2'd0, d_len > LEN_2N} + {2'd0, d_len > LEN_3N};
    wire d_ab_zero = d_len == 0 && d_stride == 0;
    wire d_len_step = d_len < 1 << STEP_W;  // ACTIVATE: the UB row step of its output rows
    reg d_bad;
    // Flags an opcode does not take (TPU_OP_<op>_FLAGS) are bad operands; WR_HOST from UB (without
    // SRC_ACC) takes none.
    always @* begin
        case (1'b1)
            d_rdh: d_bad = (d_flags & ~`TPU_OP_RD_HOST_FLAGS) != 0 || d_rows == 0 || !d_len_bus;
            d_rdw:
            d_bad = (d_flags & ~`TPU_OP_RD_WEIGHT_FLAGS) != 0 || d_b != 0
                           || d_rows == 0 || d_rows > ROWS_N || !d_len_n;
            d_rdp:
            d_bad = (d_flags & ~`TPU_OP_RD_PARAMS_FLAGS) != 0 || d_b != 0
                           || d_rows != 3 || !d_len_4n;
            d_mm:
            d_bad = (d_flags & ~`TPU_OP_MATMUL_FLAGS) != 0 || d_rows == 0 || d_len != 0
                          || d_stride > MM_STRIDE_MAX || (d_bf16 && d_flags[`TPU_F_UNSIGNED_BIT]);
            d_act:
            d_bad = (d_flags & ~`TPU_OP_ACTIVATE_FLAGS) != 0 || d_rows == 0 || !d_len_step
                          || (d_pool ? d_ph == 0 || d_pw == 0 || d_pstep == 0
                          : d_stride != 0);
            d_zero:
            d_bad = (d_flags & ~`TPU_OP_ZERO_FLAGS) != 0 || d_rows == 0 || d_a != 0 || !d_ab_zero;
            d_rda: d_bad = (d_flags & ~`TPU_OP_RD_ACC_FLAGS) != 0 || d_rows == 0 || !d_len_4n;
            d_wr:
            d_bad = (d_flags & ~(d_src_acc ? `TPU_OP_WR_HOST_FLAGS : {`TPU_INSN_FLAGS_W{1'b0}})) != 0
                          || d_rows == 0 || !(d_src_acc ? d_len_4n : d_len_bus);
            d_sync:
            d_bad = (d_flags & ~`TPU_OP_SYNC_FLAGS) != 0 || |{d_rows, d_a, d_b, d_len, d_stride};
            d_halt:
            d_bad = (d_flags & ~`TPU_OP_HALT_FLAGS) != 0 || |{d_rows, d_a, d_b, d_len, d_stride};
            default: d_bad = 1'b0;  // an illegal opcode, reported as such
        endcase
    end

    // Ranges. UB: RD_HOST, ZERO and WR_HOST from UB use row b, MATMUL and ACTIVATE row a; an
    // RD_HOST or a WR_HOST from UB spans rows*S rows, S = ceil(len/N); a MATMUL or an ACTIVATE
    // (rows-1)*step+1 rows, +2 with BF16 (the step is MATMUL's stride, ACTIVATE's len, 0 meaning
    // 1). ACC: from
    // row b, rows rows, or for ACTIVATE.POOL (rows-1)*STEP + (PH-1)*PITCH + PW. (rows 0 fails
    // earlier.)
    wire [ROWS_W-1:0] d_rows_m1 = d_rows - ROWS_1;
    wire [STEP_W-1:0] d_step_f = d_mm ? d_stride[STEP_W-1:0] : d_len[STEP_W-1:0];
    wire [STEP_W-1:0] d_ub_step = (d_step_f == 0) ? 1 : d_step_f;
    wire d_ub_v = d_rdh || d_mm || d_act || d_zero || (d_wr && !d_src_acc);
    wire d_ub_w = d_rdh || d_act || d_zero;
    wire [A_W-1:0] d_ub_lo = (d_rdh || d_wr || d_zero) ? {{(A_W - B_W) {1'b0}}, d_b} : d_a;
    wire [UBN_W-1:0] d_ub_n = (d_mm || d_act) ?
        {{STEP_W{1'b0}}, d_rows_m1} * {{ROWS_W{1'b0}}, d_ub_step} + (d_bf16 ? 2 : 1) :
        (d_rdh || d_wr) ? {{STEP_W{1'b0}}, d_rows} * {{(UBN_W - 3) {1'b0}}, d_span} :
        {{STEP_W{1'b0}}, d_rows};
    wire [A_W:0] d_ub_hi = {1'b0, d_ub_lo} + {{(A_W + 1 - UBN_W) {1'b0}}, d_ub_n};
    wire d_acc_v = d_mm || d_act || (d_wr && d_src_acc) || d_rda;
    wire [ROWS_W+PSTEP_W-1:0] d_pool_steps = {{PSTEP_W{1'b0}}, d_rows_m1} * {{ROWS_W{1'b0}}, d_pstep};
    wire [PH_W-1:0] d_ph_m1 = d_ph - 1;
    wire [PH_W+PITCH_W-1:0] d_pool_pitches = {{PITCH_W{1'b0}}, d_ph_m1} * {{PH_W{1'b0}}, d_pitch};
    wire [POOL_W-1:0] d_acc_n = (d_act && d_pool) ?
        {{(POOL_W - ROWS_W - PSTEP_W) {1'b0}}, d_pool_steps} +
        {{(POOL_W - PH_W - PITCH_W) {1'b0}}, d_pool_pitches} + {{(POOL_W - PW_W) {1'b0}}, d_pw} :
        {{(POOL_W - ROWS_W) {1'b0}}, d_rows};
    wire [A_W:0] d_acc_hi = {{(A_W + 1 - B_W) {1'b0}}, d_b} + {{(A_W + 1 - POOL_W) {1'b0}}, d_acc_n};
    wire d_mem_v = d_rdh || d_rdw || d_rdp || d_wr || d_rda;
    wire [MEMHI_W-1:0] d_mem_hi = {{(MEMHI_W - A_W) {1'b0}}, d_a} +
        {{(MEMHI_W - ROWS_W) {1'b0}}, d_rows_m1} * {{(MEMHI_W - STRIDE_W) {1'b0}}, d_stride} +
        {{(MEMHI_W - LEN_W) {1'b0}}, d_len};
    // ACTIVATE reads mult and shift always, bias only with BIAS; WR_HOST reads bias.
    wire d_prm_v = d_rdp || d_act || (d_wr && d_src_acc && d_flags[`TPU_F_BIAS_BIT]);

    reg [`TPU_FAULT_W-1:0] d_code;
    always @* begin
        if (!(d_rdh || d_rdw || d_rdp || d_mm || d_act || d_wr || d_sync || d_halt || d_zero || d_rda))
            d_code = `TPU_FAULT_ILLEGAL_OPCODE;
        else if (d_bad) d_code = `TPU_FAULT_BAD_OPERAND;
        else if (d_ub_v && d_ub_hi > UB_LIM) d_code = `TPU_FAULT_UB_RANGE;
        else if (d_acc_v && d_acc_hi > ACC_LIM) d_code = `TPU_FAULT_ACC_RANGE;
        else d_code = `TPU_FAULT_NONE;
    end

    // Only the footprints of instructions that pass every check are ever compared, and those
    // have their upper bounds within UB_ROWS, ACC_ROWS and MEM_SIZE: A_W (32) bits each. Writers: UB
    // RD_HOST, ZERO and ACTIVATE, ACC MATMUL and RD_ACC, memory WR_HOST, parameters RD_PARAMS.

    // ------------------------------------------------------------- head register
    reg h_valid;
    reg [31:0] h_pc;
    reg [`TPU_INSN_OP_W-1:0] h_op;
    reg [`TPU_F_W-1:0] h_flags;
    reg [ROWS_W-1:0] h_rows;
    reg [A_W-1:0] h_a;
    reg [B_W-1:0] h_b;
    reg [LEN_W-1:0] h_len;
    reg [STRIDE_W-1:0] h_stride;
    reg h_ld;  // unit classes
    reg h_mm;
    reg h_act;
    reg h_wr;
    reg h_zr;
    reg h_sys;
    reg h_rdw;
    reg h_rda;
    reg h_halt;
    reg [`TPU_FAULT_W-1:0] h_code;
    reg [MEMHI_W-1:0] h_mem_hi;  // end of the memory range, for the MEM_SIZE check
    // The head's footprint.
    reg h_ub_v, h_ub_w, h_acc_v, h_acc_w, h_mem_v, h_mem_w, h_prm_v, h_prm_w;
    reg [A_W-1:0] h_ub_lo, h_ub_hi, h_acc_lo, h_acc_hi, h_mem_lo, h_mem_hi32;
    reg [31:0] next_pc;  // index of the next instruction to enter the head register

    assign cmd_op = h_op;
    assign cmd_flags = h_flags;
    assign cmd_rows = h_rows;
    assign cmd_a = h_a;
    assign cmd_b = h_b;
    assign cmd_len = h_len;
    assign cmd_stride = h_stride;
    assign head_op = h_valid ? h_op : {`TPU_INSN_OP_W{1'b0}};

    // ------------------------------------------------------ in-flight records
    localparam MXU_SLOTS = 4;  // a power of two: the slot pointers wrap naturally
    localparam MXP = $clog2(MXU_SLOTS);
    localparam [MXP-1:0] MXP_ONE = 1;
    // Load slots: any number, the pointers wrap explicitly.
    localparam LDP = (LD_SLOTS > 1) ? $clog2(LD_SLOTS) : 1;
    localparam integer LD_LAST_I = LD_SLOTS - 1;
    localparam [LDP-1:0] LD_LAST = LD_LAST_I[LDP-1:0];
    localparam [LDP-1:0] LDP_ONE = 1;
    localparam [LD_SLOTS-1:0] LD_BIT0 = 1;
    reg [LD_SLOTS-1:0] ld_v;
    reg [LD_SLOTS-1:0] ld_rda;  // the slot's load is an RD_ACC
    reg [31:0] ld_pcs[0:LD_SLOTS-1];
    reg [LDP-1:0] ld_wp;  // next slot to fill
    reg [LDP-1:0] ld_rp;  // oldest load, freed by the next ld_done
    wire [31:0] ld_pc = ld_pcs[ld_rp];
    reg st_v;
    reg [31:0] st_pc;
    reg ac_v;
    reg zr_v;
    reg [MXU_SLOTS-1:0] mx_v;
    reg [MXP-1:0] mx_wp;  // next slot to fill
    reg [MXP-1:0] mx_rp;  // oldest MATMUL, freed by the next mx_done

    // The footprint of every instruction in flight, one record each: the loads' slots in records
    // 0..LD_SLOTS-1, the MATMULs' in the next MXU_SLOTS, then the store's, the activate's and the
    // ZERO's. An issuing instruction copies the head's footprint into its unit's record.
    localparam NREC = LD_SLOTS + MXU_SLOTS + 3;
    localparam RW = $clog2(NREC);
    localparam integer MX_REC_I = LD_SLOTS;
    localparam integer ST_REC_I = LD_SLOTS + MXU_SLOTS;
    localparam integer AC_REC_I = ST_REC_I + 1;
    localparam integer ZR_REC_I = ST_REC_I + 2;
    localparam [RW-1:0] MX_REC = MX_REC_I[RW-1:0];
    localparam [RW-1:0] ST_REC = ST_REC_I[RW-1:0];
    localparam [RW-1:0] AC_REC = AC_REC_I[RW-1:0];
    localparam [RW-1:0] ZR_REC = ZR_REC_I[RW-1:0];
    // The records of each unit's instructions.
    localparam [NREC-1:0] LD_RECS = {{(NREC - LD_SLOTS) {1'b0}}, {LD_SLOTS{1'b1}}};
    localparam [NREC-1:0] MX_RECS = {3'b000, {MXU_SLOTS{1'b1}}, {LD_SLOTS{1'b0}}};
    localparam [NREC-1:0] ST_RECS = {3'b001, {(NREC - 3) {1'b0}}};
    localparam [NREC-1:0] AC_RECS = {3'b010, {(NREC - 3) {1'b0}}};
    localparam [NREC-1:0] ZR_RECS = {3'b100, {(NREC - 3) {1'b0}}};
    reg [NREC-1:0] r_ub_v, r_ub_w, r_acc_v, r_acc_w, r_mem_v, r_mem_w, r_prm_v, r_prm_w;
    reg [A_W-1:0] r_ub_lo[0:NREC-1];
    reg [A_W-1:0] r_ub_hi[0:NREC-1];
    reg [A_W-1:0] r_acc_lo[0:NREC-1];
    reg [A_W-1:0] r_acc_hi[0:NREC-1];
    reg [A_W-1:0] r_mem_lo[0:NREC-1];
    reg [A_W-1:0] r_mem_hi[0:NREC-1];

    // Records still occupied this cycle (a done frees its record at once).
    wire [LD_SLOTS-1:0] ld_busy = ld_v & ~({LD_SLOTS{ld_done}} & (LD_BIT0 << ld_rp));
    wire st_busy = st_v && !st_done;
    wire ac_busy = ac_v && !ac_done;
    wire zr_busy = zr_v && !zr_done;
    wire [MXU_SLOTS-1:0] mx_busy = mx_v & ~({{(MXU_SLOTS - 1) {1'b0}}, mx_done} << mx_rp);
    // The ACC write port is the MXU's and RD_ACC's: neither issues while the other is in flight.
    wire rda_busy = (ld_busy & ld_rda) != {LD_SLOTS{1'b0}};
    wire mx_any = mx_busy != {MXU_SLOTS{1'b0}};
    wire idle = ld_busy == {LD_SLOTS{1'b0}} && !st_busy && !ac_busy && !zr_busy &&
        mx_busy == {MXU_SLOTS{1'b0}};

    // Hazards of the head against the other units' instructions in flight. Loads are exempt
    // among themselves like MATMULs: they read memory, which no load writes, and ACC rows only in
    // RD_ACC's read-modify-write as they write them, and they write UB rows, ACC rows, tiles or
    // parameters in program order (the load unit writes back in order), so a younger load
    // overwriting an older one's rows leaves the younger one's data, as in order.
    // An ACTIVATE, WR_HOST or ZERO is not compared with its own unit's record either: that unit
    // takes it only once idle (or finishing). A ZERO and a load are compared: the zero engine
    // writes its rows at once, not in order with the loads' responses.
    wire [NREC-1:0] rec_busy = {zr_busy, ac_busy, st_busy, mx_busy, ld_busy};
    wire [NREC-1:0] exempt = ({NREC{h_ld}} & LD_RECS) | ({NREC{h_mm}} & MX_RECS) |
        ({NREC{h_wr}} & ST_RECS) | ({NREC{h_act}} & AC_RECS) | ({NREC{h_zr}} & ZR_RECS);
    wire [NREC-1:0] cand = rec_busy & ~exempt;
    // Per record: both touch the range (or the parameters) and one of them writes it.
    wire [NREC-1:0] ub_pair = {NREC{h_ub_v}} & r_ub_v & ({NREC{h_ub_w}} | r_ub_w);
    wire [NREC-1:0] acc_pair = {NREC{h_acc_v}} & r_acc_v & ({NREC{h_acc_w}} | r_acc_w);
    wire [NREC-1:0] mem_pair = {NREC{h_mem_v}} & r_mem_v & ({NREC{h_mem_w}} | r_mem_w);
    wire [NREC-1:0] prm_pair = {NREC{h_prm_v}} & r_prm_v & ({NREC{h_prm_w}} | r_prm_w);
    wire [NREC-1:0] conf;  // the head's footprint and record g's conflict
    genvar g;
    generate
        for (g = 0; g < NREC; g = g + 1) begin : g_rec
            assign conf[g] = prm_pair[g] ||
                (ub_pair[g] && h_ub_lo < r_ub_hi[g] && r_ub_lo[g] < h_ub_hi) ||
                (acc_pair[g] && h_acc_lo < r_acc_hi[g] && r_acc_lo[g] < h_acc_hi) ||
                (mem_pair[g] && h_mem_lo < r_mem_hi[g] && r_mem_lo[g] < h_mem_hi32);
        end
    endgenerate
    wire hazard = (cand & conf) != {NREC{1'b0}};

    // Weight-FIFO tiles counted at issue: RD_WEIGHTs issued minus MATMUL LOADs issued.
    reg [8:0] wf_count;
    wire h_load = h_mm && h_flags[`TPU_F_LOAD_BIT];

    reg [`TPU_FAULT_W-1:0] h_err;
    always @* begin
        if (h_code != `TPU_FAULT_NONE) h_err = h_code;
        else if (h_mem_v && h_mem_hi > {{(MEMHI_W - 32) {1'b0}}, mem_size})
            h_err = `TPU_FAULT_MEM_RANGE;
        else if (h_load && wf_count == 9'd0) h_err = `TPU_FAULT_WFIFO_EMPTY;
        else if (h_rdw && wf_count == TILES) h_err = `TPU_FAULT_WFIFO_FULL;
        else h_err = `TPU_FAULT_NONE;
    end

    // ------------------------------------------------------------------ errors
    wire ld_err = ld_done && ld_fault;
    wire st_err = st_done && st_fault;
    wire head_err = h_valid && !halted && !stop && h_err != `TPU_FAULT_NONE;
    reg [`TPU_FAULT_W-1:0] new_code;
    reg [31:0] new_pc;
    always @* begin
        if (ld_err && !(st_err && st_pc < ld_pc)) begin
            new_code = `TPU_FAULT_MEM_FAULT;
            new_pc   = ld_pc;
        end else if (st_err) begin
            new_code = `TPU_FAULT_MEM_FAULT;
            new_pc   = st_pc;
        end else begin
            new_code = h_err;
            new_pc   = h_pc;
        end
    end
    assign raise = (ld_err || st_err || head_err) && (!stop || new_pc < error_pc);

    // ------------------------------------------------------------------- issue
    wire go = h_valid && !halted && !stop && !ld_err && !st_err && h_err == `TPU_FAULT_NONE;
    assign ld_valid = go && h_ld && ld_busy != {LD_SLOTS{1'b1}} && !(h_rda && mx_any) && !hazard;
    assign mx_valid = go && h_mm && mx_busy != {MXU_SLOTS{1'b1}} && !rda_busy && !hazard;
    assign ac_valid = go && h_act && !ac_busy && !hazard;
    assign st_valid = go && h_wr && !st_busy && !hazard;
    assign zr_valid = go && h_zr && !zr_busy && !hazard;
    wire ld_issue = ld_valid && ld_ready;
    wire mx_issue = mx_valid && mx_ready;
    wire ac_issue = ac_valid && ac_ready;
    wire st_issue = st_valid && st_ready;
    wire zr_issue = zr_valid && zr_ready;
    wire sys_issue = go && h_sys && idle;
    assign issue = ld_issue || mx_issue || ac_issue || st_issue || zr_issue || sys_issue;
    assign q_pop = !q_empty && (!h_valid || issue) && !stop && !raise;

    wire in_flight = ld_v != {LD_SLOTS{1'b0}} || st_v || ac_v || zr_v || mx_v != {MXU_SLOTS{1'b0}};
    assign busy = !q_empty || h_valid || in_flight;
    assign error = stop && !in_flight;
    assign stall_hazard = go && !issue && (h_sys || hazard);
    assign stall_unit = go && !issue && !h_sys && !hazard;
    assign stall_issue = busy && q_empty && !h_valid && !stop;
    assign sync_retire = sys_issue && !h_halt;
    assign retired = {2'd0, ld_done && !ld_fault} + {2'd0, st_done && !st_fault}
                   + {2'd0, ac_done} + {2'd0, mx_done} + {2'd0, zr_done} + {2'd0, sys_issue};

    always @(posedge clk) begin
        if (rst) begin
            h_valid <= 1'b0;
            next_pc <= 32'd0;
            halted <= 1'b0;
            stop <= 1'b0;
            error_code <= `TPU_FAULT_NONE;
            error_pc <= 32'd0;
            wf_count <= 9'd0;
        end else begin
            if (raise) begin
                stop <= 1'b1;
                error_code <= new_code;
                error_pc <= new_pc;
            end
            if (raise || stop) h_valid <= 1'b0;
            else if (q_pop) h_valid <= 1'b1;
            else if (issue) h_valid <= 1'b0;
            if (q_pop) next_pc <= next_pc + 32'd1;
            if (sys_issue && h_halt) halted <= 1'b1;
            else if (push) halted <= 1'b0;
            if (ld_issue && h_rdw) wf_count <= wf_count + 9'd1;
            else if (mx_issue && h_load) wf_count <= wf_count - 9'd1;
        end
    end

    // The head register's contents are qualified by h_valid.
    always @(posedge clk) begin
        if (q_pop) begin
            h_pc <= next_pc;
            h_op <= d_op;
            h_flags <= d_flags[`TPU_F_W-1:0];
            h_rows <= d_rows;
            h_a <= d_a;
            h_b <= d_b;
            h_len <= d_len;
            h_stride <= d_stride;
            h_ld <= d_rdh || d_rdw || d_rdp || d_rda;
            h_mm <= d_mm;
            h_act <= d_act;
            h_wr <= d_wr;
            h_zr <= d_zero;
            h_sys <= d_sync || d_halt;
            h_rdw <= d_rdw;
            h_rda <= d_rda;
            h_halt <= d_halt;
            h_code <= d_code;
            h_mem_hi <= d_mem_hi;
            h_ub_v <= d_ub_v;
            h_ub_w <= d_ub_w;
            h_ub_lo <= d_ub_lo;
            h_ub_hi <= d_ub_hi[A_W-1:0];
            h_acc_v <= d_acc_v;
            h_acc_w <= d_mm || d_rda;
            h_acc_lo <= {{(A_W - B_W) {1'b0}}, d_b};
            h_acc_hi <= d_acc_hi[A_W-1:0];
            h_mem_v <= d_mem_v;
            h_mem_w <= d_wr;
            h_mem_lo <= d_a;
            h_mem_hi32 <= d_mem_hi[A_W-1:0];
            h_prm_v <= d_prm_v;
            h_prm_w <= d_rdp;
        end
    end

    always @(posedge clk) begin
        if (rst) begin
            ld_v  <= {LD_SLOTS{1'b0}};
            ld_wp <= {LDP{1'b0}};
            ld_rp <= {LDP{1'b0}};
            st_v  <= 1'b0;
            ac_v  <= 1'b0;
            zr_v  <= 1'b0;
            mx_v  <= {MXU_SLOTS{1'b0}};
            mx_wp <= {MXP{1'b0}};
            mx_rp <= {MXP{1'b0}};
        end else begin
            // A load fills slot ld_wp, which is free or being freed this cycle.
            ld_v <= ld_busy | ({LD_SLOTS{ld_issue}} & (LD_BIT0 << ld_wp));
            if (ld_issue) ld_wp <= (ld_wp == LD_LAST) ? {LDP{1'b0}} : ld_wp + LDP_ONE;
            if (ld_done) ld_rp <= (ld_rp == LD_LAST) ? {LDP{1'b0}} : ld_rp + LDP_ONE;
            if (st_issue) st_v <= 1'b1;
            else if (st_done) st_v <= 1'b0;
            if (ac_issue) ac_v <= 1'b1;
            else if (ac_done) ac_v <= 1'b0;
            if (zr_issue) zr_v <= 1'b1;
            else if (zr_done) zr_v <= 1'b0;
            // A MATMUL fills slot mx_wp, which is free or being freed this cycle.
            mx_v <= mx_busy | ({{(MXU_SLOTS - 1) {1'b0}}, mx_issue} << mx_wp);
            if (mx_issue) mx_wp <= mx_wp + MXP_ONE;
            if (mx_done) mx_rp <= mx_rp + MXP_ONE;
        end
    end

    // One instruction issues per cycle at most: its unit's record takes the head's footprint.
    wire rec_we = ld_issue || mx_issue || st_issue || ac_issue || zr_issue;
    wire [RW-1:0] rec_wi = ld_issue ? {{(RW - LDP) {1'b0}}, ld_wp} :
        mx_issue ? MX_REC + {{(RW - MXP) {1'b0}}, mx_wp} : st_issue ? ST_REC :
        ac_issue ? AC_REC : ZR_REC;
    always @(posedge clk) begin
        if (rec_we) begin
            r_ub_v[rec_wi]   <= h_ub_v;
            r_ub_w[rec_wi]   <= h_ub_w;
            r_ub_lo[rec_wi]  <= h_ub_lo;
            r_ub_hi[rec_wi]  <= h_ub_hi;
            r_acc_v[rec_wi]  <= h_acc_v;
            r_acc_w[rec_wi]  <= h_acc_w;
            r_acc_lo[rec_wi] <= h_acc_lo;
            r_acc_hi[rec_wi] <= h_acc_hi;
            r_mem_v[rec_wi]  <= h_mem_v;
            r_mem_w[rec_wi]  <= h_mem_w;
            r_mem_lo[rec_wi] <= h_mem_lo;
            r_mem_hi[rec_wi] <= h_mem_hi32;
            r_prm_v[rec_wi]  <= h_prm_v;
            r_prm_w[rec_wi]  <= h_prm_w;
        end
        if (ld_issue) begin
            ld_pcs[ld_wp] <= h_pc;
            ld_rda[ld_wp] <= h_rda;
        end
        if (st_issue) st_pc <= h_pc;
    end
endmodule
