`default_nettype none
// tpu_dma_wr (with tpu_act) against the shared memory model (model/mem_model.v: fixed ack
// latency, random req_ready, random gaps between acks, err beyond MEM_SIZE, refused requests held
// stable) and UB/ACC models that answer the cycle after a read with junk in every other cycle.
// Each instruction is checked for: the whole memory afterwards (bytes 0..len-1 of each memory row,
// in row order: relu(acc + bias) for ACC rows, from UB (ISA 1.2, len up to 4N) the concatenation
// of its S = ceil(len / N) UB rows b + i*S .. b + i*S + S-1; none of a failing request's rows),
// the request sequence (one per memory row at a + i*stride of len bytes, or, for rows back to
// back, stride == len, rows i .. i+k-1 in one request of k*len bytes at a + i*len, k =
// min(floor(4N / len), rows left)), the source reads (b, b+1, ... once each: rows*S of them from
// UB), exactly one done pulse after the last ack, fault, no activity outside the instruction, at
// most DEPTH requests started ahead of the memory while it refuses requests, and, when the memory
// always accepts, one request per k*S cycles (one per cycle for k = S = 1).
// Wide rows: len N+1, 2N, 3N-1, 3N+1, 4N and N+3 (not a multiple of N), 1 and several rows,
// strides other than len (0, 1, larger), requests refused for long stretches and at random while
// rows are assembled, err acks, the last UB rows, random ones; two instructions back to back
// (the second accepted in the cycle of the first's done), narrow and wide both ways.
// Rows back to back from UB and ACC: narrow, wide (S = 2, two per request), len not dividing 4N,
// rows not a multiple of k, under back-pressure, with a failing request.
// BF16 (WR_HOST.SRC_ACC.BF16): ACC rows and biases of tb_bf16.vh's fp32 edge values, every
// bias/ReLU combination, rows back to back and not, with the rule of docs/isa.md "Floating point
// (bf16)" (rtl/tpu_fp.vh): relu(acc + bias) in fp32, the ACC bits unchanged without both.
module tb_dma_wr;
    `include "tpu_fp.vh"
    `include "tb_bf16.vh"
    parameter N = 8;
    localparam DEPTH = 8;
    localparam MEM_SIZE = 4096;
    localparam ROWS = 128;  // UB and ACC rows

    reg clk = 1'b0;
    always #5 clk = !clk;
    reg rst = 1'b1;

    reg cmd_valid = 1'b0;
    wire cmd_ready;
    reg [15:0] cmd_rows = 16'd0;
    reg [31:0] cmd_a = 32'd0;
    reg [19:0] cmd_b = 20'd0;
    reg [11:0] cmd_len = 12'd0;
    reg [31:0] cmd_stride = 32'd0;
    reg cmd_src_acc = 1'b0;
    reg cmd_bias = 1'b0;
    reg cmd_relu = 1'b0;
    reg bf16 = 1'b0;  // the instructions run are BF16, reading accf
    wire done;
    wire fault;
    wire req_valid;
    wire req_ready;
    wire [31:0] req_addr;
    wire [15:0] req_len;
    wire [32*N-1:0] req_wdata;
    wire rsp_valid;
    wire rsp_err;
    wire ub_en;
    wire [19:0] ub_addr;
    reg [8*N-1:0] ub_data = {8 * N{1'b0}};
    wire acc_en;
    wire [19:0] acc_addr;
    reg [32*N-1:0] acc_data = {32 * N{1'b0}};
    reg [32*N-1:0] bias = {32 * N{1'b0}};

    tpu_dma_wr #(
        .N(N),
        .DEPTH(DEPTH)
    ) dut (
        .clk(clk),
        .rst(rst),
        .cmd_valid(cmd_valid),
        .cmd_ready(cmd_ready),
        .cmd_rows(cmd_rows),
        .cmd_a(cmd_a),
        .cmd_b(cmd_b),
        .cmd_len(cmd_len),
        .cmd_stride(cmd_stride),
        .cmd_src_acc(cmd_src_acc),
        .cmd_bias(cmd_bias),
        .cmd_relu(cmd_relu),
        .cmd_bf16(bf16),
        .done(done),
        .fault(fault),
        .req_valid(req_valid),
        .req_ready(req_ready),
        .req_addr(req_addr),
        .req_len(req_len),
        .req_wdata(req_wdata),
        .rsp_valid(rsp_valid),
        .rsp_err(rsp_err),
        .ub_en(ub_en),
        .ub_addr(ub_addr),
        .ub_data(ub_data),
        .acc_en(acc_en),
        .acc_addr(acc_addr),
        .acc_data(acc_data),
        .bias(bias)
    );

    integer seed = 7;
    integer cycle = 0;

    // A request is answered with err unless all its bytes are below MEM_SIZE (no wrap at 2^32).
    function in_range(input [31:0] addr, input [15:0] len);
        in_range = {32'd0, addr} + len <= MEM_SIZE;
    endfunction

    always @(posedge clk) cycle <= cycle + 1;

    // ---------------------------------------------------------------- memory --
    integer latency = 1;  // cycles from acceptance to the earliest ack, >= 1
    integer ready_pct = 100;  // chance per cycle that req_ready is high
    integer rsp_pct = 100;  // chance per cycle that a due ack is given
    integer refuse = 0;  // cycles left in which req_ready is held low

    always @(posedge clk) if (refuse > 0) refuse <= refuse - 1;

    mem_model #(
        .BUS  (4 * N),
        .BYTES(MEM_SIZE),
        .SEED (13)
    ) u_mem (
        .clk(clk),
        .rst(rst),
        .size(MEM_SIZE),
        .latency(latency),
        .jitter(32'd0),
        .ready_pct(refuse > 0 ? 0 : ready_pct),
        .rsp_pct(rsp_pct),
        .req_valid(req_valid),
        .req_ready(req_ready),
        .req_we(1'b1),
        .req_addr(req_addr),
        .req_len(req_len),
        .req_id(1'b0),
        .req_wdata(req_wdata),
        .rsp_valid(rsp_valid),
        .rsp_ready(1'b1),
        .rsp_id(),
        .rsp_err(rsp_err),
        .rsp_rdata()
    );

    // ---------------------------------------------------- UB and ACC models --
    reg [8*N-1:0] ub[0:ROWS-1];
    reg [32*N-1:0] acc[0:ROWS-1];
    reg [32*N-1:0] accf[0:ROWS-1];  // fp32, for BF16
    integer s_j;

    always @(posedge clk) begin
        for (s_j = 0; s_j < N; s_j = s_j + 1) begin
            ub_data[8*s_j+:8] <= $random(seed);
            acc_data[32*s_j+:32] <= $random(seed);
        end
        if (ub_en) ub_data <= ub[ub_addr];
        if (acc_en) acc_data <= bf16 ? accf[acc_addr] : acc[acc_addr];
        if ((ub_en && ub_addr >= ROWS) || (acc_en && acc_addr >= ROWS)) begin
            $display("FAIL: read beyond the %0d rows (ub %b %0d, acc %b %0d)", ROWS, ub_en,
                     ub_addr, acc_en, acc_addr);
            $finish;
        end
    end

    // UB rows per memory row: ceil(len / N).
    function integer span(input [11:0] len);
        span = (len + N - 1) / N;
    endfunction

    // Memory rows per request: as many as fit the bus when they are back to back, else 1.
    function integer per_of(input [11:0] len, input [31:0] stride);
        per_of = stride == {20'd0, len} ? 4 * N / len : 1;
    endfunction

    // --------------------------------------------------------------- monitor --
    reg busy = 1'b0;
    reg cur_src_acc;
    reg [19:0] cur_b;
    reg [31:0] cur_a;
    reg [31:0] cur_stride;
    reg [11:0] cur_len;
    integer cur_span;  // reads per memory row: S from UB, 1 from ACC
    integer cur_rows;
    integer cur_per;  // memory rows per request
    integer n_sent;  // memory rows sent
    integer k_req;
    integer n_multi = 0;  // requests of more than one row since time 0
    integer n_req;
    integer n_rd;
    integer n_ack;
    integer n_done;
    integer max_ahead;  // most memory rows started and not yet accepted by the memory
    integer n_done_all = 0;  // done pulses, and those with fault, since time 0
    integer n_fault_all = 0;
    integer n_b2b = 0;  // instructions accepted in the cycle of the previous one's done
    integer first_req;
    integer last_req;
    reg fault_seen;

    always @(posedge clk) begin
        if (!rst) begin
            if (!busy && (req_valid || ub_en || acc_en || done)) begin
                $display("FAIL: activity while idle at cycle %0d (req %b ub %b acc %b done %b)",
                         cycle, req_valid, ub_en, acc_en, done);
                $finish;
            end
            if (ub_en || acc_en) begin
                if ((cur_src_acc ? ub_en : acc_en) || (cur_src_acc ? acc_addr : ub_addr) !== cur_b + n_rd) begin
                    $display(
                        "FAIL: read %0d: ub_en %b ub_addr %0d acc_en %b acc_addr %0d, expected %s row %0d",
                        n_rd, ub_en, ub_addr, acc_en, acc_addr, cur_src_acc ? "ACC" : "UB",
                        cur_b + n_rd);
                    $finish;
                end
                n_rd = n_rd + 1;
            end
            if (req_valid && req_ready) begin
                k_req = cur_rows - n_sent < cur_per ? cur_rows - n_sent : cur_per;
                if (req_addr !== cur_a + n_sent * cur_stride || req_len !== k_req * cur_len) begin
                    $display("FAIL: request %0d: addr %h len %0d, expected addr %h len %0d", n_req,
                             req_addr, req_len, cur_a + n_sent * cur_stride, k_req * cur_len);
                    $finish;
                end
                if (n_req == 0) first_req = cycle;
                last_req = cycle;
                n_req = n_req + 1;
                n_sent = n_sent + k_req;
                if (k_req > 1) n_multi = n_multi + 1;
            end
            if (rsp_valid) n_ack = n_ack + 1;
            // Requests whose reads have started (memory rows started, rounded up to requests).
            if (((n_rd + cur_span - 1) / cur_span + cur_per - 1) / cur_per - n_req > max_ahead)
                max_ahead = ((n_rd + cur_span - 1) / cur_span + cur_per - 1) / cur_per - n_req;
            if (done) begin
                n_done_all  = n_done_all + 1;
                n_fault_all = n_fault_all + fault;
                if (n_ack != n_req) begin
                    $display("FAIL: done after %0d of %0d acknowledgements", n_ack, n_req);
                    $finish;
                end
                fault_seen = fault;
                n_done = n_done + 1;
                busy = 1'b0;
            end
            if (cmd_valid && cmd_ready) begin
                if (done) n_b2b = n_b2b + 1;
                busy = 1'b1;
                cur_src_acc = cmd_src_acc;
                cur_b = cmd_b;
                cur_a = cmd_a;
                cur_stride = cmd_stride;
                cur_len = cmd_len;
                cur_span = cmd_src_acc ? 1 : span(cmd_len);
                cur_rows = cmd_rows;
                cur_per = per_of(cmd_len, cmd_stride);
                n_sent = 0;
                n_req = 0;
                n_rd = 0;
                n_ack = 0;
                n_done = 0;
                max_ahead = 0;
            end
        end
    end

    // ------------------------------------------------------- one instruction --
    reg [7:0] exp_mem[0:MEM_SIZE-1];
    integer n_tests = 0;

    // The int32 row WR_HOST stores from ACC: relu(acc + bias), lane by lane, wrapping; with
    // bf16 the fp32 one.
    function [32*N-1:0] act_row(input [32*N-1:0] a, input [32*N-1:0] bv, input use_bias,
                                input use_relu);
        integer c;
        reg [31:0] x;
        begin
            for (c = 0; c < N; c = c + 1)
            if (bf16) begin
                x = use_bias ? fp32_add(a[32*c+:32], bv[32*c+:32]) : a[32*c+:32];
                act_row[32*c+:32] = use_relu ? fp32_relu(x) : x;
            end else begin
                x = a[32*c+:32] + (use_bias ? bv[32*c+:32] : 32'd0);
                act_row[32*c+:32] = (use_relu && x[31]) ? 32'd0 : x;
            end
        end
    endfunction

    // exp_mem after the instruction (exp_fault: some request is out of range; it writes none of
    // its rows).
    reg exp_fault;
    task expect_insn(input src_acc, input use_bias, input use_relu, input [15:0] rows,
                     input [31:0] a, input [19:0] b, input [11:0] len, input [31:0] stride);
        integer i;
        integer k;
        integer s;
        integer p;
        integer g;
        reg [31:0] addr;
        reg [32*N-1:0] row;
        begin
            exp_fault = 1'b0;
            s = src_acc ? 1 : span(len);
            p = per_of(len, stride);
            for (i = 0; i < rows; i = i + 1) begin
                addr = a + i * stride;
                g = i / p * p;  // the first row of its request
                if (src_acc) row = act_row(bf16 ? accf[b+i] : acc[b+i], bias, use_bias, use_relu);
                else for (k = 0; k < s; k = k + 1) row[8*N*k+:8*N] = ub[b+i*s+k];
                if (in_range(a + g * stride, ((rows - g < p ? rows - g : p) - 1) * stride + len))
                    for (k = 0; k < len; k = k + 1) exp_mem[addr+k] = row[8*k+:8];
                else exp_fault = 1'b1;
            end
        end
    endtask

    // Offers a command at the next edge and holds it until it is taken.
    task issue(input src_acc, input use_bias, input use_relu, input [15:0] rows, input [31:0] a,
               input [19:0] b, input [11:0] len, input [31:0] stride);
        integer t;
        begin
            cmd_valid <= 1'b1;
            cmd_rows <= rows;
            cmd_a <= a;
            cmd_b <= b;
            cmd_len <= len;
            cmd_stride <= stride;
            cmd_src_acc <= src_acc;
            cmd_bias <= use_bias;
            cmd_relu <= use_relu;
            @(posedge clk);
            t = 0;
            while (!cmd_ready) begin
                @(posedge clk);
                t = t + 1;
                if (t > 20000) begin
                    $display("FAIL: cmd_ready stayed low");
                    $finish;
                end
            end
        end
    endtask

    // refuse_cycles: the memory takes no request for that many cycles after the instruction starts.
    task run(input src_acc, input use_bias, input use_relu, input [15:0] rows, input [31:0] a,
             input [19:0] b, input [11:0] len, input [31:0] stride, input integer refuse_cycles);
        integer i;
        begin
            n_tests = n_tests + 1;
            for (i = 0; i < MEM_SIZE; i = i + 1) exp_mem[i] = u_mem.mem[i];
            expect_insn(src_acc, use_bias, use_relu, rows, a, b, len, stride);
            @(posedge clk);
            issue(src_acc, use_bias, use_relu, rows, a, b, len, stride);
            cmd_valid <= 1'b0;
            refuse <= refuse_cycles;
            finish(src_acc, use_bias, use_relu, rows, a, b, len, stride, refuse_cycles);
        end
    endtask

    // Two instructions, the second offered while the first runs: it must be taken in the cycle
    // of the first's done. Checked: both done pulses and faults, the memory after both, the
    // second's own counts.
    task run_pair(input src0, input [15:0] rows0, input [31:0] a0, input [19:0] b0,
                  input [11:0] len0, input [31:0] stride0, input src1, input [15:0] rows1,
                  input [31:0] a1, input [19:0] b1, input [11:0] len1, input [31:0] stride1);
        integer i;
        integer dones;
        integer faults;
        integer b2b;
        reg fault0;
        begin
            n_tests = n_tests + 2;
            dones = n_done_all;
            faults = n_fault_all;
            b2b = n_b2b;
            for (i = 0; i < MEM_SIZE; i = i + 1) exp_mem[i] = u_mem.mem[i];
            expect_insn(src0, src0, src0, rows0, a0, b0, len0, stride0);
            fault0 = exp_fault;
            expect_insn(src1, 1'b0, src1, rows1, a1, b1, len1, stride1);
            @(posedge clk);
            issue(src0, src0, src0, rows0, a0, b0, len0, stride0);
            issue(src1, 1'b0, src1, rows1, a1, b1, len1, stride1);
            cmd_valid <= 1'b0;
            finish(src1, 1'b0, src1, rows1, a1, b1, len1, stride1, 0);
            if (n_done_all != dones + 2 || n_fault_all != faults + fault0 + exp_fault ||
                n_b2b != b2b + 1) begin
                $display(
                    "FAIL: back to back (rows %0d len %0d, then rows %0d len %0d): %0d done pulses, %0d faults, %0d taken at a done; expected 2, %0d, 1",
                    rows0, len0, rows1, len1, n_done_all - dones, n_fault_all - faults,
                    n_b2b - b2b, fault0 + exp_fault);
                $finish;
            end
        end
    endtask

    // Waits for the instruction's done and checks it against exp_mem and exp_fault.
    task finish(input src_acc, input use_bias, input use_relu, input [15:0] rows, input [31:0] a,
                input [19:0] b, input [11:0] len, input [31:0] stride, input integer refuse_cycles);
        integer i;
        integer t;
        integer s;
        integer p;
        begin
            s = src_acc ? 1 : span(len);
            p = per_of(len, stride);
            if (p > rows) p = rows;
            // From the edge after acceptance: a done seen at that edge is the previous one's.
            @(posedge clk);
            t = 0;
            while (!done) begin
                @(posedge clk);
                t = t + 1;
                if (t > 20000) begin
                    $display(
                        "FAIL: src_acc %b rows %0d a %h len %0d stride %0d: no done after %0d cycles",
                        src_acc, rows, a, len, stride, t);
                    $finish;
                end
            end
            repeat (2) @(posedge clk);

            if (n_done != 1 || fault_seen !== exp_fault) begin
                $display(
                    "FAIL: src_acc %b rows %0d a %h len %0d stride %0d: %0d done pulses, fault %b, expected 1 and %b",
                    src_acc, rows, a, len, stride, n_done, fault_seen, exp_fault);
                $finish;
            end
            if (n_req != (rows + p - 1) / p || n_rd != rows * s) begin
                $display("FAIL: src_acc %b rows %0d len %0d: %0d requests, %0d reads", src_acc,
                         rows, len, n_req, n_rd);
                $finish;
            end
            if (max_ahead > DEPTH) begin
                $display(
                    "FAIL: src_acc %b rows %0d: %0d rows read ahead of the memory, buffer is %0d",
                    src_acc, rows, max_ahead, DEPTH);
                $finish;
            end
            if (ready_pct == 100 && refuse_cycles == 0 && last_req - first_req != (rows - p) * s)
            begin
                $display(
                    "FAIL: src_acc %b rows %0d len %0d: requests took %0d cycles with an always-ready memory",
                    src_acc, rows, len, last_req - first_req + 1);
                $finish;
            end
            for (i = 0; i < MEM_SIZE; i = i + 1)
            if (u_mem.mem[i] !== exp_mem[i]) begin
                $display(
                    "FAIL: src_acc %b bias %b relu %b rows %0d a %h b %0d len %0d stride %0d: mem[%0d] = %h, expected %h",
                    src_acc, use_bias, use_relu, rows, a, b, len, stride, i, u_mem.mem[i],
                    exp_mem[i]);
                $finish;
            end
        end
    endtask

    // A random int32, often one of the values where wrapping and relu matter.
    function [31:0] edgy(input [31:0] r1, input [31:0] r2);
        case (r1 % 8)
            0: edgy = 32'h7fff_ffff;
            1: edgy = 32'h8000_0000;
            2: edgy = 32'hffff_ffff;
            3: edgy = 32'd0;
            4: edgy = 32'd1;
            default: edgy = r2;
        endcase
    endfunction

    integer it;
    integer ik;
    integer from;
    reg [15:0] rr;
    reg [19:0] rb;
    reg [11:0] rl;
    reg [31:0] ra;
    reg [31:0] rs;
    reg rsrc;

    initial begin
        for (it = 0; it < MEM_SIZE; it = it + 1) u_mem.mem[it] = $random(seed);
        for (it = 0; it < ROWS; it = it + 1)
        for (ik = 0; ik < N; ik = ik + 1) begin
            ub[it][8*ik+:8] = $random(seed);
            acc[it][32*ik+:32] = edgy($random(seed), $random(seed));
            accf[it][32*ik+:32] = tb_fp32($random(seed));
        end
        for (ik = 0; ik < N; ik = ik + 1) bias[32*ik+:32] = edgy($random(seed), $random(seed));
        repeat (3) @(posedge clk);
        rst <= 1'b0;

        // UB: one byte, full rows, a partial row repeated at one address, then full rate.
        run(0, 0, 0, 1, 0, 0, 1, 0, 0);
        run(0, 0, 0, 5, 100, 3, N, N, 0);
        run(0, 0, 0, 4, 301, 9, N - 1, 0, 0);
        run(0, 0, 0, 1, MEM_SIZE - 1, 63, 1, 0, 0);
        latency = 11;
        run(0, 0, 0, 40, 7, 12, N, N, 0);
        // ACC: every bias/relu combination, partial and full rows, full rate.
        run(1, 0, 0, 40, 513, 0, 4 * N, 4 * N, 0);
        run(1, 1, 0, 6, 1000, 20, 4, 4, 0);
        run(1, 0, 1, 6, 2001, 30, 4 * (N / 2 + 1), 4 * N + 3, 0);
        run(1, 1, 1, 20, 3, 40, 4 * N, 4 * N, 0);
        // Back-pressure: a memory that refuses for a long time, then random ready and ack gaps.
        run(0, 0, 0, 30, 50, 0, N, N, 40);
        run(1, 1, 1, 30, 60, 30, 4 * N, 4 * N + 1, 40);
        ready_pct = 30;
        rsp_pct   = 50;
        run(0, 0, 0, 25, 77, 5, N / 2, 3 * N, 0);
        run(1, 1, 1, 25, 99, 2, 4 * N - 4, 2 * N, 0);
        ready_pct = 100;
        rsp_pct   = 100;
        // Errors: the instruction still runs to the end.
        run(0, 0, 0, 6, MEM_SIZE - 3 * N - 1, 0, N, N, 0);
        run(0, 0, 0, 3, MEM_SIZE - 2 * N - 1, 0, N, N, 0);  // only the last row fails
        run(1, 1, 0, 3, MEM_SIZE - 8 * N - 1, 0, 4 * N, 4 * N, 0);  // only the last row fails
        run(1, 0, 1, 2, 32'hffff_ff00, 0, 4 * N, 32'h100, 0);

        // ISA 1.2 wide rows from UB: S = ceil(len / N) UB rows per memory row.
        latency = 1;
        run(0, 0, 0, 1, 3, 0, N + 1, 0, 0);
        run(0, 0, 0, 7, 10, 0, N + 1, 4 * N + 5, 0);
        run(0, 0, 0, 5, 200, 20, 2 * N, 2 * N, 0);
        run(0, 0, 0, 3, 400, 40, 3 * N - 1, 3, 0);  // overlapping rows: the later wins
        run(0, 0, 0, 1, 600, 50, 4 * N, 0, 0);
        run(0, 0, 0, 6, 700, 60, 3 * N + 1, 1, 0);
        run(0, 0, 0, 4, 900, 70, N + 3, 0, 0);  // not a multiple of N
        run(0, 0, 0, 2, 1100, ROWS - 8, 4 * N, 4 * N, 0);  // the last UB rows
        latency = 11;
        run(0, 0, 0, 20, 1200, 0, 4 * N, 4 * N, 0);
        run(0, 0, 0, 30, 1500, 3, 2 * N + 1, 3 * N, 0);
        // Back-pressure while rows are assembled.
        run(0, 0, 0, 20, 1300, 0, 3 * N, 3 * N + 2, 40);
        run(0, 0, 0, 12, 2000, 1, 4 * N, 4 * N, 7);
        ready_pct = 30;
        rsp_pct   = 50;
        run(0, 0, 0, 25, 77, 5, 2 * N + 1, 3 * N, 0);
        run(0, 0, 0, 25, 2500, 9, 4 * N, 4 * N + 7, 0);
        ready_pct = 100;
        rsp_pct   = 100;
        // Error acks on wide rows: the last one, and all.
        run(0, 0, 0, 4, MEM_SIZE - 3 * 4 * N - 1, 0, 4 * N, 4 * N, 0);
        run(0, 0, 0, 3, MEM_SIZE - 2 * N + 1, 0, 2 * N, 2 * N, 0);

        // Rows back to back (stride == len), k per request: UB narrow (k = 8, 4N / 3 with rows
        // not a multiple of it), wide (len 2N: k = 2; N+1: k = 3 of S = 2), ACC (len 4: k = N;
        // 2N: k = 2; 4N: k = 1); under back-pressure; a failing request (none of its rows
        // written, those before it written); a stride next to len is one request per row.
        latency = 4;
        from = n_multi;
        run(0, 0, 0, 9, 100, 3, N / 2, N / 2, 0);
        run(0, 0, 0, 23, 200, 20, 3, 3, 0);
        run(0, 0, 0, 5, 300, 50, 2 * N, 2 * N, 0);
        run(0, 0, 0, 7, 500, 60, N + 1, N + 1, 0);
        run(1, 1, 1, 10, 700, 0, 4, 4, 0);
        run(1, 0, 1, 5, 900, 30, 2 * N, 2 * N, 0);
        run(1, 1, 0, 3, 1100, 40, 4 * N, 4 * N, 0);
        run(0, 0, 0, 30, 1300, 0, N / 2, N / 2, 40);
        run(1, 1, 1, 21, 1500, 50, 8, 8, 25);
        ready_pct = 30;
        rsp_pct   = 50;
        run(0, 0, 0, 25, 1700, 5, N + 1, N + 1, 0);
        run(1, 0, 1, 25, 1900, 2, 12, 12, 0);
        ready_pct = 100;
        rsp_pct   = 100;
        run(0, 0, 0, 12, MEM_SIZE - 6 * N + 1, 0, N / 2, N / 2, 0);  // rows 8.. fail together
        run(1, 1, 1, 5, MEM_SIZE - 10 * N + 1, 0, 2 * N, 2 * N, 0);  // only the last fails
        run(0, 0, 0, 9, 2100, 3, N / 2, N / 2 + 1, 0);
        run(0, 0, 0, 9, 2300, 3, N / 2, N / 2 - 1, 0);
        if (n_multi - from < 30) begin
            $display("FAIL: only %0d requests of more than one row", n_multi - from);
            $finish;
        end

        // Back to back: narrow then wide, wide then narrow, wide then wide, ACC and UB, a fault.
        latency = 3;
        run_pair(0, 5, 100, 0, 2 * N + 3, 3 * N, 0, 4, 300, 30, N, N);
        run_pair(0, 3, 500, 10, N - 1, N, 0, 6, 700, 40, 4 * N, 4 * N + 1);
        run_pair(0, 4, 900, 0, 3 * N - 1, 2 * N, 0, 5, 1100, 60, 4 * N, 4 * N);
        run_pair(1, 4, 1300, 0, 4 * N, 4 * N, 0, 3, 1500, 70, 3 * N, 3 * N);
        run_pair(0, 3, 1700, 90, 2 * N, 2 * N, 1, 2, 1900, 5, 4 * N, 4 * N);
        run_pair(0, 2, MEM_SIZE - 4 * N - 1, 0, 4 * N, 4 * N, 0, 2, 2100, 8, N + 1, N + 1);
        run_pair(0, 9, 2300, 0, N / 2, N / 2, 1, 6, 2500, 10, 2 * N, 2 * N);
        run_pair(1, 7, 2700, 0, 4, 4, 0, 5, 2900, 20, 3, 3);

        // BF16: fp32 rows and biases, every bias/ReLU combination, back to back and not, under
        // back-pressure, a failing request; then int32 again with its bias.
        for (ik = 0; ik < N; ik = ik + 1) bias[32*ik+:32] = tb_fp32($random(seed));
        bf16 = 1'b1;
        latency = 2;
        run(1, 0, 0, 20, 100, 0, 4 * N, 4 * N, 0);
        run(1, 1, 0, 20, 800, 20, 4 * N, 4 * N + 4, 0);
        run(1, 0, 1, 12, 1600, 40, 8, 8, 0);
        run(1, 1, 1, 30, 2000, 60, 4 * N, 4 * N, 15);
        run(1, 1, 1, 30, 77, 90, 4 * (N / 2 + 1), 5 * N, 0);
        ready_pct = 30;
        rsp_pct   = 50;
        run(1, 1, 0, 25, 2900, 3, 12, 12, 0);
        ready_pct = 100;
        rsp_pct   = 100;
        run(1, 1, 1, 5, MEM_SIZE - 10 * N + 1, 0, 2 * N, 2 * N, 0);  // only the last fails
        for (it = 0; it < 16; it = it + 1) begin
            for (ik = 0; ik < N; ik = ik + 1) bias[32*ik+:32] = tb_fp32($random(seed));
            rr = 1 + {$random(seed)} % 24;
            rl = 4 * (1 + {$random(seed)} % N);
            run(1, $random(seed), $random(seed), rr, {$random(seed)} % (MEM_SIZE - 4 * N * 24),
                {$random(seed)} % (ROWS - rr + 1), rl, it % 2 ? {20'd0, rl} : 4 * N + it, 0);
        end
        bf16 = 1'b0;
        for (ik = 0; ik < N; ik = ik + 1) bias[32*ik+:32] = edgy($random(seed), $random(seed));

        for (it = 0; it < 80; it = it + 1) begin
            rsrc = $random(seed);
            latency = 1 + {$random(seed)} % 13;
            ready_pct = (it % 3 == 0) ? 100 : 10 + {$random(seed)} % 90;
            rsp_pct = (it % 4 == 0) ? 100 : 30 + {$random(seed)} % 70;
            ra = {$random(seed)} % MEM_SIZE;
            case ({$random(
                seed
            )} % 4)
                0: rs = 0;
                1: rs = 1 + {$random(seed)} % (4 * N);
                2: rs = {$random(seed)} % (MEM_SIZE / 4);
                default: rs = {$random(seed)};
            endcase
            rr = 1 + {$random(seed)} % 24;
            rl = rsrc ? 4 * (1 + {$random(seed)} % N) : 1 + {$random(seed)} % (4 * N);
            if ({$random(seed)} % 3 == 0) rs = {20'd0, rl};  // back to back
            rb = {$random(seed)} % (ROWS - rr * (rsrc ? 1 : span(rl)) + 1);
            run(rsrc, rsrc & $random(seed), rsrc & $random(seed), rr, ra, rb, rl, rs,
                (it % 5 == 0) ? {$random(seed)} % 30 : 0);
        end
        $display("%0d instructions checked", n_tests);
        $display("PASS");
        $finish;
    end
endmodule
