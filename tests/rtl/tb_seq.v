`default_nettype none
`include "tpu_isa.vh"
`timescale 1ns / 1ps
// tpu_seq with fake units and a cycle-exact reference of docs/isa.md's validation and
// interlocks. The fake activate and store units and the load unit's zero engine take a command
// whenever their random ready is high and pulse done (store: with fault when the test asks)
// after a random delay; the fake load unit and MXU queue up to 6 commands each and complete them
// in order after random delays (loads with fault when the test asks).
//
// Every cycle the bench computes from its own model (the instructions in flight, the head, the
// weight-FIFO count, ERROR/HALTED) and the footprints of rtl/tpu_isa.toml (the generated
// tpu_footprint.vh: so this bench checks tpu_seq's own interlock logic against them) what the
// sequencer must do and compares: head register
// loaded exactly one cycle after the push (or after the previous head issues), the head's
// command fields, each unit's cmd_valid (so no issue with a RAW/WAR/WAW overlap on UB, ACC,
// memory or parameters with another unit's instruction in flight, MATMULs exempt among
// themselves, and so are loads, but not a load and a ZERO; footprints of strided MATMULs,
// ACTIVATEs with a UB row step, ACTIVATE.POOL windows, wide RD_HOSTs and WR_HOSTs and ZEROs;
// at most 1 activate/store/ZERO, 4 loads and 4 MATMULs in flight (the sequencer's limits, as the
// fake units would take more); and no cycle lost: a
// held instruction issues in the cycle its blocker's done arrives), SYNC/HALT waiting for
// everything, the issue pulse, stall/retire events, iq_ready, IQ_FREE, BUSY, HALTED (set by HALT,
// nothing issues until the next push), ERROR_CODE/ERROR_PC (first failing check in order, or
// MEM_FAULT of a load/store; the oldest instruction wins; the queue is emptied) and ERROR (once
// the instructions in flight have completed).
//
// Programs: directed error cases for every code and the check order (each code's expected value
// is written here by hand and must match the model too); random valid programs over small
// address ranges, in four timing phases; random programs with malformed instructions; random
// faults; HALT held until the next push; four MATMULs issuing on consecutive cycles; loads
// filling all four slots; an older fault overriding a younger validation error; an older load
// fault winning over a younger one; a ZERO and a load on the same rows held back both ways, on
// other rows overlapping; an RD_HOST of len > N (ISA 1.2) holding back a MATMUL and a ZERO on
// the last of its rows * ceil(len / N) UB rows, not one on the row after; random RD_HOSTs of len
// up to 4N. ISA 1.2's ACTIVATE step and wide WR_HOST: ACTIVATE len 255 ok and 256 BAD_OPERAND
// (with and without POOL), UB_RANGE at (rows-1)*step + 1; WR_HOST from UB len N+1 and 4N ok,
// 4N+1 BAD_OPERAND, UB_RANGE at rows * ceil(len / N); an ACTIVATE with a step holding back a
// MATMUL on its last output row and a WR_HOST on a row between two of its output rows (its
// footprint is the whole range), not a ZERO on the row after; a wide WR_HOST holding back an
// ACTIVATE on its last UB row, not a ZERO on the row after; random ACTIVATEs with steps and
// WR_HOSTs of len up to 4N in the reference model; ISA 1.4's RD_ACC, a load writing ACC rows,
// in the random programs and its checks, with the ACC write port it shares with the MXU (an
// RD_ACC waits for every MATMUL in flight and a MATMUL for every RD_ACC). Coverage: each hazard kind that can occur between units (UB RAW/WAR/WAW, ACC RAW/WAR,
// memory RAW/WAR, parameter RAW/WAR) must have held an instruction back, a ZERO behind a load and
// a load behind a ZERO too, units must have overlapped, SYNC must have waited, an RD_ACC and a
// MATMUL must have waited for the ACC write port.
module tb_seq;
    parameter N = 8;
    localparam UB_ROWS = 64;
    localparam ACC_ROWS = 32;
    localparam TILES = 2;
    localparam IQ_DEPTH = 4;
    localparam MEMSZ = 4096;
    localparam PMAX = 512;
    localparam MXCAP = 6;  // commands the fake MXU holds
    localparam LDCAP = 6;  // ... and the fake load unit
    localparam LD_SLOTS = 4;

    localparam U_LD = 0, U_MX = 1, U_AC = 2, U_ST = 3, U_SYS = 4, U_NONE = 5, U_ZR = 6;

    reg clk = 1'b0;
    reg rst = 1'b1;
    reg iq_valid = 1'b0;
    wire iq_ready;
    reg [127:0] iq_data = 128'd0;
    reg [31:0] mem_size = MEMSZ;
    wire [7:0] cmd_op;
    wire [`TPU_F_W-1:0] cmd_flags;
    wire [15:0] cmd_rows;
    wire [31:0] cmd_a;
    wire [19:0] cmd_b;
    wire [11:0] cmd_len;
    wire [31:0] cmd_stride;
    wire ld_valid, mx_valid, ac_valid, st_valid, zr_valid;
    reg ld_ready = 1'b0, mx_ready = 1'b0, ac_ready = 1'b0, st_ready = 1'b0, zr_ready = 1'b0;
    reg
        ld_done = 1'b0,
        ld_fault = 1'b0,
        mx_done = 1'b0,
        ac_done = 1'b0,
        zr_done = 1'b0,
        st_done = 1'b0,
        st_fault = 1'b0;
    wire busy, halted, error;
    wire [3:0] error_code;
    wire [31:0] error_pc;
    wire [31:0] iq_free;
    wire [7:0] head_op;
    wire issue;
    wire stall_hazard, stall_unit, stall_issue, sync_retire;
    wire [2:0] retired;

    tpu_seq #(
        .N(N),
        .UB_ROWS(UB_ROWS),
        .ACC_ROWS(ACC_ROWS),
        .WFIFO_TILES(TILES),
        .IQ_DEPTH(IQ_DEPTH)
    ) dut (
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
        .head_op(head_op),
        .issue(issue),
        .stall_hazard(stall_hazard),
        .stall_unit(stall_unit),
        .stall_issue(stall_issue),
        .sync_retire(sync_retire),
        .retired(retired)
    );

    always #5 clk = ~clk;

    // ------------------------------------------------------------ reference: decode
    function [127:0] insn(input [7:0] op, input [7:0] fl, input [15:0] rows, input [31:0] a,
                          input [19:0] b, input [11:0] len, input [31:0] stride);
        insn = {stride, len, b, a, rows, fl, op};
    endfunction

    function integer unit_of(input [127:0] x);
        case (x[7:0])
            8'h01, 8'h02, 8'h03, 8'h0a: unit_of = U_LD;
            8'h04: unit_of = U_MX;
            8'h05: unit_of = U_AC;
            8'h06: unit_of = U_ST;
            8'h07, 8'h08: unit_of = U_SYS;
            8'h09: unit_of = U_ZR;
            default: unit_of = U_NONE;
        endcase
    endfunction

    // The footprints (rtl/tpu_isa.toml, generated): tpu_hull(x, space, write).
    `include "tpu_footprint.vh"

    // Whether what x touches of a space (either way) ends past lim.
    function past(input [127:0] x, input integer space, input [63:0] lim);
        reg [127:0] r, w;
        begin
            r = tpu_hull(x, space, 0);
            w = tpu_hull(x, space, 1);
            past = r[127:64] > lim || w[127:64] > lim;
        end
    endfunction

    // docs/isa.md "Validation and errors", with wc the tiles counted at issue; the range checks
    // (3, 4, 5) on the footprints.
    function [3:0] ref_code(input [127:0] x, input [31:0] msize, input integer wc);
        reg [7:0] op;
        reg [7:0] fl;
        reg [63:0] rows, a, b, len, stride;
        reg src;
        reg bad;
        begin
            op = x[7:0];
            fl = x[15:8];
            rows = x[31:16];
            a = x[63:32];
            b = x[83:64];
            len = x[95:84];
            stride = x[127:96];
            src = fl[5];
            case (op)
                1: bad = fl != 0 || rows == 0 || len < 1 || len > 4 * N;
                2:
                bad = (fl & ~8'h80) != 0 || b != 0 || rows < 1 || rows > N || len < 1
                         || len > (fl[7] ? 2 * N : N);
                3: bad = fl != 0 || b != 0 || rows != 3 || len < 4 || len > 4 * N || len % 4 != 0;
                4:
                bad = (fl & ~8'h87) != 0 || (fl[2] && fl[7]) || rows == 0 || len != 0
                         || stride > 255;
                5:
                bad = (fl & ~8'hd8) != 0 || rows == 0 || len > 255 || (fl[6] ?
                    stride[3:0] == 0 || stride[7:4] == 0 || stride[15:8] == 0 : stride != 0);
                9: bad = fl != 0 || rows == 0 || a != 0 || len != 0 || stride != 0;
                10: bad = (fl & ~8'h81) != 0 || rows == 0 || len < 4 || len > 4 * N || len % 4 != 0;
                6:
                bad = (fl & ~8'hb8) != 0 || (!src && (fl & 8'h98) != 0) || rows == 0
                         || (src ? (len < 4 || len > 4 * N || len % 4 != 0) : (len < 1 || len > 4 * N));
                default: bad = x[127:8] != 0;
            endcase
            if (op < 1 || op > 10) ref_code = 1;
            else if (bad) ref_code = 2;
            else if (past(x, `TPU_SPACE_UB, UB_ROWS)) ref_code = 3;
            else if (past(x, `TPU_SPACE_ACC, ACC_ROWS)) ref_code = 4;
            else if (past(x, `TPU_SPACE_MEM, {32'd0, msize})) ref_code = 5;
            else if (op == 2 && wc == TILES) ref_code = 8;
            else if (op == 4 && fl[1] && wc == 0) ref_code = 7;
            else ref_code = 0;
        end
    endfunction

    function ovl(input [127:0] x, input [127:0] y);
        ovl = x[127:64] != 0 && y[127:64] != 0 && x[63:0] < y[127:64] && y[63:0] < x[127:64];
    endfunction

    // Kinds of dependency of nw on old in the interlocked spaces, as bits {space*3 + kind}, kind
    // 0 RAW, 1 WAR, 2 WAW.
    localparam DW = 3 * `TPU_SPACES;
    function [DW-1:0] deps(input [127:0] nw, input [127:0] old);
        integer r;
        begin
            deps = {DW{1'b0}};
            for (r = 0; r < `TPU_SPACES; r = r + 1)
            if (`TPU_SPACES_INTERLOCKED >> r & 1) begin
                deps[3*r]   = ovl(tpu_hull(nw, r, 0), tpu_hull(old, r, 1));
                deps[3*r+1] = ovl(tpu_hull(nw, r, 1), tpu_hull(old, r, 0));
                deps[3*r+2] = ovl(tpu_hull(nw, r, 1), tpu_hull(old, r, 1));
            end
        end
    endfunction
    // The kinds that must have held an instruction back: every one that can occur between two
    // units (UB RAW/WAR/WAW, ACC RAW/WAR, memory RAW/WAR, parameter RAW/WAR).
    localparam [DW-1:0] COV_WANT = 7 << 3 * `TPU_SPACE_UB | 3 << 3 * `TPU_SPACE_ACC |
        3 << 3 * `TPU_SPACE_MEM | 3 << 3 * `TPU_SPACE_PARAMS;

    // ------------------------------------------------------------ program and model state
    reg [127:0] prog[0:PMAX-1];
    integer push_edge[0:PMAX-1];
    integer issue_edge[0:PMAX-1];
    reg fault_at[0:PMAX-1];  // the load/store unit answers this instruction with fault
    integer delay_at[0:PMAX-1];  // fixed unit delay for it, 0: random
    integer plen = 0;
    integer push_limit = 0;
    integer edges = 0;
    always @(posedge clk) edges <= edges + 1;

    integer npushed, next_issue, wcount;
    reg m_error, m_halted;
    reg [3:0] m_code;
    reg [3:0] m_first_code;
    integer m_pc;
    integer st_j, ac_j, zr_j;  // instruction in each unit, -1 if none
    integer st_t, ac_t, zr_t;  // cycles until its done
    integer ld_j[0:LDCAP-1];  // loads in the fake load unit, oldest first
    integer ld_t[0:LDCAP-1];
    integer ld_n;
    integer mx_j[0:MXCAP-1];  // MATMULs in the fake MXU, oldest first
    integer mx_t[0:MXCAP-1];
    integer mx_n;
    reg running = 1'b0;

    // timing of the current phase
    integer p_ready = 100;
    integer p_push = 100;
    integer max_delay = 3;
    integer mx_delay = 0;  // fixed MXU delay, 0: random

    // coverage
    reg [DW-1:0] cov_held = {DW{1'b0}};
    reg [15:0] codes_seen = 16'd0;
    integer sync_waits = 0, overlap_cycles = 0, mm_b2b = 0, total_issued = 0, faults_seen = 0;
    integer zero_held = 0;  // cycles a ZERO waited for a load, or a load for a ZERO
    integer zero_overlap = 0;  // cycles a ZERO and a load were both in flight
    integer ld_full_cycles = 0;
    integer rda_port_held = 0;  // cycles an RD_ACC waited for the MXU's ACC writes
    integer mx_port_held = 0;  // ... and a MATMUL for an RD_ACC's

    task model_reset;
        begin
            npushed = 0;
            next_issue = 0;
            wcount = 0;
            m_error = 1'b0;
            m_halted = 1'b0;
            m_code = 4'd0;
            m_pc = 0;
            ld_n = 0;
            st_j = -1;
            ac_j = -1;
            zr_j = -1;
            mx_n = 0;
        end
    endtask

    function integer delay(input integer j);
        delay = delay_at[j] != 0 ? delay_at[j] : 1 + $urandom % max_delay;
    endfunction

    // ------------------------------------------------------------ per-cycle check
    reg
        exp_hv,
        exp_go,
        exp_hz,
        exp_busy,
        exp_err,
        exp_ld,
        exp_mx,
        exp_ac,
        exp_st,
        exp_sys,
        exp_issue;
    reg ld_room, st_free, ac_free, zr_free, mx_room, all_free, fault_now, exp_zr, rda_in, port_wait;
    reg [DW-1:0] dz;  // dependencies between a ZERO and a load
    reg [127:0] hx;
    reg [3:0] hcode;
    integer hu, qcount, i, mx_busy_n, ld_busy_n, n_ret;
    reg [DW-1:0] d;
    integer cand_pc;
    reg [3:0] cand_code;

    task fail(input [8*40-1:0] what, input [127:0] expv, input [127:0] actv);
        begin
            $display("FAIL: seq edge %0d, next instruction %0d (%h): %0s: expected %0h, actual %0h",
                     edges, next_issue, prog[next_issue], what, expv, actv);
            $finish;
        end
    endtask

    always @(negedge clk)
        if (running) begin
            // Unit outputs and inputs for this cycle.
            ld_done  = 1'b0;
            ld_fault = 1'b0;
            st_done  = 1'b0;
            st_fault = 1'b0;
            ac_done  = 1'b0;
            zr_done  = 1'b0;
            mx_done  = 1'b0;
            for (i = 0; i < ld_n; i = i + 1) ld_t[i] = ld_t[i] - 1;
            if (ld_n > 0 && ld_t[0] <= 0) begin
                ld_done  = 1'b1;
                ld_fault = fault_at[ld_j[0]];
            end
            if (st_j >= 0) begin
                st_t = st_t - 1;
                if (st_t <= 0) begin
                    st_done  = 1'b1;
                    st_fault = fault_at[st_j];
                end
            end
            if (ac_j >= 0) begin
                ac_t = ac_t - 1;
                if (ac_t <= 0) ac_done = 1'b1;
            end
            if (zr_j >= 0) begin
                zr_t = zr_t - 1;
                if (zr_t <= 0) zr_done = 1'b1;
            end
            for (i = 0; i < mx_n; i = i + 1) mx_t[i] = mx_t[i] - 1;
            mx_done  = mx_n > 0 && mx_t[0] <= 0;
            ld_ready = ld_n < LDCAP && ($urandom % 100) < p_ready;
            st_ready = ($urandom % 100) < p_ready;
            ac_ready = ($urandom % 100) < p_ready;
            zr_ready = ($urandom % 100) < p_ready;
            mx_ready = mx_n < MXCAP && ($urandom % 100) < p_ready;
            iq_valid = npushed < push_limit && ($urandom % 100) < p_push;
            iq_data  = iq_valid ? prog[npushed] : {$urandom, $urandom, $urandom, $urandom};
            #1;

            // What the sequencer must do this cycle.
            exp_hv = !m_error && next_issue < npushed && push_edge[next_issue] <= edges - 1;
            hx = prog[next_issue];
            hu = exp_hv ? unit_of(hx) : U_NONE;
            hcode = ref_code(hx, mem_size, wcount);
            fault_now = (ld_done && ld_fault) || (st_done && st_fault);
            exp_go = exp_hv && !m_halted && !m_error && !fault_now && hcode == 0;
            ld_busy_n = ld_n - ld_done;
            ld_room = ld_busy_n < LD_SLOTS;
            st_free = st_j < 0 || st_done;
            ac_free = ac_j < 0 || ac_done;
            zr_free = zr_j < 0 || zr_done;
            mx_busy_n = mx_n - mx_done;
            mx_room = mx_busy_n < 4;
            all_free = ld_busy_n == 0 && st_free && ac_free && zr_free && mx_busy_n == 0;
            d = {DW{1'b0}};
            dz = {DW{1'b0}};
            // Loads are exempt among themselves, but a ZERO and a load are not.
            if (hu != U_LD) for (i = ld_done; i < ld_n; i = i + 1) d = d | deps(hx, prog[ld_j[i]]);
            if (hu == U_ZR)
                for (i = ld_done; i < ld_n; i = i + 1) dz = dz | deps(hx, prog[ld_j[i]]);
            if (hu != U_ZR && !zr_free) begin
                d = d | deps(hx, prog[zr_j]);
                if (hu == U_LD) dz = deps(hx, prog[zr_j]);
            end
            if (hu != U_ST && !st_free) d = d | deps(hx, prog[st_j]);
            if (hu != U_AC && !ac_free) d = d | deps(hx, prog[ac_j]);
            if (hu != U_MX) for (i = mx_done; i < mx_n; i = i + 1) d = d | deps(hx, prog[mx_j[i]]);
            exp_hz = d != {DW{1'b0}};
            // The ACC write port: an RD_ACC waits for every MATMUL in flight, a MATMUL for every
            // RD_ACC.
            rda_in = 1'b0;
            for (i = ld_done; i < ld_n; i = i + 1) rda_in = rda_in || prog[ld_j[i]][7:0] == 8'h0a;
            port_wait = hx[7:0] == 8'h0a ? mx_busy_n != 0 : hu == U_MX && rda_in;
            exp_ld = exp_go && hu == U_LD && ld_room && !port_wait && !exp_hz;
            exp_mx = exp_go && hu == U_MX && mx_room && !port_wait && !exp_hz;
            exp_ac = exp_go && hu == U_AC && ac_free && !exp_hz;
            exp_st = exp_go && hu == U_ST && st_free && !exp_hz;
            exp_zr = exp_go && hu == U_ZR && zr_free && !exp_hz;
            exp_sys = exp_go && hu == U_SYS && all_free;
            exp_issue = (exp_ld && ld_ready) || (exp_mx && mx_ready) || (exp_ac && ac_ready)
                    || (exp_st && st_ready) || (exp_zr && zr_ready) || exp_sys;
            qcount = m_error ? 0 : npushed - next_issue - exp_hv;
            exp_busy = qcount != 0 || exp_hv || ld_n != 0 || st_j >= 0 || ac_j >= 0 || zr_j >= 0
                || mx_n != 0;
            n_ret = (ld_done && !ld_fault) + (st_done && !st_fault) + ac_done + zr_done + mx_done
                + exp_sys;

            if (dut.h_valid !== exp_hv) fail("head register valid", exp_hv, dut.h_valid);
            if (head_op !== (exp_hv ? hx[7:0] : 8'd0))
                fail("head_op", exp_hv ? hx[7:0] : 8'd0, head_op);
            if (exp_hv && {cmd_stride, cmd_len, cmd_b, cmd_a, cmd_rows, cmd_flags, cmd_op} !== hx)
                fail("command fields", hx, {
                     cmd_stride, cmd_len, cmd_b, cmd_a, cmd_rows, cmd_flags, cmd_op});
            if ({ld_valid, mx_valid, ac_valid, st_valid, zr_valid} !== {exp_ld, exp_mx, exp_ac, exp_st, exp_zr})
                fail("cmd_valid {ld,mx,ac,st,zr}", {exp_ld, exp_mx, exp_ac, exp_st, exp_zr}, {
                     ld_valid, mx_valid, ac_valid, st_valid, zr_valid});
            if (issue !== exp_issue) fail("issue", exp_issue, issue);
            if (stall_hazard !== (exp_go && !exp_issue && (hu == U_SYS || exp_hz)))
                fail("stall_hazard", exp_go && !exp_issue && (hu == U_SYS || exp_hz), stall_hazard);
            if (stall_unit !== (exp_go && !exp_issue && hu != U_SYS && !exp_hz))
                fail("stall_unit", exp_go && !exp_issue && hu != U_SYS && !exp_hz, stall_unit);
            if (retired !== n_ret) fail("retired", n_ret, retired);
            if (sync_retire !== (exp_sys && hx[7:0] == 8'h07))
                fail("sync_retire", exp_sys && hx[7:0] == 8'h07, sync_retire);
            if (busy !== exp_busy) fail("busy", exp_busy, busy);
            if (stall_issue !== (exp_busy && !m_error && qcount == 0 && !exp_hv))
                fail("stall_issue", exp_busy && !m_error && qcount == 0 && !exp_hv, stall_issue);
            if (iq_ready !== (!m_error && qcount < IQ_DEPTH))
                fail("iq_ready", !m_error && qcount < IQ_DEPTH, iq_ready);
            if (iq_free !== IQ_DEPTH - qcount) fail("iq_free", IQ_DEPTH - qcount, iq_free);
            if (halted !== m_halted) fail("halted", m_halted, halted);
            // ERROR shows once nothing is in flight; code and pc are recorded when it is raised.
            exp_err = m_error && ld_n == 0 && st_j < 0 && ac_j < 0 && zr_j < 0 && mx_n == 0;
            if (error !== exp_err || (m_error && (error_code !== m_code || error_pc !== m_pc)))
                fail("error {flag, code, pc}", {exp_err, m_code, m_pc[31:0]}, {
                     error, error_code, error_pc});

            // Coverage.
            if (exp_go && exp_hz) cov_held = cov_held | d;
            if (exp_go && dz != {DW{1'b0}}) zero_held = zero_held + 1;
            if (zr_j >= 0 && ld_n > 0) zero_overlap = zero_overlap + 1;
            if (exp_go && hu == U_SYS && !all_free && hx[7:0] == 8'h07) sync_waits = sync_waits + 1;
            if (ld_busy_n == LD_SLOTS) ld_full_cycles = ld_full_cycles + 1;
            if (exp_go && port_wait && !exp_hz)
                if (hu == U_MX) mx_port_held = mx_port_held + 1;
                else rda_port_held = rda_port_held + 1;
            if ((ld_n > 0) + (st_j >= 0) + (ac_j >= 0) + (zr_j >= 0) + (mx_n > 0) >= 2)
                overlap_cycles = overlap_cycles + 1;

            // The model follows the next rising edge: errors, completions, issue, push.
            cand_pc   = -1;
            cand_code = 4'd0;
            if (ld_done && ld_fault) begin
                cand_pc   = ld_j[0];
                cand_code = 4'd6;
            end
            if (st_done && st_fault && (cand_pc < 0 || st_j < cand_pc)) begin
                cand_pc   = st_j;
                cand_code = 4'd6;
            end
            if (cand_pc < 0 && exp_hv && !m_halted && !m_error && hcode != 0) begin
                cand_pc   = next_issue;
                cand_code = hcode;
            end
            if (cand_pc >= 0 && (!m_error || cand_pc < m_pc)) begin
                if (!m_error) m_first_code = cand_code;
                codes_seen[cand_code] = 1'b1;
                m_error = 1'b1;
                m_code = cand_code;
                m_pc = cand_pc;
            end
            if (ld_done) begin
                for (i = 1; i < ld_n; i = i + 1) begin
                    ld_j[i-1] = ld_j[i];
                    ld_t[i-1] = ld_t[i];
                end
                ld_n = ld_n - 1;
            end
            if (st_done) st_j = -1;
            if (ac_done) ac_j = -1;
            if (zr_done) zr_j = -1;
            if (mx_done) begin
                for (i = 1; i < mx_n; i = i + 1) begin
                    mx_j[i-1] = mx_j[i];
                    mx_t[i-1] = mx_t[i];
                end
                mx_n = mx_n - 1;
            end
            if (fault_now) faults_seen = faults_seen + 1;
            if (exp_issue) begin
                if (exp_ld && ld_ready) begin
                    ld_j[ld_n] = next_issue;
                    ld_t[ld_n] = delay(next_issue);
                    ld_n = ld_n + 1;
                end
                if (exp_st && st_ready) begin
                    st_j = next_issue;
                    st_t = delay(next_issue);
                end
                if (exp_ac && ac_ready) begin
                    ac_j = next_issue;
                    ac_t = delay(next_issue);
                end
                if (exp_zr && zr_ready) begin
                    zr_j = next_issue;
                    zr_t = delay(next_issue);
                end
                if (exp_mx && mx_ready) begin
                    mx_j[mx_n] = next_issue;
                    mx_t[mx_n] = mx_delay != 0 ? mx_delay : 1 + $urandom % (3 * max_delay);
                    mx_n = mx_n + 1;
                    if (next_issue > 0 && prog[next_issue - 1][7:0] == 8'h04
                    && issue_edge[next_issue - 1] == edges)
                        mm_b2b = mm_b2b + 1;
                end
                if (hx[7:0] == 8'h02) wcount = wcount + 1;
                if (hx[7:0] == 8'h04 && hx[9]) wcount = wcount - 1;
                if (hx[7:0] == 8'h08) m_halted = 1'b1;
                issue_edge[next_issue] = edges + 1;
                next_issue = next_issue + 1;
                total_issued = total_issued + 1;
            end
            if (iq_valid && iq_ready) begin
                if (!(exp_issue && hx[7:0] == 8'h08)) m_halted = 1'b0;
                push_edge[npushed] = edges + 1;
                npushed = npushed + 1;
            end
        end

    // ------------------------------------------------------------ running programs
    // Reset the sequencer and run prog[0..plen) (pushing up to push_limit) until everything
    // pushed has issued or an error stopped it, and nothing is in flight.
    task start;
        begin
            running = 1'b0;
            @(negedge clk);
            {ld_done, ld_fault, st_done, st_fault, ac_done, zr_done, mx_done} = 7'd0;
            iq_valid = 1'b0;
            rst = 1'b1;
            @(negedge clk);
            @(negedge clk);
            rst = 1'b0;
            model_reset;
            running = 1'b1;
        end
    endtask

    task wait_idle;
        integer t;
        begin
            t = 0;
            while (!((m_error || next_issue == push_limit) && ld_n == 0 && st_j < 0 && ac_j < 0 && zr_j < 0 && mx_n == 0)) begin
                @(negedge clk);
                t = t + 1;
                if (t > 20000) begin
                    $display("FAIL: seq: program stuck at instruction %0d of %0d (%h)", next_issue,
                             plen, prog[next_issue]);
                    $finish;
                end
            end
            @(negedge clk);
        end
    endtask

    task run_prog;
        begin
            push_limit = plen;
            start;
            wait_idle;
        end
    endtask

    task emit(input [127:0] x);
        begin
            prog[plen] = x;
            fault_at[plen] = 1'b0;
            delay_at[plen] = 0;
            plen = plen + 1;
        end
    endtask

    // A random valid instruction over small ranges (so that they overlap often), with wc the
    // tiles counted so far in program order.
    task gen_valid(inout integer wc);
        integer pick, rows, len, src, step, span;
        reg [7:0] fl;
        reg [31:0] a, stride, win;
        reg [19:0] b;
        begin
            pick = $urandom % 100;
            rows = 1 + $urandom % 4;
            a = $urandom % 160;
            stride = ($urandom % 3 == 0) ? 0 : (($urandom % 2) ? N : $urandom % 40);
            if (pick < 8 && wc < TILES) begin
                fl = $urandom % 2 << 7;  // BF16: rows of up to 2N bytes
                emit(insn(
                     8'h02, fl, 1 + $urandom % N, a, 0, 1 + $urandom % (fl[7] ? 2 * N : N), stride
                     ));
                wc = wc + 1;
            end else if (pick < 13) begin
                emit(insn(8'h03, 0, 3, a, 0, 4 * (1 + $urandom % N), stride));
            end else if (pick < 18) begin
                // RD_ACC (ISA 1.4), with and without ACC and BF16
                emit(insn(
                     8'h0a,
                     ($urandom % 2) << 7 | $urandom % 2,
                     rows,
                     a,
                     $urandom % (17 - rows),
                     4 * (1 + $urandom % N),
                     stride
                     ));
            end else if (pick < 34) begin
                // Half of them wide (len up to 4N): rows * ceil(len / N) UB rows.
                len  = ($urandom % 2) ? 1 + $urandom % N : 1 + $urandom % (4 * N);
                span = rows * ((len + N - 1) / N);
                emit(insn(8'h01, 0, rows, a, $urandom % (17 - span), len, stride));
            end else if (pick < 58) begin
                fl = $urandom % 8;
                fl[7] = !fl[2] && $urandom % 2;  // BF16 reads UB row pairs
                if (wc == 0) fl[1] = 1'b0;
                if (fl[1]) wc = wc - 1;
                // UB row step: 0 (consecutive), small, or large for one row.
                case ($urandom % 4)
                    0: stride = 0;
                    1: stride = rows == 1 ? 1 + $urandom % 255 : 1;
                    default: stride = $urandom % 4;
                endcase
                step = stride == 0 ? 1 : stride;
                span = (rows - 1) * step + 1 + fl[7];
                emit(insn(
                     8'h04,
                     fl,
                     rows,
                     $urandom % (UB_ROWS - span < 16 ? UB_ROWS - span + 1 : 17),
                     $urandom % (17 - rows),
                     0,
                     stride
                     ));
            end else if (pick < 72) begin
                fl   = ($urandom % 4) << 3 | ($urandom % 2) << 7;  // BF16 writes UB row pairs
                win  = 0;
                span = rows;
                if ($urandom % 2) begin  // POOL: a window of up to 3 x 3, step 1..3, pitch 0..5
                    fl[6] = 1'b1;
                    win = ($urandom % 6) << 16 | (1 + $urandom % 3) << 8 | (1 + $urandom % 3) << 4
                        | (1 + $urandom % 3);
                    span = (rows - 1) * win[15:8] + (win[3:0] - 1) * win[31:16] + win[7:4];
                end
                // UB row step (ISA 1.2, the len field): 0 or 1 (consecutive), small, or large
                // for one row.
                case ($urandom % 4)
                    0: len = $urandom % 2;
                    1: len = rows == 1 ? 1 + $urandom % 255 : 2;
                    default: len = $urandom % 4;
                endcase
                step = (len == 0) ? 1 : len;
                emit(insn(
                     8'h05,
                     fl,
                     rows,
                     $urandom % (UB_ROWS - (rows - 1) * step - fl[7] < 17 ?
                                 UB_ROWS - (rows - 1) * step - fl[7] : 17),
                     $urandom % (ACC_ROWS - span < 16 ? ACC_ROWS - span + 1 : 17),
                     len,
                     win
                     ));
            end else if (pick < 78) begin
                emit(insn(8'h09, 0, rows, 0, $urandom % (17 - rows), 0, 0));
            end else if (pick < 96) begin
                src = $urandom % 2;
                fl = src ? 8'h20 | ($urandom % 4) << 3 | ($urandom % 2) << 7 : 8'h00;
                // From UB half of them wide (len up to 4N): rows * ceil(len / N) UB rows.
                len = src ? 4 * (1 + $urandom % N) :
                    ($urandom % 2) ? 1 + $urandom % N : 1 + $urandom % (4 * N);
                span = src ? rows : rows * ((len + N - 1) / N);
                emit(insn(8'h06, fl, rows, a, $urandom % (17 - span), len, stride));
            end else begin
                emit(insn(8'h07, 0, 0, 0, 0, 0, 0));
            end
        end
    endtask

    // A random instruction, malformed in one of many ways or valid.
    function [127:0] gen_any(input integer dummy);
        reg [7:0] op, fl;
        reg [15:0] rows;
        reg [31:0] a, stride;
        reg [19:0] b;
        reg [11:0] len;
        begin
            op = ($urandom % 8 == 0) ? $urandom % 12 : 1 + $urandom % 8;
            fl = ($urandom % 3 == 0) ? (8'h01 << ($urandom % 8)) : 8'h00;
            case ($urandom % 6)
                0: rows = 0;
                1: rows = 3;
                2: rows = N;
                3: rows = N + 1;
                default: rows = 1 + $urandom % 4;
            endcase
            case ($urandom % 5)
                0: a = UB_ROWS - 1 - $urandom % 3;
                1: a = MEMSZ - $urandom % (4 * N + 8);
                2: a = 32'hffffffff - $urandom % 4;
                default: a = $urandom % 32;
            endcase
            case ($urandom % 5)
                0: b = UB_ROWS - $urandom % 3;
                1: b = ACC_ROWS - $urandom % 3;
                2: b = 0;
                default: b = $urandom % 16;
            endcase
            case ($urandom % 6)
                0: len = 0;
                1: len = N + ($urandom % 2);
                2: len = 4 * N + 4 * ($urandom % 2);
                3: len = 4 + $urandom % 8;
                default: len = 1 + $urandom % N;
            endcase
            case ($urandom % 6)
                0: stride = 0;
                1: stride = 32'hffffffff;
                2: stride = MEMSZ / 2;
                3: stride = $urandom % 65536;  // a POOL window, some fields zero; MATMUL > 255
                4: stride = 255 + $urandom % 2;
                default: stride = $urandom % 64;
            endcase
            if (op >= 4 && op <= 5 && $urandom % 2) begin
                len = 0;
                stride = 0;
            end
            if (op >= 7 && $urandom % 2) gen_any = insn(op, 0, 0, 0, 0, 0, 0);
            else gen_any = insn(op, fl, rows, a, b, len, stride);
        end
    endfunction

    `include "tb_seq_directed.vh"

    task random_valid(input integer n, input integer fault_pct);
        integer t, wc;
        begin
            plen = 0;
            wc   = 0;
            for (t = 0; t < n; t = t + 1) begin
                gen_valid(wc);
                if ((prog[plen-1][7:0] <= 8'h03 || prog[plen-1][7:0] == 8'h06 || prog[plen-1][7:0] == 8'h0a) && ($urandom % 100) < fault_pct)
                    fault_at[plen-1] = 1'b1;
            end
            emit(insn(8'h08, 0, 0, 0, 0, 0, 0));
            run_prog;
            if (fault_pct == 0 && (m_error || !m_halted || next_issue != plen)) begin
                $display(
                    "FAIL: seq: valid program stopped: error %0d code %0d pc %0d, %0d of %0d issued",
                    m_error, m_code, m_pc, next_issue, plen);
                $finish;
            end
        end
    endtask

    task random_malformed;
        integer t, wc;
        begin
            plen = 0;
            wc   = 0;
            for (t = 0; t < 2 + $urandom % 6; t = t + 1) gen_valid(wc);
            for (t = 0; t < 12; t = t + 1) emit(gen_any(0));
            emit(insn(8'h08, 0, 0, 0, 0, 0, 0));
            run_prog;
        end
    endtask

    integer ph;
    initial begin
        errors_directed;
        halt_hold;
        matmul_b2b;
        oldest_wins;
        loads_b2b;
        zero_load;
        wide_host;
        step_wide_wr;
        for (ph = 0; ph < 8; ph = ph + 1) begin
            case (ph % 4)
                0: begin
                    p_ready = 100;
                    p_push = 100;
                    max_delay = 3;
                end
                1: begin
                    p_ready = 70;
                    p_push = 80;
                    max_delay = 12;
                end
                2: begin
                    p_ready = 30;
                    p_push = 100;
                    max_delay = 30;
                end
                default: begin
                    p_ready = 90;
                    p_push = 20;
                    max_delay = 5;
                end
            endcase
            random_valid(120, 0);
        end
        p_ready = 80;
        p_push = 90;
        max_delay = 8;
        for (ph = 0; ph < 8; ph = ph + 1) random_valid(40, 6);
        for (ph = 0; ph < 40; ph = ph + 1) random_malformed;
        if ((cov_held & COV_WANT) != COV_WANT) begin
            $display(
                "FAIL: seq: hazard coverage %b: expected bits UB RAW/WAR/WAW, ACC RAW/WAR, memory RAW/WAR, param RAW/WAR (mask %b)",
                cov_held, COV_WANT);
            $finish;
        end
        if (codes_seen[8:1] != 8'hff || sync_waits == 0 || overlap_cycles == 0 || mm_b2b < 10 || faults_seen == 0
            || ld_full_cycles == 0 || zero_held == 0 || zero_overlap == 0 || rda_port_held == 0
            || mx_port_held == 0) begin
            $display(
                "FAIL: seq: coverage: error codes seen %b, SYNC waits %0d, overlap cycles %0d, back-to-back MATMULs %0d, faults %0d, cycles with all load slots full %0d, ZERO/load held %0d, overlapping %0d, RD_ACC/MATMUL held for the ACC port %0d/%0d",
                codes_seen[8:0], sync_waits, overlap_cycles, mm_b2b, faults_seen, ld_full_cycles,
                zero_held, zero_overlap, rda_port_held, mx_port_held);
            $finish;
        end
        $display(
            "seq: %0d directed error cases, %0d instructions issued, %0d cycles; overlap cycles %0d, back-to-back MATMULs %0d, faults %0d, cycles with all load slots full %0d, ZERO/load held %0d, overlapping %0d, RD_ACC/MATMUL held for the ACC port %0d/%0d",
            err_cases, total_issued, edges, overlap_cycles, mm_b2b, faults_seen, ld_full_cycles,
            zero_held, zero_overlap, rda_port_held, mx_port_held);
        $display("PASS");
        $finish;
    end

    initial begin
        #20000000;
        $display("FAIL: seq: timeout");
        $finish;
    end
endmodule
