`default_nettype none
`timescale 1ns / 1ps
// tpu_core with the shared memory model (model/mem_model.v): latency (+lat=, default LAT), random
// back-pressure (+bp= percent of cycles refusing requests, default BP), err for any byte beyond
// its size, junk on every lane that carries no data, refused requests held stable. File mode
// answers in request order; the built-in gemm and chain also run with random response gaps and
// latencies, so that the load and store units' responses (different ids) interleave.
//
// Built-in mode (no plusargs): programs run and are checked against an instruction-level
// reference model of docs/isa.md kept in this bench (final memory, every UB and ACC row):
//   gemm     RD_PARAMS (len < 4N), RD_WEIGHT (full, and rows < N, len < N, odd stride), RD_HOST
//            (full, len < N with stride 2N, and ISA 1.2's wide rows: len 3N+1, four UB rows per
//            memory row, the last ones read by a MATMUL), MATMUL LOAD, MATMUL LOAD ACC, MATMUL
//            UNSIGNED on the current tile, ACTIVATE with and without BIAS/RELU, WR_HOST int8 (len
//            N and N-1) and SRC_ACC int32 (BIAS, RELU, len < 4N, stride > len), SYNC, HALT; run
//            twice, with a fast memory and with a slow, back-pressured, interleaving one; CSRs and
//            counters checked.
//   stream   back-to-back MATMULs (three LOADs, the shortest 2N-1 rows, then one without):
//            their rows must enter the array in consecutive cycles; counters, CTRL clear.
//   chain    a 61-instruction program (more than the queue holds) where every unit depends on
//            the others through UB, ACC, parameters and memory (WR_HOST output read back by
//            the next instruction, an RD_HOST, and by RD_PARAMS), and an independent RD_HOST
//            overlaps each round's last store, with a back-pressured, interleaving memory.
//   conv     ISA 1.1: a padded 2-D convolution the way the firmware's CONV2D runs it (ZERO for the
//            padding around RD_HOST rows, MATMULs of UB stride 2, one per output row and kernel
//            position, weights streamed through the FIFO, ACTIVATE.POOL 2 x 2, WR_HOST), then
//            ZERO against loads on the same rows both ways, a MATMUL of stride 0 and one of a
//            large stride, a pooling window with overlapping rows (pitch < width) and ReLU, a
//            WR_HOST reading rows a ZERO wrote; with a back-pressured, interleaving memory.
//   widewr   ISA 1.2: ACTIVATEs with output steps 3 (with and without POOL, interleaved), 255,
//            1 and 6 (over rows already read), WR_HOSTs from UB of len 3N, 2N+3, 4N, N+1 and
//            2N (S = 3, 3, 4, 2, 2 UB rows per memory row; strides 3N+5, len, 4N+1, 0) reading
//            them back, an RD_HOST overwriting rows a wide WR_HOST reads; with a back-pressured,
//            interleaving memory; byte counters (one request per memory row).
//   bf16     ISA 1.3: a bf16 GEMM (docs/isa.md "Floating point (bf16)", rtl/tpu_fp.vh) on
//            tb_bf16.vh's edge values: RD_WEIGHT.BF16 (full, and rows < N with an odd len),
//            RD_HOST of 2N-byte vectors, MATMUL.BF16 LOAD and LOAD ACC over two K tiles, int8
//            MATMULs between them on the same FIFO, ACTIVATE.BF16 with BIAS/RELU and with POOL,
//            WR_HOST of the bf16 rows and WR_HOST.SRC_ACC.BF16 with BIAS and RELU; twice, with a
//            fast memory and with a slow, back-pressured, interleaving one.
//   errors   ILLEGAL_OPCODE, BAD_OPERAND (also RD_HOST and WR_HOST len 4N+1, ACTIVATE len 256),
//            UB_RANGE (before ACC_RANGE; also an RD_HOST and a WR_HOST whose rows fit but not
//            their rows * ceil(len/N), an ACTIVATE whose last stepped row does not), MEM_RANGE,
//            WFIFO_EMPTY, WFIFO_FULL and MEM_FAULT (MEM_SIZE larger than the memory):
//            ERROR_CODE, ERROR_PC, STATUS (ERROR rises with BUSY already clear), pushes refused,
//            and everything before the failing instruction completed.
// File mode: +prog=P.hex (one instruction per line, 32 hex digits, MSB first) +mem=M.hex (one
// byte per line) +memsize=BYTES (at most MEM_MAX) +dump=D.hex +dumpbytes=K [+maxcycles=C,
// default 1000000]: loads both, sets MEM_SIZE = memsize, pushes the program as the queue takes
// it, runs until HALTED or ERROR, writes the first K memory bytes to D.hex (one byte per line) and
// prints RESULT status=<hex> error=<dec> pc=<dec> cycles=<dec> (cycles: from the first push until
// HALTED or ERROR), then PASS, or FAIL if the cycle limit came first. UB and ACC start at zero.
module tb_core;
    parameter N = 8;
    parameter UB_ROWS = 16384;
    parameter ACC_ROWS = 4096;
    parameter WFIFO_TILES = 4;
    parameter IQ_DEPTH = 32;
    parameter MEM_MAX = 1 << 20;  // bytes the behavioural memory can hold
    parameter PROG_MAX = 1 << 16;  // instructions in file mode
    parameter LAT = 4;
    parameter BP = 0;
    localparam ID_W = 4;
    localparam BUS = 4 * N;

    localparam [7:0] OP_RD_HOST = 8'h01, OP_RD_WEIGHT = 8'h02, OP_RD_PARAMS = 8'h03,
                     OP_MATMUL = 8'h04, OP_ACTIVATE = 8'h05, OP_WR_HOST = 8'h06,
                     OP_SYNC = 8'h07, OP_HALT = 8'h08, OP_ZERO = 8'h09;
    localparam [7:0] F_ACC = 8'h01, F_LOAD = 8'h02, F_UNSIGNED = 8'h04, F_BIAS = 8'h08,
                     F_RELU = 8'h10, F_SRC_ACC = 8'h20, F_POOL = 8'h40, F_BF16 = 8'h80;
    localparam [7:0] A_ID = 8'h00, A_VERSION = 8'h04, A_ARRAY_N = 8'h08, A_UB_ROWS = 8'h0C,
                     A_ACC_ROWS = 8'h10, A_WFIFO_TILES = 8'h14, A_IQ_DEPTH = 8'h18,
                     A_BUS_BYTES = 8'h1C, A_CTRL = 8'h20, A_STATUS = 8'h24,
                     A_ERROR_CODE = 8'h28, A_ERROR_PC = 8'h2C, A_SYNC_COUNT = 8'h30,
                     A_MEM_SIZE = 8'h34, A_IQ_FREE = 8'h38, A_INSN_COUNT = 8'h3C;
    localparam P_ACTIVE = 0, P_MXU_BUSY = 1, P_STALL_HAZARD = 2, P_STALL_UNIT = 3,
               P_STALL_WEIGHT = 4, P_STALL_MEM = 5, P_STALL_ISSUE = 6, P_DMA_RD = 7,
               P_DMA_WR = 8, P_RETIRED = 9;

    reg clk = 1'b0;
    reg rst = 1'b1;
    reg iq_valid = 1'b0;
    wire iq_ready;
    reg [127:0] iq_data = 128'd0;
    reg csr_we = 1'b0;
    reg [7:0] csr_addr = 8'd0;
    reg [31:0] csr_wdata = 32'd0;
    wire [31:0] csr_rdata;
    wire mem_req_valid;
    wire mem_req_ready;
    wire mem_req_we;
    wire [31:0] mem_req_addr;
    wire [15:0] mem_req_len;
    wire [ID_W-1:0] mem_req_id;
    wire [32*N-1:0] mem_req_wdata;
    wire mem_rsp_valid;
    wire mem_rsp_ready;
    wire [ID_W-1:0] mem_rsp_id;
    wire mem_rsp_err;
    wire [32*N-1:0] mem_rsp_rdata;
    wire irq;

    tpu_core #(
        .N(N),
        .UB_ROWS(UB_ROWS),
        .ACC_ROWS(ACC_ROWS),
        .WFIFO_TILES(WFIFO_TILES),
        .IQ_DEPTH(IQ_DEPTH),
        .ID_W(ID_W)
    ) dut (
        .clk(clk),
        .rst(rst),
        .iq_valid(iq_valid),
        .iq_ready(iq_ready),
        .iq_data(iq_data),
        .csr_we(csr_we),
        .csr_addr(csr_addr),
        .csr_wdata(csr_wdata),
        .csr_rdata(csr_rdata),
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
        .mem_rsp_rdata(mem_rsp_rdata),
        .irq(irq)
    );

    always #5 clk = ~clk;

    // ------------------------------------------------------------------------- memory
    integer mem_bytes = 0;  // size: any byte at or beyond it answers err
    integer lat = LAT;
    integer bp = BP;
    integer rsp = 100;  // percent of cycles in which a due response is given
    integer jit = 0;  // responses come up to jit cycles later than lat, ids interleaving
    integer cycle = 0;

    always @(posedge clk) cycle <= cycle + 1;

    mem_model #(
        .BUS  (BUS),
        .ID_W (ID_W),
        .BYTES(MEM_MAX),
        .SEED (17)
    ) u_mem (
        .clk(clk),
        .rst(rst),
        .size(mem_bytes),
        .latency(lat),
        .jitter(jit),
        .ready_pct(100 - bp),
        .rsp_pct(rsp),
        .req_valid(mem_req_valid),
        .req_ready(mem_req_ready),
        .req_we(mem_req_we),
        .req_addr(mem_req_addr),
        .req_len(mem_req_len),
        .req_id(mem_req_id),
        .req_wdata(mem_req_wdata),
        .rsp_valid(mem_rsp_valid),
        .rsp_ready(mem_rsp_ready),
        .rsp_id(mem_rsp_id),
        .rsp_err(mem_rsp_err),
        .rsp_rdata(mem_rsp_rdata)
    );

    // ----------------------------------------------------------------- reference model
    `include "tpu_fp.vh"
    `include "tb_bf16.vh"
    reg     [     7:0] rmem          [      0:MEM_MAX-1];
    reg     [ 8*N-1:0] rub           [      0:UB_ROWS-1];
    reg     [32*N-1:0] racc          [     0:ACC_ROWS-1];
    // weight FIFO, tile t at rows t*N.., and the current tile: 16-bit cells (int8 sign-extended)
    reg     [16*N-1:0] rwf           [0:WFIFO_TILES*N-1];
    integer            rwf_head = 0;
    integer            rwf_count = 0;
    reg     [16*N-1:0] rw            [            0:N-1];
    reg     [32*N-1:0] rbias;
    reg     [32*N-1:0] rmult;
    reg     [ 6*N-1:0] rshift;

    function [7:0] requant(input [31:0] x, input [31:0] m, input [5:0] s);
        reg signed [63:0] p;
        reg signed [63:0] q;
        reg signed [63:0] half;
        begin
            p = $signed(x) * $signed(m);
            if (s == 6'd0) begin
                q = p;
            end else begin
                half = 64'sd1 <<< (s - 6'd1);
                q = (p + (p < 0 ? half - 64'sd1 : half)) >>> s;
            end
            if (q > 127) requant = 8'h7f;
            else if (q < -128) requant = 8'h80;
            else requant = q[7:0];
        end
    endfunction

    // relu(acc + bias), int32 or (bf: BF16) fp32.
    function [31:0] act32(input [31:0] acc, input [31:0] b, input fb, input fr, input bf);
        reg [31:0] x;
        begin
            if (bf) begin
                x = fb ? fp32_add(acc, b) : acc;
                act32 = fr ? fp32_relu(x) : x;
            end else begin
                x = acc + (fb ? b : 32'd0);
                act32 = (fr && x[31]) ? 32'd0 : x;
            end
        end
    endfunction

    task ref_reset;
        integer r;
        begin
            rwf_head  = 0;
            rwf_count = 0;
            for (r = 0; r < N; r = r + 1) rw[r] = {16 * N{1'b0}};
            rbias  = {32 * N{1'b0}};
            rmult  = {32 * N{1'b0}};
            rshift = {6 * N{1'b0}};
        end
    endtask

    // Executes one valid instruction (the bench only gives it instructions that pass).
    task ref_exec(input [127:0] insn);
        reg [7:0] op;
        reg [7:0] fl;
        reg [15:0] rows;
        reg [31:0] a;
        reg [19:0] b;
        reg [11:0] len;
        reg [31:0] stride;
        reg [63:0] addr;
        reg [31:0] x;
        reg [31:0] sum;
        reg [31:0] av;
        reg [31:0] mx;
        integer i;
        integer c;
        integer r;
        integer t;
        integer k;
        integer j;
        integer step;
        begin
            op = insn[7:0];
            fl = insn[15:8];
            rows = insn[31:16];
            a = insn[63:32];
            b = insn[83:64];
            len = insn[95:84];
            stride = insn[127:96];
            case (op)
                // Memory row i fills UB rows b + i*S .. (S = ceil(len / N)), N bytes each.
                OP_RD_HOST: begin
                    step = (len + N - 1) / N;
                    for (i = 0; i < rows; i = i + 1)
                    for (c = 0; c < step * N; c = c + 1)
                    rub[b+i*step+c/N][8*(c%N)+:8] = c < len ? rmem[a+i*stride+c] : 8'd0;
                end
                OP_RD_WEIGHT: begin
                    t = (rwf_head + rwf_count) % WFIFO_TILES;
                    for (r = 0; r < N; r = r + 1)
                    for (c = 0; c < 2 * N; c = c + 1)
                    if (fl & F_BF16)
                        rwf[t*N+r][8*c+:8] = (r < rows && c < len) ? rmem[a+r*stride+c] : 8'd0;
                    else if (c < N)
                        rwf[t*N+r][16*c+:16] = (r < rows && c < len) ?
                            {{8{rmem[a+r*stride+c][7]}}, rmem[a+r*stride+c]} : 16'd0;
                    rwf_count = rwf_count + 1;
                end
                OP_RD_PARAMS:
                for (c = 0; c < N; c = c + 1)
                for (i = 0; i < 4; i = i + 1) begin
                    addr = a + 4 * c + i;
                    rbias[32*c+8*i+:8] = 4 * c < len ? rmem[addr] : 8'd0;
                    rmult[32*c+8*i+:8] = 4 * c < len ? rmem[addr+stride] : 8'd0;
                    if (i == 0) rshift[6*c+:6] = 4 * c < len ? rmem[addr+2*stride] : 8'd0;
                end
                OP_MATMUL: begin
                    if (fl & F_LOAD) begin
                        for (r = 0; r < N; r = r + 1) rw[r] = rwf[rwf_head*N+r];
                        rwf_head  = (rwf_head + 1) % WFIFO_TILES;
                        rwf_count = rwf_count - 1;
                    end
                    step = stride == 0 ? 1 : stride;
                    for (i = 0; i < rows; i = i + 1)
                    for (c = 0; c < N; c = c + 1)
                    if (fl & F_BF16) begin
                        // The vector: the row pair's 2N bytes; the sum from +0 in row order.
                        sum = 32'd0;
                        for (r = 0; r < N; r = r + 1)
                        sum = fp32_add(
                            sum,
                            bf16_mul(
                                {
                                    rub[a+i*step+(2*r+1)/N][8*((2*r+1)%N)+:8],
                                    rub[a+i*step+2*r/N][8*(2*r%N)+:8]
                                },
                                rw[r][16*c+:16])
                        );
                        racc[b+i][32*c+:32] = (fl & F_ACC) ? fp32_add(racc[b+i][32*c+:32], sum) :
                            sum;
                    end else begin
                        sum = (fl & F_ACC) ? racc[b+i][32*c+:32] : 32'd0;
                        for (r = 0; r < N; r = r + 1) begin
                            av = (fl & F_UNSIGNED) ? {24'd0, rub[a + i*step][8*r +: 8]}
                                                       : {{24{rub[a + i*step][8*r+7]}}, rub[a + i*step][8*r +: 8]};
                            sum = sum + av * {{24{rw[r][16*c+7]}}, rw[r][16*c+:8]};
                        end
                        racc[b+i][32*c+:32] = sum;
                    end
                end
                OP_ACTIVATE:
                // POOL: the maximum over the window (stride: PH, PW, STEP, PITCH) before
                // requantizing; without it the window is row b + i.
                for (
                    i = 0; i < rows; i = i + 1
                )
                for (c = 0; c < N; c = c + 1) begin
                    for (k = 0; k < ((fl & F_POOL) ? stride[3:0] : 1); k = k + 1)
                    for (j = 0; j < ((fl & F_POOL) ? stride[7:4] : 1); j = j + 1) begin
                        x = act32(
                            racc[b+i*((fl&F_POOL)?stride[15:8] : 1)+k*stride[31:16]+j][32*c+:32],
                            rbias[32*c+:32],
                            fl[3],
                            fl[4],
                            fl[7]
                        );
                        if (fl & F_BF16) mx = k == 0 && j == 0 ? x : fp32_max(mx, x);
                        else if ((k == 0 && j == 0) || $signed(x) > $signed(mx)) mx = x;
                    end
                    // ISA 1.2: output rows len apart (0 meaning 1); BF16: element c of a row
                    // pair.
                    step = a + i * (len == 0 ? 1 : len);
                    if (fl & F_BF16) begin
                        x[15:0] = fp32_to_bf16(mx);
                        rub[step+2*c/N][8*(2*c%N)+:8] = x[7:0];
                        rub[step+(2*c+1)/N][8*((2*c+1)%N)+:8] = x[15:8];
                    end else rub[step][8*c+:8] = requant(mx, rmult[32*c+:32], rshift[6*c+:6]);
                end
                OP_ZERO: for (i = 0; i < rows; i = i + 1) rub[b+i] = {8 * N{1'b0}};
                // From UB memory row i is UB rows b + i*S .. (S = ceil(len / N)), N bytes each.
                OP_WR_HOST: begin
                    step = (len + N - 1) / N;
                    for (i = 0; i < rows; i = i + 1)
                    for (c = 0; c < len; c = c + 1) begin
                        addr = a + i * stride + c;
                        if (fl & F_SRC_ACC) begin
                            x = act32(racc[b+i][32*(c/4)+:32], rbias[32*(c/4)+:32], fl[3], fl[4],
                                      fl[7]);
                            rmem[addr] = x[8*(c%4)+:8];
                        end else begin
                            rmem[addr] = rub[b+i*step+c/N][8*(c%N)+:8];
                        end
                    end
                end
                default: ;  // SYNC, HALT
            endcase
        end
    endtask

    // ------------------------------------------------------------------ program and driver
    reg [127:0] prog[0:PROG_MAX-1];
    integer nprog = 0;
    integer pushed = 0;
    reg pushing = 1'b0;
    integer run_cycles;
    reg [31:0] status_at_stop;  // STATUS in the cycle HALTED or ERROR rose

    function [127:0] insn(input [7:0] op, input [7:0] fl, input [15:0] rows, input [31:0] a,
                          input [19:0] b, input [11:0] len, input [31:0] stride);
        insn = {stride, len, b, a, rows, fl, op};
    endfunction

    task emit(input [127:0] i);
        begin
            prog[nprog] = i;
            nprog = nprog + 1;
        end
    endtask

    always @(posedge clk) if (iq_valid && iq_ready) pushed <= pushed + 1;
    always @(negedge clk) begin
        iq_valid = pushing && pushed < nprog;
        iq_data  = prog[pushed];
    end

    task csr_write(input [7:0] addr, input [31:0] data);
        begin
            @(negedge clk);
            csr_we = 1'b1;
            csr_addr = addr;
            csr_wdata = data;
            @(negedge clk);
            csr_we = 1'b0;
        end
    endtask

    task csr_read(input [7:0] addr, output [31:0] data);
        begin
            csr_addr = addr;
            #1 data = csr_rdata;
        end
    endtask

    task perf_read(input integer idx, output [63:0] data);
        begin
            csr_read(8'h40 + 8 * idx, data[31:0]);
            csr_read(8'h44 + 8 * idx, data[63:32]);
        end
    endtask

    // Reset the core (memories keep their contents) and set MEM_SIZE.
    task core_reset(input integer mem_size_csr);
        begin
            @(negedge clk);
            rst = 1'b1;
            pushing = 1'b0;
            @(negedge clk);
            @(negedge clk);
            rst = 1'b0;
            csr_write(A_MEM_SIZE, mem_size_csr);
            pushed = 0;
        end
    endtask

    // Push prog[0..nprog) as the queue takes it until HALTED or ERROR (at most maxc cycles), stop
    // pushing, then (unless the cycles ran out) wait for the instructions in flight.
    task run(input integer maxc);
        reg [31:0] st;
        integer w;
        begin
            @(negedge clk);
            pushing = 1'b1;
            run_cycles = 0;
            while (irq !== 1'b1 && run_cycles < maxc) begin
                @(negedge clk);
                run_cycles = run_cycles + 1;
            end
            pushing  = 1'b0;
            iq_valid = 1'b0;
            csr_read(A_STATUS, status_at_stop);
            st = {31'd0, irq};
            for (w = 0; w < 100000 && st[0]; w = w + 1) begin
                @(negedge clk);
                csr_read(A_STATUS, st);
            end
        end
    endtask

    integer errors = 0;
    task check(input ok, input [8*64-1:0] what, input [63:0] expv, input [63:0] actv);
        if (!ok) begin
            $display("FAIL: %0s: expected %0d (0x%h), actual %0d (0x%h)", what, expv, expv, actv,
                     actv);
            $finish;
        end
    endtask

    task check_csr(input [7:0] addr, input [31:0] expv, input [8*64-1:0] what);
        reg [31:0] v;
        begin
            csr_read(addr, v);
            check(v === expv, what, expv, v);
        end
    endtask

    task check_perf(input integer idx, input [63:0] expv, input [8*64-1:0] what);
        reg [63:0] v;
        begin
            perf_read(idx, v);
            check(v === expv, what, expv, v);
        end
    endtask

    // Compare memory [0, mem_bytes), every UB row and every ACC row with the reference.
    task compare(input [8*32-1:0] name);
        integer i;
        begin
            for (i = 0; i < mem_bytes; i = i + 1)
            if (u_mem.mem[i] !== rmem[i]) begin
                $display("FAIL: %0s: memory byte 0x%0h: expected %h, actual %h", name, i, rmem[i],
                         u_mem.mem[i]);
                $finish;
            end
            for (i = 0; i < UB_ROWS; i = i + 1)
            if (dut.u_ub.mem[i] !== rub[i]) begin
                $display("FAIL: %0s: UB row %0d: expected %h, actual %h", name, i, rub[i],
                         dut.u_ub.mem[i]);
                $finish;
            end
            for (i = 0; i < ACC_ROWS; i = i + 1)
            if (dut.u_acc.mem[i] !== racc[i]) begin
                $display("FAIL: %0s: ACC row %0d: expected %h, actual %h", name, i, racc[i],
                         dut.u_acc.mem[i]);
                $finish;
            end
        end
    endtask

    // Run the reference over prog[0..upto).
    task ref_run(input integer upto);
        integer i;
        begin
            ref_reset;
            for (i = 0; i < upto; i = i + 1) ref_exec(prog[i]);
        end
    endtask

    // Fill memory (device and reference) with random bytes.
    task mem_random(input integer bytes);
        integer i;
        begin
            mem_bytes = bytes;
            for (i = 0; i < bytes; i = i + 1) begin
                u_mem.mem[i] = $urandom;
                rmem[i] = u_mem.mem[i];
            end
        end
    endtask

    // ------------------------------------------------------------------ built-in programs
    localparam MEMB = 1 << 16;  // memory used by the built-in programs
    integer m_rows;
    integer xa, x2a, w1a, w2a, w3a, pa, o8a, o8b, o32a, o32b;
    integer rd_bytes;
    integer wr_bytes;
    integer j;
    reg [63:0] pv;

    // Parameters: random bias, mult and shift that give a spread of int8 results.
    task put_params(input integer at, input integer stride);
        integer c;
        reg [31:0] v;
        begin
            for (c = 0; c < N; c = c + 1) begin
                v = $urandom % 8192 - 4096;
                {rmem[at+4*c+3], rmem[at+4*c+2], rmem[at+4*c+1], rmem[at+4*c]} = v;
                v = $urandom % 32768;
                {rmem[at + stride + 4*c + 3], rmem[at + stride + 4*c + 2],
                 rmem[at + stride + 4*c + 1], rmem[at + stride + 4*c]} = v;
                v = ($urandom & 32'hffffffc0) | (10 + $urandom % 10);  // shift: low 6 bits only
                {rmem[at + 2*stride + 4*c + 3], rmem[at + 2*stride + 4*c + 2],
                 rmem[at + 2*stride + 4*c + 1], rmem[at + 2*stride + 4*c]} = v;
            end
            for (c = 0; c < 2 * stride + 4 * N; c = c + 1) u_mem.mem[at+c] = rmem[at+c];
        end
    endtask

    // Bytes a load requests (docs/isa.md "Timing"): rows k at a time, k <= cap (4 / S for an
    // RD_HOST, 4 for an RD_WEIGHT, 1 for RD_PARAMS) while (k-1)*stride + len fits the bus.
    function integer ld_bytes(input integer cap, input integer rows, input integer len,
                              input integer stride);
        integer k;
        integer i;
        begin
            k = 1;
            while (k < cap && k * stride + len <= 4 * N) k = k + 1;
            ld_bytes = 0;
            for (i = 0; i < rows; i = i + k)
            ld_bytes = ld_bytes + ((rows - i < k ? rows - i : k) - 1) * stride + len;
        end
    endfunction

    task gemm_prog;
        begin
            m_rows = 2 * N + 3;
            xa = 0;
            x2a = xa + m_rows * N;
            w1a = x2a + m_rows * 2 * N;
            w2a = w1a + N * N;
            pa = w2a + N * (N + 3);
            o8a = pa + 3 * (4 * N + 4);
            o8b = o8a + m_rows * N;
            o32a = o8b + m_rows * N;
            o32b = o32a + m_rows * 4 * N;
            put_params(pa, 4 * N + 4);
            nprog = 0;
            emit(insn(OP_RD_PARAMS, 0, 3, pa, 0, 4 * N - 4, 4 * N + 4));
            emit(insn(OP_RD_WEIGHT, 0, N, w1a, 0, N, N));
            emit(insn(OP_RD_WEIGHT, 0, N - 1, w2a, 0, N - 1, N + 3));
            emit(insn(OP_RD_HOST, 0, m_rows, xa, 0, N, N));
            emit(insn(OP_RD_HOST, 0, m_rows, x2a, 64, N - 1, 2 * N));
            emit(insn(OP_MATMUL, F_LOAD, m_rows, 0, 0, 0, 0));
            emit(insn(OP_MATMUL, F_LOAD | F_ACC, m_rows, 64, 0, 0, 0));
            emit(insn(OP_RD_HOST, 0, 3, x2a, 256, 3 * N + 1, 2 * N + 5));  // UB rows 256..267
            emit(insn(OP_MATMUL, F_UNSIGNED, m_rows, 0, m_rows, 0, 0));
            emit(insn(OP_MATMUL, 0, 3, 265, 2 * m_rows, 0, 0));
            emit(insn(OP_ACTIVATE, F_BIAS | F_RELU, m_rows, 128, 0, 0, 0));
            emit(insn(OP_ACTIVATE, 0, m_rows, 192, m_rows, 0, 0));
            emit(insn(OP_WR_HOST, 0, m_rows, o8a, 128, N, N));
            emit(insn(OP_WR_HOST, 0, m_rows, o8b, 192, N - 1, N));
            emit(insn(OP_WR_HOST, F_SRC_ACC | F_BIAS, m_rows, o32a, 0, 4 * N, 4 * N));
            emit(insn(OP_WR_HOST, F_SRC_ACC | F_RELU, m_rows, o32b, m_rows, 4 * N - 4, 4 * N + 8));
            emit(insn(OP_SYNC, 0, 0, 0, 0, 0, 0));
            emit(insn(OP_HALT, 0, 0, 0, 0, 0, 0));
            rd_bytes = 3 * (4 * N - 4) + N * N + ld_bytes(4, N - 1, N - 1, N + 3) + m_rows * N +
                ld_bytes(4, m_rows, N - 1, 2 * N) + 3 * (3 * N + 1);
            wr_bytes = m_rows * (N + N - 1 + 4 * N + 4 * N - 4);
        end
    endtask

    task check_counters(input [31:0] n_insn, input [31:0] n_sync, input [63:0] rd, input [63:0] wr);
        begin
            check_csr(A_STATUS, 32'h2, "STATUS after HALT");
            check_csr(A_ERROR_CODE, 32'd0, "ERROR_CODE");
            check_csr(A_INSN_COUNT, n_insn, "INSN_COUNT");
            check_csr(A_SYNC_COUNT, n_sync, "SYNC_COUNT");
            check_csr(A_IQ_FREE, IQ_DEPTH, "IQ_FREE");
            check_perf(P_RETIRED, n_insn, "PERF_RETIRED");
            check_perf(P_DMA_RD, rd, "PERF_DMA_RD_BYTES");
            check_perf(P_DMA_WR, wr, "PERF_DMA_WR_BYTES");
        end
    endtask

    // The memory for the next run: latency, back-pressure %, response %, jitter.
    task mem_timing(input integer l, input integer b, input integer r, input integer j);
        begin
            lat = l;
            bp  = b;
            rsp = r;
            jit = j;
        end
    endtask

    task gemm(input integer l, input integer b, input integer r, input integer j);
        begin
            mem_timing(l, b, r, j);
            mem_random(MEMB);
            gemm_prog;
            core_reset(MEMB);
            run(200000);
            ref_run(nprog);
            compare("gemm");
            check_counters(nprog, 1, rd_bytes, wr_bytes);
            check_csr(A_MEM_SIZE, MEMB, "MEM_SIZE");
            $display("gemm (latency %0d+%0d, back-pressure %0d%%, responses %0d%%): %0d cycles", l,
                     j, b, r, run_cycles);
        end
    endtask

    // Rows entering the array: count and span from the first to the last.
    integer fire_count = 0;
    integer fire_first = -1;
    integer fire_last = -1;
    always @(posedge clk)
        if (!rst && dut.u_mxu.row_fire) begin
            fire_count = fire_count + 1;
            if (fire_first < 0) fire_first = cycle;
            fire_last = cycle;
        end

    `include "tb_core_cases.vh"

    // ------------------------------------------------------------------ file mode
    reg [8*1024-1:0] prog_file;
    reg [8*1024-1:0] mem_file;
    reg [8*1024-1:0] dump_file;
    integer memsize;
    integer dumpbytes;
    integer maxcycles;
    integer fd;
    integer i;
    reg [31:0] st;
    reg [31:0] ec;
    reg [31:0] epc;
    reg [7:0] byte_in;
    reg [127:0] insn_in;

    initial begin
        for (i = 0; i < UB_ROWS; i = i + 1) begin
            dut.u_ub.mem[i] = {8 * N{1'b0}};
            rub[i] = {8 * N{1'b0}};
        end
        for (i = 0; i < ACC_ROWS; i = i + 1) begin
            dut.u_acc.mem[i] = {32 * N{1'b0}};
            racc[i] = {32 * N{1'b0}};
        end
        if ($value$plusargs("lat=%d", lat));
        if ($value$plusargs("bp=%d", bp));
        if ($value$plusargs("prog=%s", prog_file)) begin
            if (!$value$plusargs(
                    "mem=%s", mem_file
                ) || !$value$plusargs(
                    "memsize=%d", memsize
                ) || !$value$plusargs(
                    "dump=%s", dump_file
                ) || !$value$plusargs(
                    "dumpbytes=%d", dumpbytes
                )) begin
                $display("FAIL: file mode needs +prog= +mem= +memsize= +dump= +dumpbytes=");
                $finish;
            end
            if (memsize > MEM_MAX || dumpbytes > memsize) begin
                $display(
                    "FAIL: memsize %0d (at most MEM_MAX = %0d) or dumpbytes %0d (at most memsize) too large",
                    memsize, MEM_MAX, dumpbytes);
                $finish;
            end
            if (!$value$plusargs("maxcycles=%d", maxcycles)) maxcycles = 1000000;
            for (i = 0; i < memsize; i = i + 1) u_mem.mem[i] = 8'd0;
            mem_bytes = memsize;
            fd = $fopen(mem_file, "r");
            if (fd == 0) begin
                $display("FAIL: cannot open %0s", mem_file);
                $finish;
            end
            for (i = 0; i < memsize && $fscanf(fd, "%h", byte_in) == 1; i = i + 1)
            u_mem.mem[i] = byte_in;
            $fclose(fd);
            fd = $fopen(prog_file, "r");
            if (fd == 0) begin
                $display("FAIL: cannot open %0s", prog_file);
                $finish;
            end
            nprog = 0;
            while (nprog < PROG_MAX && $fscanf(
                fd, "%h", insn_in
            ) == 1) begin
                prog[nprog] = insn_in;
                nprog = nprog + 1;
            end
            $fclose(fd);
            core_reset(memsize);
            run(maxcycles);
            csr_read(A_STATUS, st);
            csr_read(A_ERROR_CODE, ec);
            csr_read(A_ERROR_PC, epc);
            fd = $fopen(dump_file, "w");
            if (fd == 0) begin
                $display("FAIL: cannot open %0s", dump_file);
                $finish;
            end
            for (i = 0; i < dumpbytes; i = i + 1) $fwrite(fd, "%02x\n", u_mem.mem[i]);
            $fclose(fd);
            $display("RESULT status=%0h error=%0d pc=%0d cycles=%0d", st, ec, epc, run_cycles);
            if (st[2:1] == 2'b00)
                $display("FAIL: neither HALTED nor ERROR after %0d cycles", run_cycles);
            else $display("PASS");
            $finish;
        end
        gemm(3, 0, 100, 0);
        gemm(9, 40, 50, 6);
        stream;
        chain;
        conv;
        widewr;
        bf16(2, 0, 100, 0);
        bf16(7, 35, 60, 5);
        errors_all;
        $display("PASS");
        $finish;
    end
endmodule
