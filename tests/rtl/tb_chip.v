`default_nettype none
`include "tpu_isa.vh"
`timescale 1ns / 1ps
// tpu_chip, each chip on its own shared memory model (model/mem_model.v), programs pushed the way
// tb_core.v pushes them and results checked against a GEMM reference kept in this bench.
//
//   one core   a C = 1 chip and a lone tpu_core run the same GEMM in lockstep (same program,
//              same memory model and seed), once on a fast memory and once on a slow,
//              back-pressured one with interleaving responses: every cycle their memory ports
//              (request, id, rsp_ready), iq_ready and irq must be equal, so the chip takes
//              exactly the core's cycles; results checked; the chip's stall counter is zero.
//   C cores    a C-core chip (C = 4): every core runs a GEMM (K = 2N, two weight tiles) of its
//              own size on its own inputs and outputs (disjoint memory) with the weights shared
//              by all (overlapping reads). Its control processor (this bench) arrives at the
//              chip barrier when the core halts; the barrier must not complete before the last
//              core arrives. After it, core k multiplies core k+1's output (overlapping memory,
//              ordered by the barrier) and the cores meet at the barrier again. Twice: a fast
//              memory and a slow, back-pressured one with interleaving responses. Checked: every
//              output byte; each core's memory-stall counter equals this bench's count of "valid,
//              memory ready, another core granted" and is nonzero for every core; the core's own
//              PERF_STALL_MEM equals that plus the cycles the memory refused; chip ID, VERSION,
//              CORES, CTRL.CLEAR_PERF.
module tb_chip;
    parameter N = 8;
    localparam C = 4;
    localparam UB_ROWS = 256;
    localparam ACC_ROWS = 128;
    localparam CORE_ID_W = 4;
    localparam ID_W = CORE_ID_W + 2;
    localparam BUS = 4 * N;
    localparam MEMB = 1 << 16;
    localparam [31:0] MEM_SIZE = MEMB;
    localparam PMAX = 32;  // instructions per core's program buffer

    localparam [7:0] OP_RD_HOST = 8'h01, OP_RD_WEIGHT = 8'h02, OP_MATMUL = 8'h04,
                     OP_WR_HOST = 8'h06, OP_HALT = 8'h08;
    localparam [7:0] F_ACC = 8'h01, F_LOAD = 8'h02, F_SRC_ACC = 8'h20;
    localparam [7:0] A_STATUS = 8'h24, A_PERF_STALL_MEM = 8'h68;
    localparam [7:0] B_ID = `TPU_CHIP_CSR_CHIP_ID, B_VERSION = `TPU_CHIP_CSR_CHIP_VERSION,
                     B_CORES = `TPU_CHIP_CSR_CORES, B_CTRL = `TPU_CHIP_CSR_CTRL,
                     B_MASK = `TPU_CHIP_CSR_BAR_MASK, B_ARRIVE = `TPU_CHIP_CSR_BAR_ARRIVE,
                     B_GEN = `TPU_CHIP_CSR_BAR_GEN, B_STALL = `TPU_CHIP_CSR_MEM_STALL;
    // Memory: both weight tiles at 0, core k's input, outputs and second outputs at X0, Y0, Z0
    // + k * 4096.
    localparam WA = 0, X0 = 4096, Y0 = 24576, Z0 = 45056;

    reg clk = 1'b0;
    always #5 clk = ~clk;
    reg rst = 1'b1;
    integer cycle = 0;
    always @(posedge clk) cycle <= cycle + 1;

    task fail(input [8*120-1:0] what);
        begin
            $display("FAIL: %0s", what);
            $finish;
        end
    endtask

    task check(input ok, input [8*80-1:0] what, input [63:0] expv, input [63:0] actv);
        if (!ok) begin
            $display("FAIL: %0s: expected %0d (0x%h), actual %0d (0x%h)", what, expv, expv, actv,
                     actv);
            $finish;
        end
    endtask

    // ---------------------------------------------------------------- memory timing
    integer lat = 4, bp = 0, rsp = 100, jit = 0;
    task mem_timing(input integer l, input integer b, input integer r, input integer j);
        begin
            lat = l;
            bp  = b;
            rsp = r;
            jit = j;
        end
    endtask

    // ------------------------------------------------------------ programs and drivers
    // Program buffer p (core p of the C-core chip; p = C: the C = 1 chip and the lone core).
    reg [127:0] prog[0:(C+1)*PMAX-1];
    integer nprog[0:C];
    integer pushed[0:C];
    reg [C:0] pushing = {C + 1{1'b0}};

    function [127:0] insn(input [7:0] op, input [7:0] fl, input [15:0] rows, input [31:0] a,
                          input [19:0] b, input [11:0] len, input [31:0] stride);
        insn = {stride, len, b, a, rows, fl, op};
    endfunction

    task emit(input integer p, input [127:0] i);
        begin
            if (nprog[p] >= PMAX) fail("program buffer full");
            prog[p*PMAX+nprog[p]] = i;
            nprog[p] = nprog[p] + 1;
        end
    endtask

    // ----------------------------------------------------------------- the C-core chip
    reg [C-1:0] iq_valid4 = {C{1'b0}};
    wire [C-1:0] iq_ready4;
    reg [128*C-1:0] iq_data4 = {128 * C{1'b0}};
    reg [C-1:0] csr_we4 = {C{1'b0}};
    reg [8*C-1:0] csr_addr4 = {8 * C{1'b0}};
    reg [32*C-1:0] csr_wdata4 = {32 * C{1'b0}};
    wire [32*C-1:0] csr_rdata4;
    wire [C-1:0] irq4;
    reg chip_we4 = 1'b0;
    reg [7:0] chip_addr4 = 8'd0;
    reg [31:0] chip_wdata4 = 32'd0;
    wire [31:0] chip_rdata4;
    wire m4_req_valid, m4_req_ready, m4_req_we, m4_rsp_valid, m4_rsp_ready, m4_rsp_err;
    wire [31:0] m4_req_addr;
    wire [15:0] m4_req_len;
    wire [ID_W-1:0] m4_req_id, m4_rsp_id;
    wire [32*N-1:0] m4_req_wdata, m4_rsp_rdata;

    tpu_chip #(
        .N(N),
        .UB_ROWS(UB_ROWS),
        .ACC_ROWS(ACC_ROWS),
        .C(C),
        .CORE_ID_W(CORE_ID_W)
    ) chip4 (
        .clk(clk),
        .rst(rst),
        .iq_valid(iq_valid4),
        .iq_ready(iq_ready4),
        .iq_data(iq_data4),
        .csr_we(csr_we4),
        .csr_addr(csr_addr4),
        .csr_wdata(csr_wdata4),
        .csr_rdata(csr_rdata4),
        .irq(irq4),
        .chip_csr_we(chip_we4),
        .chip_csr_addr(chip_addr4),
        .chip_csr_wdata(chip_wdata4),
        .chip_csr_rdata(chip_rdata4),
        .mem_req_valid(m4_req_valid),
        .mem_req_ready(m4_req_ready),
        .mem_req_we(m4_req_we),
        .mem_req_addr(m4_req_addr),
        .mem_req_len(m4_req_len),
        .mem_req_id(m4_req_id),
        .mem_req_wdata(m4_req_wdata),
        .mem_rsp_valid(m4_rsp_valid),
        .mem_rsp_ready(m4_rsp_ready),
        .mem_rsp_id(m4_rsp_id),
        .mem_rsp_err(m4_rsp_err),
        .mem_rsp_rdata(m4_rsp_rdata)
    );

    mem_model #(
        .BUS  (BUS),
        .ID_W (ID_W),
        .BYTES(MEMB),
        .SEED (23)
    ) mem4 (
        .clk(clk),
        .rst(rst),
        .size(MEM_SIZE),
        .latency(lat),
        .jitter(jit),
        .ready_pct(100 - bp),
        .rsp_pct(rsp),
        .req_valid(m4_req_valid),
        .req_ready(m4_req_ready),
        .req_we(m4_req_we),
        .req_addr(m4_req_addr),
        .req_len(m4_req_len),
        .req_id(m4_req_id),
        .req_wdata(m4_req_wdata),
        .rsp_valid(m4_rsp_valid),
        .rsp_ready(m4_rsp_ready),
        .rsp_id(m4_rsp_id),
        .rsp_err(m4_rsp_err),
        .rsp_rdata(m4_rsp_rdata)
    );

    // --------------------------------------------- the C = 1 chip and the lone tpu_core
    reg iq_valid1 = 1'b0;
    wire iq_ready1, iq_readyc;
    reg [127:0] iq_data1 = 128'd0;
    reg [  7:0] csr_addr1 = 8'd0;
    wire [31:0] csr_rdata1, csr_rdatac;
    wire irq1, irqc;
    reg  [ 7:0] chip_addr1 = 8'd0;
    wire [31:0] chip_rdata1;
    wire m1_req_valid, m1_req_ready, m1_req_we, m1_rsp_valid, m1_rsp_ready, m1_rsp_err;
    wire [31:0] m1_req_addr;
    wire [15:0] m1_req_len;
    wire [CORE_ID_W-1:0] m1_req_id, m1_rsp_id;
    wire [32*N-1:0] m1_req_wdata, m1_rsp_rdata;
    wire mc_req_valid, mc_req_ready, mc_req_we, mc_rsp_valid, mc_rsp_ready, mc_rsp_err;
    wire [31:0] mc_req_addr;
    wire [15:0] mc_req_len;
    wire [CORE_ID_W-1:0] mc_req_id, mc_rsp_id;
    wire [32*N-1:0] mc_req_wdata, mc_rsp_rdata;
    reg csr_we1 = 1'b0;
    reg [31:0] csr_wdata1 = 32'd0;

    tpu_chip #(
        .N(N),
        .UB_ROWS(UB_ROWS),
        .ACC_ROWS(ACC_ROWS),
        .C(1),
        .CORE_ID_W(CORE_ID_W)
    ) chip1 (
        .clk(clk),
        .rst(rst),
        .iq_valid(iq_valid1),
        .iq_ready(iq_ready1),
        .iq_data(iq_data1),
        .csr_we(csr_we1),
        .csr_addr(csr_addr1),
        .csr_wdata(csr_wdata1),
        .csr_rdata(csr_rdata1),
        .irq(irq1),
        .chip_csr_we(1'b0),
        .chip_csr_addr(chip_addr1),
        .chip_csr_wdata(32'd0),
        .chip_csr_rdata(chip_rdata1),
        .mem_req_valid(m1_req_valid),
        .mem_req_ready(m1_req_ready),
        .mem_req_we(m1_req_we),
        .mem_req_addr(m1_req_addr),
        .mem_req_len(m1_req_len),
        .mem_req_id(m1_req_id),
        .mem_req_wdata(m1_req_wdata),
        .mem_rsp_valid(m1_rsp_valid),
        .mem_rsp_ready(m1_rsp_ready),
        .mem_rsp_id(m1_rsp_id),
        .mem_rsp_err(m1_rsp_err),
        .mem_rsp_rdata(m1_rsp_rdata)
    );

    tpu_core #(
        .N(N),
        .UB_ROWS(UB_ROWS),
        .ACC_ROWS(ACC_ROWS),
        .ID_W(CORE_ID_W)
    ) core (
        .clk(clk),
        .rst(rst),
        .iq_valid(iq_valid1),
        .iq_ready(iq_readyc),
        .iq_data(iq_data1),
        .csr_we(csr_we1),
        .csr_addr(csr_addr1),
        .csr_wdata(csr_wdata1),
        .csr_rdata(csr_rdatac),
        .mem_req_valid(mc_req_valid),
        .mem_req_ready(mc_req_ready),
        .mem_req_we(mc_req_we),
        .mem_req_addr(mc_req_addr),
        .mem_req_len(mc_req_len),
        .mem_req_id(mc_req_id),
        .mem_req_wdata(mc_req_wdata),
        .mem_rsp_valid(mc_rsp_valid),
        .mem_rsp_ready(mc_rsp_ready),
        .mem_rsp_id(mc_rsp_id),
        .mem_rsp_err(mc_rsp_err),
        .mem_rsp_rdata(mc_rsp_rdata),
        .irq(irqc)
    );

    mem_model #(
        .BUS  (BUS),
        .ID_W (CORE_ID_W),
        .BYTES(MEMB),
        .SEED (29)
    ) mem1 (
        .clk(clk),
        .rst(rst),
        .size(MEM_SIZE),
        .latency(lat),
        .jitter(jit),
        .ready_pct(100 - bp),
        .rsp_pct(rsp),
        .req_valid(m1_req_valid),
        .req_ready(m1_req_ready),
        .req_we(m1_req_we),
        .req_addr(m1_req_addr),
        .req_len(m1_req_len),
        .req_id(m1_req_id),
        .req_wdata(m1_req_wdata),
        .rsp_valid(m1_rsp_valid),
        .rsp_ready(m1_rsp_ready),
        .rsp_id(m1_rsp_id),
        .rsp_err(m1_rsp_err),
        .rsp_rdata(m1_rsp_rdata)
    );

    mem_model #(
        .BUS  (BUS),
        .ID_W (CORE_ID_W),
        .BYTES(MEMB),
        .SEED (29)
    ) memc (
        .clk(clk),
        .rst(rst),
        .size(MEM_SIZE),
        .latency(lat),
        .jitter(jit),
        .ready_pct(100 - bp),
        .rsp_pct(rsp),
        .req_valid(mc_req_valid),
        .req_ready(mc_req_ready),
        .req_we(mc_req_we),
        .req_addr(mc_req_addr),
        .req_len(mc_req_len),
        .req_id(mc_req_id),
        .req_wdata(mc_req_wdata),
        .rsp_valid(mc_rsp_valid),
        .rsp_ready(mc_rsp_ready),
        .rsp_id(mc_rsp_id),
        .rsp_err(mc_rsp_err),
        .rsp_rdata(mc_rsp_rdata)
    );

    // ------------------------------------------------------------------ the drivers
    integer k;
    always @(posedge clk) begin
        for (k = 0; k < C; k = k + 1) if (iq_valid4[k] && iq_ready4[k]) pushed[k] <= pushed[k] + 1;
        if (iq_valid1 && iq_ready1) pushed[C] <= pushed[C] + 1;
    end
    integer kn;
    always @(negedge clk) begin
        for (kn = 0; kn < C; kn = kn + 1) begin
            iq_valid4[kn] = pushing[kn] && pushed[kn] < nprog[kn];
            iq_data4[128*kn+:128] = prog[kn*PMAX+pushed[kn]%PMAX];
        end
        iq_valid1 = pushing[C] && pushed[C] < nprog[C];
        iq_data1  = prog[C*PMAX+pushed[C]%PMAX];
    end

    // Lockstep of the C = 1 chip and the core, and the C-core chip's stall counts.
    integer stall_exp[0:C-1];  // valid, memory ready, another core granted
    integer refused  [0:C-1];  // valid, memory not ready
    integer k2;
    always @(posedge clk)
        if (!rst) begin
            if (m1_req_valid !== mc_req_valid || m1_rsp_ready !== mc_rsp_ready ||
                iq_ready1 !== iq_readyc || irq1 !== irqc ||
                (mc_req_valid && (m1_req_we !== mc_req_we || m1_req_addr !== mc_req_addr ||
                                  m1_req_len !== mc_req_len || m1_req_id !== mc_req_id ||
                                  (mc_req_we && m1_req_wdata !== mc_req_wdata)))) begin
                $display("FAIL: cycle %0d: the C = 1 chip and the core differ", cycle);
                $finish;
            end
            for (k2 = 0; k2 < C; k2 = k2 + 1) begin
                if (chip4.c_req_valid[k2] && m4_req_ready && !chip4.c_req_ready[k2])
                    stall_exp[k2] = stall_exp[k2] + 1;
                if (chip4.c_req_valid[k2] && !m4_req_ready) refused[k2] = refused[k2] + 1;
            end
        end

    task chip_write(input [7:0] addr, input [31:0] data);
        begin
            @(negedge clk);
            chip_we4 = 1'b1;
            chip_addr4 = addr;
            chip_wdata4 = data;
            @(negedge clk);
            chip_we4 = 1'b0;
        end
    endtask

    task chip_read(input [7:0] addr, output [31:0] data);
        begin
            chip_addr4 = addr;
            #1 data = chip_rdata4;
        end
    endtask

    task core_read(input integer c, input [7:0] addr, output [31:0] data);
        begin
            csr_addr4[8*c+:8] = addr;
            #1 data = csr_rdata4[32*c+:32];
        end
    endtask

    task check_chip(input [7:0] addr, input [31:0] expv, input [8*80-1:0] what);
        reg [31:0] v;
        begin
            chip_read(addr, v);
            check(v === expv, what, expv, v);
        end
    endtask

    // Reset everything (memories keep their contents), MEM_SIZE on every core, counts cleared.
    task chip_reset;
        integer c;
        begin
            @(negedge clk);
            rst = 1'b1;
            pushing = {C + 1{1'b0}};
            @(negedge clk);
            @(negedge clk);
            rst = 1'b0;
            for (c = 0; c <= C; c = c + 1) begin
                pushed[c] = 0;
                nprog[c]  = 0;
            end
            for (c = 0; c < C; c = c + 1) begin
                stall_exp[c] = 0;
                refused[c]   = 0;
            end
            csr_we4 = {C{1'b1}};
            csr_we1 = 1'b1;
            for (c = 0; c < C; c = c + 1) begin
                csr_addr4[8*c+:8] = 8'h34;
                csr_wdata4[32*c+:32] = MEMB;
            end
            csr_addr1  = 8'h34;
            csr_wdata1 = MEMB;
            @(negedge clk);
            csr_we4 = {C{1'b0}};
            csr_we1 = 1'b0;
        end
    endtask

    // ------------------------------------------------------------------ the reference
    reg [7:0] rmem[0:MEMB-1];  // memory as the programs leave it

    function [31:0] s8(input [7:0] b);
        s8 = {{24{b[7]}}, b};
    endfunction

    // Y = X W (int32 rows of 4N bytes at ya): X has m rows of nk*N int8 at xa, row stride xs;
    // tile t of W (N x N int8, row r = K index, byte c = column) at WA + t*N*N.
    task ref_gemm(input integer xa, input integer xs, input integer nk, input integer m,
                  input integer ya);
        integer i, c, t, r;
        reg [31:0] sum;
        begin
            for (i = 0; i < m; i = i + 1)
            for (c = 0; c < N; c = c + 1) begin
                sum = 0;
                for (t = 0; t < nk; t = t + 1)
                for (r = 0; r < N; r = r + 1)
                sum = sum + s8(rmem[xa+i*xs+t*N+r]) * s8(rmem[WA+t*N*N+r*N+c]);
                {rmem[ya+i*4*N+4*c+3], rmem[ya+i*4*N+4*c+2], rmem[ya+i*4*N+4*c+1],
                 rmem[ya+i*4*N+4*c]} = sum;
            end
        end
    endtask

    // Phase 1 of program buffer p: X (m x 2N at xa) times both tiles into ya.
    task gemm_prog(input integer p, input integer m, input integer xa, input integer ya);
        begin
            emit(p, insn(OP_RD_WEIGHT, 0, N, WA, 0, N, N));
            emit(p, insn(OP_RD_WEIGHT, 0, N, WA + N * N, 0, N, N));
            emit(p, insn(OP_RD_HOST, 0, m, xa, 0, N, 2 * N));
            emit(p, insn(OP_RD_HOST, 0, m, xa + N, 64, N, 2 * N));
            emit(p, insn(OP_MATMUL, F_LOAD, m, 0, 0, 0, 0));
            emit(p, insn(OP_MATMUL, F_LOAD | F_ACC, m, 64, 0, 0, 0));
            emit(p, insn(OP_WR_HOST, F_SRC_ACC, m, ya, 0, 4 * N, 4 * N));
            emit(p, insn(OP_HALT, 0, 0, 0, 0, 0, 0));
        end
    endtask

    // Phase 2: the first N bytes of N rows of ya (another core's output) times tile 0 into za.
    task gemm2_prog(input integer p, input integer ya, input integer za);
        begin
            emit(p, insn(OP_RD_WEIGHT, 0, N, WA, 0, N, N));
            emit(p, insn(OP_RD_HOST, 0, N, ya, 128, N, 4 * N));
            emit(p, insn(OP_MATMUL, F_LOAD, N, 128, 64, 0, 0));
            emit(p, insn(OP_WR_HOST, F_SRC_ACC, N, za, 64, 4 * N, 4 * N));
            emit(p, insn(OP_HALT, 0, 0, 0, 0, 0, 0));
        end
    endtask

    task mem_init;
        integer i;
        begin
            for (i = 0; i < MEMB; i = i + 1) begin
                rmem[i] = (i < Y0) ? $urandom : 8'd0;
                mem4.mem[i] = rmem[i];
                mem1.mem[i] = rmem[i];
                memc.mem[i] = rmem[i];
            end
        end
    endtask

    task compare(input integer which, input [8*40-1:0] name);  // 4: mem4, 1: mem1, 0: memc
        integer i;
        reg [7:0] v;
        begin
            for (i = 0; i < MEMB; i = i + 1) begin
                v = which == 4 ? mem4.mem[i] : which == 1 ? mem1.mem[i] : memc.mem[i];
                if (v !== rmem[i]) begin
                    $display("FAIL: %0s: memory byte 0x%0h: expected %h, actual %h", name, i,
                             rmem[i], v);
                    $finish;
                end
            end
        end
    endtask

    // ------------------------------------------------------------------ one core
    integer t1, tc, m_one;
    task one_core(input [8*40-1:0] name);
        reg [31:0] v;
        integer w;
        begin
            mem_init;
            chip_reset;
            m_one = 2 * N + 5;
            gemm_prog(C, m_one, X0, Y0);
            ref_gemm(X0, 2 * N, 2, m_one, Y0);
            @(negedge clk);
            pushing[C] = 1'b1;
            t1 = -1;
            tc = -1;
            for (w = 0; w < 100000 && (t1 < 0 || tc < 0); w = w + 1) begin
                @(negedge clk);
                if (irq1 && t1 < 0) t1 = w;
                if (irqc && tc < 0) tc = w;
            end
            pushing[C] = 1'b0;
            if (t1 < 0 || tc < 0) fail("one core: no HALT");
            check(t1 == tc, "cycles of the C = 1 chip vs tpu_core", tc, t1);
            compare(1, "C = 1 chip");
            compare(0, "tpu_core");
            chip_addr1 = B_STALL;
            #1 check(chip_rdata1 === 0, "C = 1 chip: stall counter", 0, chip_rdata1);
            chip_addr1 = B_CORES;
            #1 check(chip_rdata1 === 1, "C = 1 chip: CORES", 1, chip_rdata1);
            csr_addr1 = A_STATUS;
            #1 check(csr_rdata1 === 32'h2, "C = 1 chip: STATUS after HALT", 2, csr_rdata1);
            $display("one core, %0s memory: C = 1 chip %0d cycles, tpu_core %0d cycles", name, t1,
                     tc);
        end
    endtask

    // ------------------------------------------------------------------ C cores
    integer mk[0:C-1];
    integer tdone[0:C-1];
    integer arrivals;  // distinct cycles in which cores arrived

    // Each core's control processor: arrive when the core halts; the barrier completes only
    // with the last arrival. Returns when generation gen0 + 1 is reached.
    task barrier(input [31:0] gen0, input integer t0);
        reg [C-1:0] arrived;
        reg [C-1:0] newly;
        reg [ 31:0] v;
        integer w, c;
        begin
            arrived  = {C{1'b0}};
            arrivals = 0;
            for (w = 0; w < 200000 && arrived != {C{1'b1}}; w = w + 1) begin
                @(negedge clk);
                newly = irq4 & ~arrived;
                if (newly != 0) begin
                    for (c = 0; c < C; c = c + 1) if (newly[c]) tdone[c] = cycle - t0;
                    chip_write(B_ARRIVE, {{(32 - C) {1'b0}}, newly});
                    arrived  = arrived | newly;
                    arrivals = arrivals + 1;
                    if (arrived != {C{1'b1}}) begin
                        check_chip(B_GEN, gen0, "BAR_GEN before the last arrival");
                        check_chip(B_ARRIVE, {{(32 - C) {1'b0}}, arrived}, "BAR_ARRIVE");
                    end
                end
            end
            check_chip(B_GEN, gen0 + 1, "BAR_GEN after the last arrival");
            check_chip(B_ARRIVE, 0, "BAR_ARRIVE after the barrier");
        end
    endtask

    task cores(input [8*40-1:0] name);
        reg [31:0] v, lo, hi;
        integer c, t0;
        begin
            mem_init;
            chip_reset;
            check_chip(B_ID, 32'h54505543, "CHIP_ID");
            check_chip(B_VERSION, 32'h00010000, "CHIP_VERSION");
            check_chip(B_CORES, C, "CORES");
            check_chip(B_MASK, (1 << C) - 1, "BAR_MASK after reset");
            check_chip(B_GEN, 0, "BAR_GEN after reset");
            for (c = 0; c < C; c = c + 1) begin
                mk[c] = N + 8 * c + 3;
                gemm_prog(c, mk[c], X0 + 4096 * c, Y0 + 4096 * c);
                ref_gemm(X0 + 4096 * c, 2 * N, 2, mk[c], Y0 + 4096 * c);
            end
            for (c = 0; c < C; c = c + 1)
            ref_gemm(Y0 + 4096 * ((c + 1) % C), 4 * N, 1, N, Z0 + 4096 * c);
            @(negedge clk);
            t0 = cycle;
            pushing = {1'b0, {C{1'b1}}};
            barrier(0, t0);
            if (arrivals < 2) fail("all cores arrived at once: the barrier was not tested");
            $display(
                "%0s memory, phase 1 (rows %0d..%0d): cores halted after %0d %0d %0d %0d cycles",
                name, mk[0], mk[C-1], tdone[0], tdone[1], tdone[2], tdone[3]);
            // Phase 2: each core's firmware saw the generation change; core k reads core k+1's
            // output.
            for (c = 0; c < C; c = c + 1) gemm2_prog(c, Y0 + 4096 * ((c + 1) % C), Z0 + 4096 * c);
            t0 = cycle;
            // HALTED (irq) clears with the first push of the new program.
            for (c = 0; c < 100 && irq4 != {C{1'b0}}; c = c + 1) @(negedge clk);
            if (irq4 != {C{1'b0}}) fail("irq did not clear after a push");
            barrier(1, t0);
            compare(4, name);
            for (c = 0; c < C; c = c + 1) begin
                chip_read(B_STALL + 8 * c, lo);
                chip_read(B_STALL + 8 * c + 4, hi);
                check({hi, lo} == stall_exp[c], "chip stall counter vs the bench's count",
                      stall_exp[c], {hi, lo});
                if (stall_exp[c] == 0) fail("a core never stalled on the shared port");
                core_read(c, A_PERF_STALL_MEM, v);
                check(v == stall_exp[c] + refused[c],
                      "core PERF_STALL_MEM vs chip stall + memory refusals",
                      stall_exp[c] + refused[c], v);
            end
            $display(
                "%0s memory: stall cycles per core %0d %0d %0d %0d (memory refusals %0d %0d %0d %0d)",
                name, stall_exp[0], stall_exp[1], stall_exp[2], stall_exp[3], refused[0],
                refused[1], refused[2], refused[3]);
            chip_write(B_CTRL, 32'h2);
            for (c = 0; c < C; c = c + 1) begin
                check_chip(B_STALL + 8 * c, 0, "stall counter after CTRL.CLEAR_PERF");
                check_chip(B_STALL + 8 * c + 4, 0, "stall counter high word after CLEAR_PERF");
            end
            check_chip(B_GEN, 2, "BAR_GEN after two barriers");
        end
    endtask

    initial begin
        one_core("fast");
        mem_timing(9, 40, 50, 6);
        one_core("slow");
        mem_timing(4, 0, 100, 0);
        cores("fast");
        mem_timing(9, 30, 60, 6);
        cores("slow");
        $display("PASS");
        $finish;
    end
endmodule
