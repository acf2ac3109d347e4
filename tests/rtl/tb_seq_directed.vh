// tb_seq_directed.vh - tb_seq's directed cases: each error code at its boundary, and the
// interlocks and hand-offs the random programs rarely hit. Included inside tb_seq's module: the
// tasks drive its program, memory and reference model.

// Directed error case: a valid prefix (with `tiles` RD_WEIGHTs), the instruction x that
// must fail with `code`, then instructions that must not issue.
integer err_cases = 0;
task err_case(input [127:0] x, input [3:0] code, input integer tiles);
    integer t;
    begin
        plen = 0;
        emit(insn(8'h01, 0, 2, 0, 0, N, N));
        for (t = 0; t < tiles; t = t + 1) emit(insn(8'h02, 0, N, 64, 0, N, N));
        emit(insn(8'h07, 0, 0, 0, 0, 0, 0));
        emit(x);
        emit(insn(8'h01, 0, 2, 0, 4, N, N));
        emit(insn(8'h08, 0, 0, 0, 0, 0, 0));
        run_prog;
        if (code == 0 ? (m_error || !m_halted) : (!m_error || m_code != code || m_pc != tiles + 2)) begin
            $display(
                "FAIL: seq: error case %0d (%h): expected code %0d at pc %0d, model says error %0d code %0d at pc %0d",
                err_cases, x, code, tiles + 2, m_error, m_code, m_pc);
            $finish;
        end
        err_cases = err_cases + 1;
    end
endtask

task errors_directed;
    begin
        // 1: illegal opcode, before any other check
        err_case(insn(8'h00, 0, 1, 0, 0, 0, 0), 1, 0);
        err_case(insn(8'h0b, 0, 0, 0, 0, 0, 0), 1, 0);
        err_case(insn(8'hff, 8'hff, 0, 32'hffffffff, 20'hfffff, 0, 0), 1, 0);
        // 2: bad operands, each opcode
        err_case(insn(8'h01, 8'h01, 1, 0, 0, N, N), 2, 0);
        err_case(insn(8'h01, 0, 0, 0, 0, N, N), 2, 0);
        err_case(insn(8'h01, 0, 1, 0, 0, 0, N), 2, 0);
        err_case(insn(8'h01, 0, 1, 0, 0, N + 1, N), 0, 0);  // ISA 1.2: len up to 4N
        err_case(insn(8'h01, 0, 1, 0, 0, 4 * N, N), 0, 0);
        err_case(insn(8'h01, 0, 1, 0, 0, 4 * N + 1, N), 2, 0);
        err_case(insn(8'h01, 0, 1, 0, 0, 12'hfff, N), 2, 0);
        err_case(insn(8'h02, 0, N, 0, 1, N, N), 2, 0);
        err_case(insn(8'h02, 0, N + 1, 0, 0, N, N), 2, 0);
        err_case(insn(8'h02, 0, N, 0, 0, N + 1, N), 2, 0);
        err_case(insn(8'h02, 8'h02, N, 0, 0, N, N), 2, 0);
        err_case(insn(8'h03, 0, 2, 0, 0, 4 * N, 4 * N), 2, 0);
        err_case(insn(8'h03, 0, 3, 0, 0, 4 * N + 4, 4 * N), 2, 0);
        err_case(insn(8'h03, 0, 3, 0, 0, 6, 4 * N), 2, 0);
        err_case(insn(8'h03, 0, 3, 0, 0, 0, 4 * N), 2, 0);
        err_case(insn(8'h03, 0, 3, 0, 2, 4, 4 * N), 2, 0);
        err_case(insn(8'h04, 8'h08, 1, 0, 0, 0, 0), 2, 0);
        err_case(insn(8'h04, 0, 1, 0, 0, 1, 0), 2, 0);
        err_case(insn(8'h04, 0, 1, 0, 0, 0, 4), 0, 0);  // ISA 1.1: the UB row step
        err_case(insn(8'h04, 0, 0, 0, 0, 0, 0), 2, 0);
        err_case(insn(8'h05, 8'h01, 1, 0, 0, 0, 0), 2, 0);
        err_case(insn(8'h05, 8'h20, 1, 0, 0, 0, 0), 2, 0);
        err_case(insn(8'h05, 0, 1, 0, 0, 0, 1), 2, 0);
        err_case(insn(8'h06, 8'h08, 1, 0, 0, N, N), 2, 0);
        err_case(insn(8'h06, 8'h10, 1, 0, 0, N, N), 2, 0);
        err_case(insn(8'h06, 0, 1, 0, 0, N + 1, N), 0, 0);  // ISA 1.2: from UB up to 4N
        err_case(insn(8'h06, 0, 1, 0, 0, 4 * N, N), 0, 0);
        err_case(insn(8'h06, 0, 1, 0, 0, 4 * N + 1, N), 2, 0);
        err_case(insn(8'h06, 0, 1, 0, 0, 0, N), 2, 0);
        err_case(insn(8'h06, 0, 1, 0, 0, 12'hfff, N), 2, 0);
        err_case(insn(8'h06, 8'h20, 1, 0, 0, 4 * N + 4, 4 * N), 2, 0);
        err_case(insn(8'h06, 8'h20, 1, 0, 0, 5, 4 * N), 2, 0);
        err_case(insn(8'h06, 8'h40, 1, 0, 0, N, N), 2, 0);
        err_case(insn(8'h06, 8'h80 | 8'h20, 1, 0, 0, 4, 4), 0, 0);  // ISA 1.3: BF16 with SRC_ACC
        err_case(insn(8'h06, 8'h80, 1, 0, 0, N, N), 2, 0);  // ... not from UB
        err_case(insn(8'h06, 8'h01, 1, 0, 0, N, N), 2, 0);
        err_case(insn(8'h07, 0, 1, 0, 0, 0, 0), 2, 0);
        err_case(insn(8'h07, 0, 0, 0, 0, 0, 1), 2, 0);
        err_case(insn(8'h08, 0, 0, 1, 0, 0, 0), 2, 0);
        err_case(insn(8'h08, 8'h01, 0, 0, 0, 0, 0), 2, 0);
        // ISA 1.1: ZERO's fields, MATMUL's stride, ACTIVATE.POOL's window
        err_case(insn(8'h09, 0, 0, 0, 0, 0, 0), 2, 0);
        err_case(insn(8'h09, 8'h01, 1, 0, 0, 0, 0), 2, 0);
        err_case(insn(8'h09, 8'h40, 1, 0, 0, 0, 0), 2, 0);
        err_case(insn(8'h09, 0, 1, 1, 0, 0, 0), 2, 0);
        err_case(insn(8'h09, 0, 1, 0, 0, 1, 0), 2, 0);
        err_case(insn(8'h09, 0, 1, 0, 0, 0, 1), 2, 0);
        err_case(insn(8'h09, 0, UB_ROWS, 0, 0, 0, 0), 0, 0);
        // ISA 1.4: RD_ACC takes ACC and BF16, len 4..4N in fours; ACC range [b, b+rows)
        err_case(insn(8'h0a, 8'h81, 2, 0, 0, 4 * N, 4 * N), 0, 0);
        err_case(insn(8'h0a, 8'h02, 1, 0, 0, 4, 0), 2, 0);
        err_case(insn(8'h0a, 8'h20, 1, 0, 0, 4, 0), 2, 0);
        err_case(insn(8'h0a, 0, 0, 0, 0, 4, 0), 2, 0);
        err_case(insn(8'h0a, 0, 1, 0, 0, 0, 0), 2, 0);
        err_case(insn(8'h0a, 0, 1, 0, 0, 6, 0), 2, 0);
        err_case(insn(8'h0a, 0, 1, 0, 0, 4 * N + 4, 0), 2, 0);
        err_case(insn(8'h0a, 0, 2, 0, ACC_ROWS - 1, 4, 0), 4, 0);
        err_case(insn(8'h0a, 0, 1, 0, ACC_ROWS - 1, 4, 0), 0, 0);
        err_case(insn(8'h0a, 0, 2, MEMSZ - 8, 0, 8, 4), 5, 0);
        err_case(insn(8'h0a, 0, 2, MEMSZ - 12, 0, 8, 4), 0, 0);
        err_case(insn(8'h04, 0, 1, 0, 0, 0, 256), 2, 0);
        err_case(insn(8'h04, 0, 1, 0, 0, 0, 32'hffffffff), 2, 0);
        err_case(insn(8'h04, 8'h40, 1, 0, 0, 0, 0), 2, 0);
        err_case(insn(8'h04, 0, 1, UB_ROWS - 1, 0, 0, 255), 0, 0);
        err_case(insn(8'h05, 8'h40, 1, 0, 0, 0, 32'h0000_0110), 2, 0);  // PH 0
        err_case(insn(8'h05, 8'h40, 1, 0, 0, 0, 32'h0000_0101), 2, 0);  // PW 0
        err_case(insn(8'h05, 8'h40, 1, 0, 0, 0, 32'h0005_0011), 2, 0);  // STEP 0
        // ISA 1.2: ACTIVATE's len is its UB row step, 0..255, with and without POOL
        err_case(insn(8'h05, 8'h40, 1, 0, 0, 1, 32'h0000_0111), 0, 0);
        err_case(insn(8'h05, 8'h40, 1, 0, 0, 255, 32'h0000_0111), 0, 0);
        err_case(insn(8'h05, 8'h40, 1, 0, 0, 256, 32'h0000_0111), 2, 0);
        err_case(insn(8'h05, 0, 1, 0, 0, 255, 0), 0, 0);
        err_case(insn(8'h05, 0, 1, 0, 0, 256, 0), 2, 0);
        err_case(insn(8'h05, 0, 1, 0, 0, 12'hfff, 0), 2, 0);
        err_case(insn(8'h05, 8'h80, 1, 0, 0, 0, 32'h0000_0111), 2, 0);
        err_case(insn(8'h05, 8'h58, 2, 0, 0, 0, 32'hffff_ffff), 4, 0);  // 255 + 14*65535 + 15
        err_case(insn(8'h05, 8'h40, 1, 0, 0, 0, 32'h0000_0111), 0, 0);
        // ISA 1.3: RD_WEIGHT.BF16 rows of up to 2N bytes; MATMUL.BF16 not UNSIGNED; MATMUL.BF16
        // and ACTIVATE.BF16 read and write UB row pairs: (rows-1)*step + 2 rows
        err_case(insn(8'h02, 8'h80, N, 0, 0, 2 * N, 2 * N), 0, 0);
        err_case(insn(8'h02, 8'h80, N, 0, 0, 2 * N + 1, 2 * N + 1), 2, 0);
        err_case(insn(8'h04, 8'h81, 1, 0, 0, 0, 2), 0, 0);
        err_case(insn(8'h04, 8'h84, 1, 0, 0, 0, 2), 2, 0);
        err_case(insn(8'h04, 8'h80, 3, UB_ROWS - 6, 0, 0, 2), 0, 0);
        err_case(insn(8'h04, 8'h80, 3, UB_ROWS - 5, 0, 0, 2), 3, 0);
        err_case(insn(8'h04, 8'h80, 1, UB_ROWS - 1, 0, 0, 0), 3, 0);
        err_case(insn(8'h05, 8'h98, 2, UB_ROWS - 5, 0, 3, 0), 0, 0);
        err_case(insn(8'h05, 8'h98, 2, UB_ROWS - 4, 0, 3, 0), 3, 0);
        err_case(insn(8'h05, 8'hc0, 1, UB_ROWS - 2, 0, 0, 32'h0000_0111), 0, 0);
        err_case(insn(8'h05, 8'hc0, 1, UB_ROWS - 1, 0, 0, 32'h0000_0111), 3, 0);
        // 2 before 3 (bad flag and UB out of range), 2 before 7 (bad MATMUL LOAD, no tile)
        err_case(insn(8'h01, 8'h01, 2, 0, UB_ROWS, N, N), 2, 0);
        err_case(insn(8'h04, 8'h0a, 1, 0, 0, 0, 0), 2, 0);
        // 3: UB range
        err_case(insn(8'h01, 0, 2, 0, UB_ROWS - 1, N, N), 3, 0);
        // RD_HOST writes rows * ceil(len / N) UB rows
        err_case(insn(8'h01, 0, UB_ROWS / 4, 0, 0, 4 * N, 4 * N), 0, 0);
        err_case(insn(8'h01, 0, UB_ROWS / 4, 0, 1, 4 * N, 4 * N), 3, 0);
        err_case(insn(8'h01, 0, 3, 0, UB_ROWS - 6, 2 * N, 2 * N), 0, 0);
        err_case(insn(8'h01, 0, 3, 0, UB_ROWS - 6, 2 * N + 1, 2 * N + 1), 3, 0);
        err_case(insn(8'h01, 0, 5, 0, UB_ROWS - 15, 3 * N - 1, 0), 0, 0);
        err_case(insn(8'h01, 0, 5, 0, UB_ROWS - 15, 3 * N + 1, 0), 3, 0);
        err_case(insn(8'h01, 0, 16'hffff, 0, 0, 4 * N, 0), 3, 0);
        err_case(insn(8'h09, 0, 2, 0, UB_ROWS - 1, 0, 0), 3, 0);
        err_case(insn(8'h04, 0, 33, 0, 0, 0, 2), 3, 0);  // (33-1)*2+1 = 65 rows
        err_case(insn(8'h04, 0, 32, 1, 0, 0, 2), 0, 0);  // 63 rows from 1
        err_case(insn(8'h04, 0, 2, 1, 0, 0, 63), 3, 0);
        err_case(insn(8'h05, 8'h40, 2, UB_ROWS - 1, 0, 0, 32'h0000_0111), 3, 0);
        err_case(insn(8'h04, 0, 1, 32'hffffffff, 0, 0, 0), 3, 0);
        err_case(insn(8'h04, 0, 1, UB_ROWS, 0, 0, 0), 3, 0);
        err_case(insn(8'h05, 0, 65535, 0, 0, 0, 0), 3, 0);
        err_case(insn(8'h06, 0, 3, 0, UB_ROWS - 2, N, N), 3, 0);
        // ACTIVATE's UB range with its step: (rows-1)*step + 1 rows from a
        err_case(insn(8'h05, 0, 3, 1, 0, 31, 0), 0, 0);  // rows 1, 32, 63
        err_case(insn(8'h05, 0, 3, 2, 0, 31, 0), 3, 0);
        err_case(insn(8'h05, 8'h40, 3, 1, 0, 31, 32'h0000_0111), 0, 0);
        err_case(insn(8'h05, 8'h40, 3, 2, 0, 31, 32'h0000_0111), 3, 0);
        err_case(insn(8'h05, 0, 2, 0, 0, 255, 0), 3, 0);  // 256 rows
        err_case(insn(8'h05, 0, 1, UB_ROWS - 1, 0, 255, 0), 0, 0);  // one row: no step
        err_case(insn(8'h05, 0, 2, UB_ROWS - 2, 0, 1, 0), 0, 0);
        err_case(insn(8'h05, 0, 2, UB_ROWS - 2, 0, 2, 0), 3, 0);
        // WR_HOST from UB reads rows * ceil(len / N) UB rows
        err_case(insn(8'h06, 0, UB_ROWS / 4, 0, 0, 4 * N, 4 * N), 0, 0);
        err_case(insn(8'h06, 0, UB_ROWS / 4, 0, 1, 4 * N, 4 * N), 3, 0);
        err_case(insn(8'h06, 0, 3, 0, UB_ROWS - 6, 2 * N, 2 * N), 0, 0);
        err_case(insn(8'h06, 0, 3, 0, UB_ROWS - 6, 2 * N + 1, 2 * N + 1), 3, 0);
        err_case(insn(8'h06, 0, 5, 0, UB_ROWS - 15, 3 * N - 1, 0), 0, 0);
        err_case(insn(8'h06, 0, 5, 0, UB_ROWS - 15, 3 * N + 1, 0), 3, 0);
        err_case(insn(8'h06, 0, 16'hffff, 0, 0, 4 * N, 0), 3, 0);
        err_case(insn(8'h06, 8'h20, UB_ROWS / 2, 0, 0, 4 * N, 4 * N), 0, 0);  // ACC: 1 row each
        // 3 before 4, 3 before 5, 4 before 5
        err_case(insn(8'h04, 0, 2, UB_ROWS - 1, ACC_ROWS, 0, 0), 3, 0);
        err_case(insn(8'h01, 0, 2, MEMSZ, UB_ROWS - 1, N, N), 3, 0);
        err_case(insn(8'h06, 8'h20, 2, MEMSZ, ACC_ROWS - 1, 4, 4), 4, 0);
        // 4: ACC range
        err_case(insn(8'h04, 0, 2, 0, ACC_ROWS - 1, 0, 0), 4, 0);
        err_case(insn(8'h05, 8'h18, 1, 0, ACC_ROWS, 0, 0), 4, 0);
        err_case(insn(8'h06, 8'h28, 3, 0, ACC_ROWS - 2, 4, 4), 4, 0);
        // POOL: (2-1)*3 + (2-1)*10 + 4 = 17 rows
        err_case(insn(8'h05, 8'h40, 2, 0, ACC_ROWS - 17, 0, 32'h000a_0342), 0, 0);
        err_case(insn(8'h05, 8'h40, 2, 0, ACC_ROWS - 16, 0, 32'h000a_0342), 4, 0);
        err_case(insn(8'h04, 0, 2, 0, ACC_ROWS - 1, 0, 5), 4, 0);  // ACC rows are not strided
        // 5: memory range, including 64-bit sums
        err_case(insn(8'h01, 0, 1, MEMSZ - N + 1, 0, N, N), 5, 0);
        err_case(insn(8'h01, 0, 2, MEMSZ - 2 * N, 0, N, N + 1), 5, 0);
        err_case(insn(8'h02, 0, 2, 0, 0, 1, 32'hffffffff), 5, 0);
        err_case(insn(8'h03, 0, 3, 0, 0, 4, MEMSZ / 2), 5, 0);
        err_case(insn(8'h06, 0, 1, 32'hffffffff, 0, 1, 0), 5, 0);
        err_case(insn(8'h06, 8'h20, 16, MEMSZ - 4, 0, 4, 0), 0, 0);  // fits: runs to HALT
        // 5 before 8, 7, 8
        err_case(insn(8'h02, 0, 1, MEMSZ, 0, 1, 0), 5, TILES);
        err_case(insn(8'h04, 8'h02, 1, 0, 0, 0, 0), 7, 0);
        err_case(insn(8'h02, 0, 1, 0, 0, 1, 0), 8, TILES);
        err_case(insn(8'h04, 8'h02, 1, 0, 0, 0, 0), 0, 1);  // a tile is on its way: runs
    end
endtask

// HALT: retires after everything before it, then nothing issues until the next push.
task halt_hold;
    integer t;
    begin
        plen = 0;
        emit(insn(8'h01, 0, 2, 0, 0, N, N));
        emit(insn(8'h08, 0, 0, 0, 0, 0, 0));
        emit(insn(8'h01, 0, 2, 0, 2, N, N));
        emit(insn(8'h07, 0, 0, 0, 0, 0, 0));
        emit(insn(8'h07, 0, 0, 0, 0, 0, 0));
        push_limit = 4;
        start;
        for (t = 0; t < 200 && !m_halted; t = t + 1) @(negedge clk);
        repeat (30) @(negedge clk);
        if (!m_halted || next_issue != 2 || npushed != 4) begin
            $display(
                "FAIL: seq: HALT hold: halted %0d, %0d issued, %0d pushed; expected halted after 2 issued, 4 pushed",
                m_halted, next_issue, npushed);
            $finish;
        end
        push_limit = 5;
        wait_idle;
        if (m_halted || next_issue != 5) begin
            $display(
                "FAIL: seq: HALT hold: after the next push %0d issued (expected 5), halted %0d",
                next_issue, m_halted);
            $finish;
        end
    end
endtask

// MATMULs writing the same ACC rows issue on consecutive cycles, up to four in flight.
task matmul_b2b;
    integer t;
    begin
        p_ready = 100;
        mx_delay = 30;
        plen = 0;
        for (t = 0; t < 6; t = t + 1) emit(insn(8'h04, 8'h01, 4, t, 0, 0, 0));
        emit(insn(8'h08, 0, 0, 0, 0, 0, 0));
        run_prog;
        mx_delay = 0;
        for (t = 1; t < 4; t = t + 1)
        if (issue_edge[t] != issue_edge[t-1] + 1) begin
            $display(
                "FAIL: seq: MATMUL %0d issued at edge %0d, MATMUL %0d at %0d: expected consecutive",
                t - 1, issue_edge[t-1], t, issue_edge[t]);
            $finish;
        end
        if (issue_edge[4] < issue_edge[0] + 30) begin
            $display("FAIL: seq: a fifth MATMUL issued at edge %0d with four in flight since %0d",
                     issue_edge[4], issue_edge[0]);
            $finish;
        end
    end
endtask

// A load that faults after a younger instruction failed validation: the fault is reported.
task oldest_wins;
    begin
        p_ready = 100;
        plen = 0;
        emit(insn(8'h01, 0, 2, 0, 0, N, N));
        fault_at[0] = 1'b1;
        delay_at[0] = 20;
        emit(insn(8'h04, 0, 2, 8, 0, 0, 0));
        emit(insn(8'h0b, 0, 0, 0, 0, 0, 0));
        emit(insn(8'h08, 0, 0, 0, 0, 0, 0));
        run_prog;
        if (m_first_code != 1 || m_code != 6 || m_pc != 0) begin
            $display(
                "FAIL: seq: oldest error: first code %0d, final code %0d at pc %0d; expected 1, then 6 at pc 0",
                m_first_code, m_code, m_pc);
            $finish;
        end
    end
endtask

// Loads writing the same UB rows issue on consecutive cycles, up to four in flight; a MATMUL
// reading those rows waits for all of them; of two faulting loads the older one is reported.
task loads_b2b;
    integer t;
    begin
        p_ready = 100;
        plen = 0;
        for (t = 0; t < 6; t = t + 1) begin
            emit(insn(8'h01, 0, 4, 64 * t, 2, N, N));
            delay_at[t] = 30;
        end
        emit(insn(8'h04, 0, 1, 5, 0, 0, 0));
        emit(insn(8'h08, 0, 0, 0, 0, 0, 0));
        run_prog;
        for (t = 1; t < 4; t = t + 1)
        if (issue_edge[t] != issue_edge[t-1] + 1) begin
            $display(
                "FAIL: seq: load %0d issued at edge %0d, load %0d at %0d: expected consecutive",
                t - 1, issue_edge[t-1], t, issue_edge[t]);
            $finish;
        end
        if (issue_edge[4] < issue_edge[0] + 30 || issue_edge[6] < issue_edge[5] + 30) begin
            $display(
                "FAIL: seq: a fifth load issued at edge %0d with four in flight since %0d, or the MATMUL at %0d before the last load (%0d) was done",
                issue_edge[4], issue_edge[0], issue_edge[6], issue_edge[5]);
            $finish;
        end
        plen = 0;
        emit(insn(8'h01, 0, 2, 0, 0, N, N));
        emit(insn(8'h02, 0, 2, 0, 0, N, N));
        emit(insn(8'h01, 0, 2, 0, 0, N, N));
        emit(insn(8'h08, 0, 0, 0, 0, 0, 0));
        fault_at[1] = 1'b1;
        fault_at[2] = 1'b1;
        delay_at[0] = 10;
        delay_at[1] = 3;
        delay_at[2] = 1;
        run_prog;
        if (m_code != 6 || m_pc != 1) begin
            $display("FAIL: seq: two load faults: code %0d at pc %0d; expected 6 at pc 1", m_code,
                     m_pc);
            $finish;
        end
    end
endtask

// A ZERO on rows an in-flight RD_HOST writes waits for it, and so does an RD_HOST on rows an
// in-flight ZERO writes (the zero engine is not in order with the loads); a ZERO on other
// rows issues at once beside the load.
task zero_load;
    begin
        p_ready = 100;
        plen = 0;
        emit(insn(8'h01, 0, 4, 0, 2, N, N));
        delay_at[0] = 25;
        emit(insn(8'h09, 0, 3, 0, 5, 0, 0));  // rows 5..7 meet the load's 2..5
        emit(insn(8'h09, 0, 2, 0, 20, 0, 0));
        delay_at[2] = 25;
        emit(insn(8'h01, 0, 2, 64, 21, N, N));  // meets the second ZERO
        emit(insn(8'h09, 0, 2, 0, 30, 0, 0));
        emit(insn(8'h01, 0, 2, 64, 40, N, N));  // beside it
        emit(insn(8'h08, 0, 0, 0, 0, 0, 0));
        run_prog;
        if (issue_edge[1] < issue_edge[0] + 25 || issue_edge[3] < issue_edge[2] + 25 ||
                issue_edge[5] != issue_edge[4] + 1) begin
            $display(
                "FAIL: seq: ZERO and loads: issued at edges %0d %0d %0d %0d %0d %0d; expected the 2nd and 4th held 25 cycles, the 6th right after the 5th",
                issue_edge[0], issue_edge[1], issue_edge[2], issue_edge[3], issue_edge[4],
                issue_edge[5]);
            $finish;
        end
    end
endtask

// An RD_HOST of len > N holds back instructions on any of its rows * ceil(len / N) UB
// rows (its last one included) and no others.
task wide_host;
    begin
        p_ready = 100;
        plen = 0;
        emit(insn(8'h01, 0, 2, 0, 4, 3 * N, 3 * N));  // UB rows 4..9
        delay_at[0] = 25;
        emit(insn(8'h04, 0, 1, 9, 0, 0, 0));  // reads row 9
        emit(insn(8'h01, 0, 2, 64, 20, 3 * N + 1, 4 * N));  // UB rows 20..27
        delay_at[2] = 25;
        emit(insn(8'h09, 0, 1, 0, 28, 0, 0));  // beside it
        emit(insn(8'h09, 0, 1, 0, 27, 0, 0));  // on its last row
        emit(insn(8'h08, 0, 0, 0, 0, 0, 0));
        run_prog;
        if (issue_edge[1] < issue_edge[0] + 25 || issue_edge[3] != issue_edge[2] + 1 ||
                issue_edge[4] < issue_edge[2] + 25) begin
            $display(
                "FAIL: seq: wide RD_HOST: issued at edges %0d %0d %0d %0d %0d; expected the 2nd and 5th held 25 cycles, the 4th right after the 3rd",
                issue_edge[0], issue_edge[1], issue_edge[2], issue_edge[3], issue_edge[4]);
            $finish;
        end
    end
endtask

// ISA 1.2: an ACTIVATE with a UB row step holds back instructions on any row of its
// footprint [a, a + (rows-1)*step + 1), the rows between its output rows included, not one
// right after it; a WR_HOST from UB of len > N holds back a write to the last of its
// rows * ceil(len / N) UB rows, not one to the row after.
task step_wide_wr;
    begin
        p_ready = 100;
        plen = 0;
        emit(insn(8'h05, 0, 3, 4, 0, 5, 0));  // writes UB rows 4, 9, 14
        delay_at[0] = 25;
        emit(insn(8'h09, 0, 1, 0, 15, 0, 0));  // beside it
        emit(insn(8'h04, 0, 1, 14, 20, 0, 0));  // reads its last row (ACC rows apart)
        emit(insn(8'h08, 0, 0, 0, 0, 0, 0));
        run_prog;
        if (issue_edge[1] != issue_edge[0] + 1 || issue_edge[2] < issue_edge[0] + 25) begin
            $display(
                "FAIL: seq: ACTIVATE step: issued at edges %0d %0d %0d; expected the 2nd right after the 1st, the 3rd held 25 cycles",
                issue_edge[0], issue_edge[1], issue_edge[2]);
            $finish;
        end
        plen = 0;
        emit(insn(8'h05, 8'h40, 3, 4, 0, 5, 32'h0000_0111));  // POOL, UB rows 4, 9, 14
        delay_at[0] = 25;
        emit(insn(8'h06, 0, 1, 0, 7, N, N));  // reads row 7, between two of its rows
        emit(insn(8'h08, 0, 0, 0, 0, 0, 0));
        run_prog;
        if (issue_edge[1] < issue_edge[0] + 25) begin
            $display(
                "FAIL: seq: ACTIVATE step: a WR_HOST inside its footprint issued at edge %0d, the ACTIVATE at %0d",
                issue_edge[1], issue_edge[0]);
            $finish;
        end
        plen = 0;
        emit(insn(8'h06, 0, 2, 0, 20, 3 * N + 1, 4 * N));  // reads UB rows 20..27
        delay_at[0] = 25;
        emit(insn(8'h09, 0, 1, 0, 28, 0, 0));  // beside it
        emit(insn(8'h05, 0, 1, 27, 0, 0, 0));  // writes its last row
        emit(insn(8'h08, 0, 0, 0, 0, 0, 0));
        run_prog;
        if (issue_edge[1] != issue_edge[0] + 1 || issue_edge[2] < issue_edge[0] + 25) begin
            $display(
                "FAIL: seq: wide WR_HOST: issued at edges %0d %0d %0d; expected the 2nd right after the 1st, the 3rd held 25 cycles",
                issue_edge[0], issue_edge[1], issue_edge[2]);
            $finish;
        end
    end
endtask
