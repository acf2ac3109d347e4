// tb_core_cases.vh - tb_core's directed programs (streaming, chains, a convolution, ISA 1.2's
// wide rows and steps, ISA 1.3's bf16) and its error programs. Included inside tb_core's
// module: the tasks use its device, reference model and checks.

task stream;
    reg [31:0] v;
    integer rows_total;
    begin
        mem_timing(2, 0, 100, 0);
        mem_random(MEMB);
        nprog = 0;
        emit(insn(OP_RD_WEIGHT, 0, N, 0, 0, N, N));
        emit(insn(OP_RD_WEIGHT, 0, N, N * N, 0, N, N));
        emit(insn(OP_RD_WEIGHT, 0, N, 2 * N * N, 0, N, N));
        emit(insn(OP_RD_HOST, 0, 2 * N, 4 * N * N, 0, N, N));
        emit(insn(OP_SYNC, 0, 0, 0, 0, 0, 0));
        emit(insn(OP_MATMUL, F_LOAD, 2 * N, 0, 0, 0, 0));
        emit(insn(OP_MATMUL, F_LOAD, 2 * N, 0, 2 * N, 0, 0));
        emit(insn(OP_MATMUL, F_LOAD | F_ACC, 2 * N - 1, 1, 0, 0, 0));
        emit(insn(OP_MATMUL, F_UNSIGNED, 2 * N, 0, 4 * N, 0, 0));
        emit(insn(OP_HALT, 0, 0, 0, 0, 0, 0));
        rows_total = 8 * N - 1;
        core_reset(MEMB);
        fire_count = 0;
        fire_first = -1;
        run(100000);
        ref_run(nprog);
        compare("stream");
        if (fire_count != rows_total || fire_last - fire_first + 1 != rows_total) begin
            $display(
                "FAIL: stream: %0d MATMUL rows entered the array over %0d cycles, expected %0d rows in consecutive cycles",
                fire_count, fire_last - fire_first + 1, rows_total);
            $finish;
        end
        check_counters(nprog, 1, 3 * N * N + 2 * N * N, 0);
        check_perf(P_MXU_BUSY, rows_total, "PERF_MXU_BUSY");
        perf_read(P_ACTIVE, pv);
        check(pv >= run_cycles - 2 && pv <= run_cycles + 2, "PERF_ACTIVE ~ cycles to HALT",
              run_cycles, pv);
        check_csr(A_ID, 32'h54505531, "ID");
        check_csr(A_VERSION, 32'h00010004, "VERSION");
        check_csr(A_ARRAY_N, N, "ARRAY_N");
        check_csr(A_UB_ROWS, UB_ROWS, "UB_ROWS");
        check_csr(A_ACC_ROWS, ACC_ROWS, "ACC_ROWS");
        check_csr(A_WFIFO_TILES, WFIFO_TILES, "WFIFO_TILES");
        check_csr(A_IQ_DEPTH, IQ_DEPTH, "IQ_DEPTH");
        check_csr(A_BUS_BYTES, 4 * N, "BUS_BYTES");
        csr_write(A_CTRL, 32'h2);
        for (j = 0; j < 10; j = j + 1) check_perf(j, 0, "performance counter after CTRL clear");
        check_csr(A_SYNC_COUNT, 1, "SYNC_COUNT after CTRL clear");
        check_csr(A_INSN_COUNT, nprog, "INSN_COUNT after CTRL clear");
        $display("stream: %0d MATMUL rows in %0d consecutive cycles, %0d cycles in all",
                 rows_total, fire_last - fire_first + 1, run_cycles);
    end
endtask

// ISA 1.3: a bf16 GEMM of two K tiles with int8 MATMULs between them, then the activate and
// store paths in fp32 (the header's "bf16"). Memory holds bf16 edge values (tb_bf16.vh) and an
// fp32 bias row; the int8 tile and rows are random bytes.
task bf16(input integer l, input integer b, input integer r, input integer j);
    integer x1a, x8a, w8a, o16a, o32c;
    integer i;
    reg [15:0] v;
    reg [31:0] f;
    begin
        mem_timing(l, b, r, j);
        mem_random(MEMB);
        m_rows = 2 * N + 3;
        x1a = 0;
        x2a = x1a + m_rows * 2 * N;
        x8a = x2a + m_rows * 2 * N;
        w1a = x8a + m_rows * N;
        w2a = w1a + 2 * N * N;
        w8a = w2a + N * (2 * N + 6);
        pa = w8a + N * N;
        o16a = pa + 3 * 4 * N;
        o32a = o16a + m_rows * 2 * N;
        o32b = o32a + m_rows * 4 * N;
        o32c = o32b + 3 * (4 * N + 8);
        for (i = x1a; i < x8a; i = i + 2) begin
            v = tb_bf16($urandom);
            {rmem[i+1], rmem[i]} = v;
        end
        for (i = w1a; i < w8a; i = i + 2) begin
            v = tb_bf16($urandom);
            {rmem[i+1], rmem[i]} = v;
        end
        for (i = 0; i < N; i = i + 1) begin
            f = tb_fp32($urandom);
            {rmem[pa+4*i+3], rmem[pa+4*i+2], rmem[pa+4*i+1], rmem[pa+4*i]} = f;
        end
        for (i = 0; i < MEMB; i = i + 1) u_mem.mem[i] = rmem[i];
        nprog = 0;
        emit(insn(OP_RD_PARAMS, 0, 3, pa, 0, 4 * N, 4 * N));
        emit(insn(OP_RD_WEIGHT, F_BF16, N, w1a, 0, 2 * N, 2 * N));
        emit(insn(OP_RD_WEIGHT, 0, N, w8a, 0, N, N));
        emit(insn(OP_RD_WEIGHT, F_BF16, N - 1, w2a, 0, 2 * N - 1, 2 * N + 6));
        emit(insn(OP_RD_HOST, 0, m_rows, x1a, 0, 2 * N, 2 * N));  // UB row pairs 0, 2, ..
        emit(insn(OP_RD_HOST, 0, m_rows, x2a, 128, 2 * N, 2 * N));
        emit(insn(OP_RD_HOST, 0, m_rows, x8a, 256, N, N));
        emit(insn(OP_MATMUL, F_BF16 | F_LOAD, m_rows, 0, 0, 0, 2));
        emit(insn(OP_MATMUL, F_LOAD, m_rows, 256, 64, 0, 0));
        emit(insn(OP_MATMUL, F_BF16 | F_LOAD | F_ACC, m_rows, 128, 0, 0, 2));
        emit(insn(OP_MATMUL, F_BF16, 3, 1, 128, 0, 3));  // pairs from odd rows
        emit(insn(OP_MATMUL, 0, 2, 256, 132, 0, 0));  // int8 on the bf16 tile: defined
        emit(insn(OP_ACTIVATE, F_BF16 | F_BIAS | F_RELU, m_rows, 512, 0, 2, 0));
        emit(insn(OP_ACTIVATE, F_BF16 | F_POOL, 3, 640, 0, 3, {16'd4, 8'd2, 4'd2, 4'd2}));
        emit(insn(OP_ACTIVATE, F_BF16 | F_BIAS, 3, 700, 128, 2, 0));
        emit(insn(OP_WR_HOST, 0, m_rows, o16a, 512, 2 * N, 2 * N));
        emit(insn(OP_WR_HOST, F_SRC_ACC | F_BF16 | F_BIAS | F_RELU, m_rows, o32a, 0, 4 * N, 4 * N));
        emit(insn(OP_WR_HOST, F_SRC_ACC | F_BF16, 3, o32b, 128, 4 * N - 4, 4 * N + 8));
        emit(insn(OP_WR_HOST, F_SRC_ACC | F_BIAS, m_rows, o32c, 64, 4 * N, 4 * N));
        emit(insn(OP_SYNC, 0, 0, 0, 0, 0, 0));
        emit(insn(OP_HALT, 0, 0, 0, 0, 0, 0));
        core_reset(MEMB);
        run(200000);
        ref_run(nprog);
        compare("bf16");
        check_counters(nprog, 1, 3 * 4 * N + ld_bytes(2, N, 2 * N, 2 * N) + N * N + ld_bytes(
                       2, N - 1, 2 * N - 1, 2 * N + 6) + 2 * ld_bytes(2, m_rows, 2 * N, 2 * N
                       ) + ld_bytes(4, m_rows, N, N),
                       m_rows * (2 * N + 4 * N + 4 * N) + 3 * (4 * N - 4));
        $display("bf16 (latency %0d+%0d, back-pressure %0d%%, responses %0d%%): %0d cycles", l, j,
                 b, r, run_cycles);
    end
endtask

// A chain where each unit waits for another: RD_HOST -> MATMUL -> ACTIVATE -> WR_HOST ->
// (memory) -> the next round's RD_HOST, with parameters reloaded mid-way.
task chain;
    integer r;
    integer rows;
    integer src;
    integer dst;
    begin
        mem_timing(5, 30, 60, 4);
        mem_random(MEMB);
        put_params(8192, 4 * N);
        nprog = 0;
        emit(insn(OP_RD_PARAMS, 0, 3, 8192, 0, 4 * N, 4 * N));
        emit(insn(OP_RD_WEIGHT, 0, N, 0, 0, N, N));
        emit(insn(OP_RD_WEIGHT, 0, N, N * N, 0, N, N));
        emit(insn(OP_MATMUL, F_LOAD, 1, 0, 0, 0, 0));
        for (r = 0; r < 9; r = r + 1) begin
            rows = 1 + r % 4;
            src  = 4096 + 512 * r;
            dst  = src + 512;  // the next round's source
            emit(insn(OP_RD_HOST, 0, rows, src, 8 * (r % 2), N, N));
            emit(insn(
                 OP_MATMUL,
                 (r == 4 ? F_LOAD : 0) | (r % 3 == 0 ? F_ACC : 0),
                 rows,
                 8 * (r % 2),
                 4 * (r % 3),
                 0,
                 0
                 ));
            emit(insn(
                 OP_ACTIVATE, (r % 2) ? F_RELU : F_BIAS, rows, 32 + 8 * (r % 2), 4 * (r % 3), 0, 0
                 ));
            emit(insn(
                 OP_WR_HOST,
                 F_SRC_ACC | F_BIAS | F_RELU,
                 rows,
                 12288 + 256 * r,
                 4 * (r % 3),
                 4 * N,
                 4 * N
                 ));
            emit(insn(OP_WR_HOST, 0, rows, dst, 32 + 8 * (r % 2), N, N));
            // Independent of the round: it loads while the store above runs (ids interleave).
            emit(insn(OP_RD_HOST, 0, 2 * N, 20480 + 512 * r, 96, N, N));
            if (r == 5) emit(insn(OP_RD_PARAMS, 0, 3, dst, 0, 4 * N, N));
        end
        emit(insn(OP_SYNC, 0, 0, 0, 0, 0, 0));
        emit(insn(OP_HALT, 0, 0, 0, 0, 0, 0));
        core_reset(MEMB);
        run(200000);
        ref_run(nprog);
        compare("chain");
        check_csr(A_STATUS, 32'h2, "chain: STATUS after HALT");
        check_csr(A_INSN_COUNT, nprog, "chain: INSN_COUNT");
        $display("chain: %0d instructions, %0d cycles", nprog, run_cycles);
    end
endtask

// A 6 x 6 x N image (NHWC, N channels), padded by one on every side in the UB (rows
// 0..63: 8 x 8 pixels), convolved with a 3 x 3 kernel at stride 2 (3 x 3 outputs, one K tile
// per kernel position), 2 x 2 max-pooled with stride 1 (2 x 2 outputs), as CONV2D runs it.
localparam CV_IN = 0, CV_K = 4096, CV_P = 16384, CV_OUT = 20480, CV_OUT2 = 24576;
task conv;
    integer y, t, oy, rd_total;  // rd_total: bytes the loads read
    begin
        mem_timing(6, 25, 70, 3);
        mem_random(MEMB);
        put_params(CV_P, 4 * N);
        nprog = 0;
        emit(insn(OP_RD_PARAMS, 0, 3, CV_P, 0, 4 * N, 4 * N));
        // Padding: the top row and the left pixel, then per image row its 6 pixels and the
        // right pixel merged with the next row's left one, and the bottom row.
        emit(insn(OP_ZERO, 0, 9, 0, 0, 0, 0));
        for (y = 0; y < 6; y = y + 1) begin
            emit(insn(OP_RD_HOST, 0, 6, CV_IN + 6 * N * y, 8 * (y + 1) + 1, N, N));
            emit(insn(OP_ZERO, 0, y == 5 ? 9 : 2, 0, 8 * (y + 1) + 7, 0, 0));
        end
        // Kernel position t = 3 dy + dx: output row oy reads pixels (2 oy + dy, dx + 2 ox).
        for (t = 0; t < 9; t = t + 1) begin
            emit(insn(OP_RD_WEIGHT, 0, N, CV_K + t * N * N, 0, N, N));
            for (oy = 0; oy < 3; oy = oy + 1)
            emit(insn(
                 OP_MATMUL,
                 (oy == 0 ? F_LOAD : 0) | (t > 0 ? F_ACC : 0),
                 3,
                 8 * (2 * oy + t / 3) + t % 3,
                 3 * oy,
                 0,
                 2
                 ));
        end
        // 2 x 2 windows, stride 1: pooled row i reads ACC rows 3i.. and 3i+3.. (pitch 3).
        for (oy = 0; oy < 2; oy = oy + 1)
        emit(insn(OP_ACTIVATE, F_POOL | F_BIAS | F_RELU, 2, 100 + 2 * oy, 3 * oy, 0, 32'h0003_0122
             ));
        emit(insn(OP_WR_HOST, 0, 4, CV_OUT, 100, N, N));
        // ZERO then RD_HOST on the same rows (the load wins), RD_HOST then ZERO (the ZERO
        // wins), and a ZERO on the rows the convolution read, read back by WR_HOST.
        emit(insn(OP_ZERO, 0, 4, 0, 200, 0, 0));
        emit(insn(OP_RD_HOST, 0, 3, CV_IN, 201, N, N));
        emit(insn(OP_RD_HOST, 0, 4, CV_IN + 64, 210, N, N));
        emit(insn(OP_ZERO, 0, 2, 0, 211, 0, 0));
        emit(insn(OP_ZERO, 0, 5, 0, 20, 0, 0));
        emit(insn(OP_WR_HOST, 0, 16, CV_OUT2, 200, N, N));
        emit(insn(OP_WR_HOST, 0, 8, CV_OUT2 + 16 * N, 16, N, N));
        // Stride 0 (consecutive rows), a large stride, and overlapping pooling windows
        // (width 3, pitch 1, step 2) over them with ReLU only.
        emit(insn(OP_MATMUL, 0, 4, 8, 40, 0, 0));
        emit(insn(OP_MATMUL, F_UNSIGNED, 3, 1, 44, 0, 27));
        emit(insn(OP_ACTIVATE, F_POOL | F_RELU, 2, 120, 40, 0, 32'h0001_0232));
        emit(insn(OP_WR_HOST, F_SRC_ACC, 7, CV_OUT2 + 32 * N, 40, 4 * N, 4 * N));
        emit(insn(OP_WR_HOST, 0, 2, CV_OUT2 + 64 * N, 120, N, N));
        emit(insn(OP_HALT, 0, 0, 0, 0, 0, 0));
        core_reset(MEMB);
        run(200000);
        ref_run(nprog);
        compare("conv");
        rd_total = 3 * 4 * N + 36 * N + 9 * N * N + 7 * N;
        check_counters(nprog, 0, rd_total, 4 * N + 24 * N + 7 * 4 * N + 2 * N);
        $display("conv: %0d instructions, %0d cycles", nprog, run_cycles);
    end
endtask

// ISA 1.2: ACTIVATE output rows len apart, read back (and overwritten) by WR_HOSTs of up to
// 4N bytes per memory row assembled from ceil(len / N) UB rows.
localparam WW_W = 0, WW_X = 1024, WW_X2 = 2048, WW_P = 3072, WW_O = 8192;
task widewr;
    begin
        mem_timing(6, 25, 70, 3);
        mem_random(MEMB);
        put_params(WW_P, 4 * N);
        nprog = 0;
        emit(insn(OP_RD_PARAMS, 0, 3, WW_P, 0, 4 * N, 4 * N));
        emit(insn(OP_RD_WEIGHT, 0, N, WW_W, 0, N, N));
        emit(insn(OP_RD_HOST, 0, 2 * N, WW_X, 0, N, N));
        emit(insn(OP_MATMUL, F_LOAD, 2 * N, 0, 0, 0, 0));
        // Output rows 3 apart (300, 303, ..), POOL 2 x 1 windows (step 2, pitch 1) between
        // them (301, 304, ..), step 255 (700, 955) and step 1 (consecutive).
        emit(insn(OP_ACTIVATE, F_BIAS | F_RELU, 2 * N, 300, 0, 3, 0));
        emit(insn(OP_ACTIVATE, F_POOL | F_BIAS, N, 301, 0, 3, 32'h0001_0212));
        emit(insn(OP_ACTIVATE, 0, 2, 700, 1, 255, 0));
        emit(insn(OP_ACTIVATE, F_RELU, N, 1000, 2, 1, 0));
        // Wide rows read back: 3 UB rows per memory row (len 3N and 2N+3), ...
        emit(insn(OP_WR_HOST, 0, N, WW_O, 300, 3 * N, 3 * N + 5));
        emit(insn(OP_WR_HOST, 0, N, WW_O + 1024, 300, 2 * N + 3, 2 * N + 3));
        // ... rows among them overwritten only after those reads, ...
        emit(insn(OP_ACTIVATE, 0, N, 303, 5, 6, 0));
        emit(insn(OP_WR_HOST, 0, 2, WW_O + 2048, 952, 4 * N, 4 * N + 1));  // 952..959
        emit(insn(OP_WR_HOST, 0, 3, WW_O + 3072, 1000, N + 1, 0));  // the last row wins
        emit(insn(OP_WR_HOST, 0, 4, WW_O + 4096, 1000, 2 * N, 2 * N));  // 1000..1007
        emit(insn(OP_RD_HOST, 0, 1, WW_X2, 1004, 4 * N, 0));  // 1004..1007 after the reads
        emit(insn(OP_WR_HOST, 0, 1, WW_O + 5120, 1004, 4 * N, 0));
        // ... and 4 UB rows per memory row over what the last ACTIVATE wrote.
        emit(insn(OP_WR_HOST, 0, N, WW_O + 6144, 300, 4 * N, 4 * N));
        emit(insn(OP_HALT, 0, 0, 0, 0, 0, 0));
        core_reset(MEMB);
        run(200000);
        ref_run(nprog);
        compare("widewr");
        check_counters(
            nprog, 0, 3 * 4 * N + N * N + 2 * N * N + 4 * N,
            N * 3 * N + N * (2 * N + 3) + 2 * 4 * N + 3 * (N + 1) + 4 * 2 * N + 4 * N + N * 4 * N);
        $display("widewr: %0d instructions, %0d cycles", nprog, run_cycles);
    end
endtask

// Runs prog (built by the caller) and expects the error; the reference runs the instructions
// before the failing one unless compare_state is 0.
task expect_error(input [8*16-1:0] name, input [31:0] code, input [31:0] pc,
                  input integer mem_size_csr, input compare_state);
    reg [31:0] v;
    begin
        core_reset(mem_size_csr);
        run(20000);
        check(status_at_stop === 32'h4, "STATUS when ERROR rises (nothing in flight)", 4,
              status_at_stop);
        check_csr(A_STATUS, 32'h4, "STATUS after an error");
        check_csr(A_ERROR_CODE, code, "ERROR_CODE");
        check_csr(A_ERROR_PC, pc, "ERROR_PC");
        check(iq_ready === 1'b0, "iq_ready after an error", 0, iq_ready);
        check(irq === 1'b1, "irq after an error", 1, irq);
        if (compare_state) begin
            ref_run(pc);
            compare(name);
        end
        csr_read(A_ERROR_CODE, v);
        $display("error %0s: code %0d at pc %0d", name, v, pc);
    end
endtask

task errors_all;
    integer t;
    begin
        mem_timing(3, 20, 100, 0);
        mem_random(MEMB);
        nprog = 0;
        emit(insn(OP_RD_HOST, 0, 4, 0, 300, N, N));
        emit(insn(OP_SYNC, 0, 0, 0, 0, 0, 0));
        emit(insn(8'h0b, 0, 1, 0, 0, 0, 0));
        emit(insn(OP_RD_HOST, 0, 4, 0, 310, N, N));
        emit(insn(OP_HALT, 0, 0, 0, 0, 0, 0));
        expect_error("illegal", 1, 2, MEMB, 1);

        nprog = 0;
        emit(insn(OP_RD_HOST, 0, 3, 64, 320, N, N));
        emit(insn(OP_ACTIVATE, 0, 3, 330, 0, 256, 0));  // ISA 1.2: a UB row step <= 255
        emit(insn(OP_HALT, 0, 0, 0, 0, 0, 0));
        expect_error("bad operand", 2, 1, MEMB, 1);

        nprog = 0;
        emit(insn(OP_RD_HOST, 0, 3, 64, 320, 4 * N, 4 * N));
        emit(insn(OP_RD_HOST, 0, 1, 0, 0, 4 * N + 1, 0));  // len at most 4N
        emit(insn(OP_HALT, 0, 0, 0, 0, 0, 0));
        expect_error("RD_HOST len", 2, 1, MEMB, 1);

        nprog = 0;
        emit(insn(OP_RD_HOST, 0, 2, 64, UB_ROWS - 8, 4 * N, 4 * N));  // the last 8 rows
        emit(insn(OP_RD_HOST, 0, 2, 64, UB_ROWS - 7, 4 * N, 4 * N));  // 8 rows, 7 left
        emit(insn(OP_HALT, 0, 0, 0, 0, 0, 0));
        expect_error("RD_HOST UB range", 3, 1, MEMB, 1);

        nprog = 0;
        emit(insn(OP_RD_HOST, 0, 2 * N, 0, 0, 4 * N, 4 * N));  // UB rows 0..8N-1
        emit(insn(OP_ACTIVATE, 0, 3, UB_ROWS - 9, 0, 4, 0));  // rows UB_ROWS-9, -5, -1
        emit(insn(OP_ACTIVATE, 0, 3, UB_ROWS - 8, 0, 4, 0));  // the last one past the UB
        emit(insn(OP_HALT, 0, 0, 0, 0, 0, 0));
        expect_error("ACT UB range", 3, 2, MEMB, 1);

        nprog = 0;
        emit(insn(OP_RD_HOST, 0, 2 * N, 0, 0, 4 * N, 4 * N));
        emit(insn(OP_WR_HOST, 0, 2, 4096, 0, 4 * N, 4 * N));
        emit(insn(OP_WR_HOST, 0, 1, 4096, 0, 4 * N + 1, 0));  // len at most 4N
        emit(insn(OP_HALT, 0, 0, 0, 0, 0, 0));
        expect_error("WR_HOST len", 2, 2, MEMB, 1);

        nprog = 0;
        emit(insn(OP_WR_HOST, 0, 2, 4096, UB_ROWS - 6, 3 * N, 3 * N));  // the last 6 rows
        emit(insn(OP_WR_HOST, 0, 2, 4096, UB_ROWS - 5, 3 * N, 3 * N));  // 6 rows, 5 left
        emit(insn(OP_HALT, 0, 0, 0, 0, 0, 0));
        expect_error("WR_HOST UB range", 3, 1, MEMB, 1);

        nprog = 0;
        emit(insn(OP_RD_HOST, 0, 2, 128, 340, N, N));
        emit(insn(OP_WR_HOST, 0, 2, 4096, 340, N, N));
        emit(insn(OP_MATMUL, 0, 3, UB_ROWS - 2, ACC_ROWS, 0, 0));  // UB and ACC out of range
        emit(insn(OP_HALT, 0, 0, 0, 0, 0, 0));
        expect_error("UB range", 3, 2, MEMB, 1);

        nprog = 0;
        emit(insn(OP_RD_WEIGHT, 0, N, 256, 0, N, N));
        emit(insn(OP_RD_HOST, 0, 2, MEMB - N, 350, N, N));  // ends N bytes past MEM_SIZE
        emit(insn(OP_HALT, 0, 0, 0, 0, 0, 0));
        expect_error("MEM range", 5, 1, MEMB, 1);

        nprog = 0;
        emit(insn(OP_RD_HOST, 0, 1, 512, 360, N, N));
        emit(insn(OP_MATMUL, F_LOAD, 1, 360, 0, 0, 0));
        emit(insn(OP_HALT, 0, 0, 0, 0, 0, 0));
        expect_error("WFIFO empty", 7, 1, MEMB, 1);

        nprog = 0;
        for (t = 0; t <= WFIFO_TILES; t = t + 1) emit(insn(OP_RD_WEIGHT, 0, N, 64 * t, 0, N, N));
        emit(insn(OP_HALT, 0, 0, 0, 0, 0, 0));
        expect_error("WFIFO full", 8, WFIFO_TILES, MEMB, 1);

        // MEM_SIZE beyond the memory: the memory answers err; the load unit's instruction
        // is named, not the one at the head.
        nprog = 0;
        emit(insn(OP_RD_HOST, 0, 2, 0, 370, N, N));
        emit(insn(OP_RD_HOST, 0, 2, MEMB + 64, 380, N, N));
        emit(insn(OP_MATMUL, 0, 1, 0, 8, 0, 0));
        emit(insn(OP_HALT, 0, 0, 0, 0, 0, 0));
        expect_error("MEM fault", 6, 1, MEMB + 4096, 0);
    end
endtask
