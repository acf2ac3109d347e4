`default_nettype none
// tpu_chip_arb at C = 1, 2, 3, 5 and 8 cores (one chip_arb_bench each, run side by side), every
// core a random master behind the shared memory model (model/mem_model.v) on the chip port.
// Masters read and write anywhere in the memory (sometimes beyond its end: err), with random
// lengths and random core ids (CORE_ID_W = 2 bits of their own), hold each request stable until it
// is accepted, and drop their rsp_ready at random (back-pressure from the cores). The memory has
// random req_ready, random latency per request and keeps only each chip id's responses in order,
// so responses interleave across cores and ids.
// Checks, every cycle: mem_req_valid is the OR of the cores' valids (the port is never idle while
// a core requests); at most one core sees req_ready, only with a memory handshake; the chip
// request is exactly the granted core's (we, addr, len, wdata) with id {core, core id};
// responses go to exactly the core in the id's upper bits, with the lower bits as its id, and
// mem_rsp_ready is that core's rsp_ready; every response matches a reference queue per (core,
// id) of the expected err and read data (from a shadow memory updated at acceptance); the stall
// outputs are "valid, memory ready, not granted". The starvation bound: while a core's request
// waits, at most C-1 requests of other cores are accepted; with all cores requesting, grants
// rotate strictly 0, 1, .., C-1 (also with a refusing memory), every core waits exactly C-1
// grants, and an always-ready memory accepts every cycle. C = 1: every output equals its input
// in the same cycle (a wire-through). At the end the memory equals the shadow, and (C = 3, 5) a
// response whose index names no core is accepted and reaches none.
module chip_arb_bench #(
    parameter N = 8,
    parameter C = 2,
    parameter SEED = 1
) (
    output reg done
);
    localparam CORE_ID_W = 2;
    localparam CW = C > 4 ? 3 : C > 2 ? 2 : C > 1 ? 1 : 0;
    localparam ID_W = CORE_ID_W + CW;
    localparam BUS = 4 * N;
    localparam MEM_SIZE = 4096;
    localparam NID = 1 << CORE_ID_W;
    localparam NQ = C * NID;  // reference queues, one per (core, core id)
    localparam QD = 64;  // entries per queue (the memory holds 32 pending)

    reg clk = 1'b0;
    always #5 clk = !clk;
    reg rst = 1'b1;

    reg [C-1:0] c_req_valid = {C{1'b0}};
    wire [C-1:0] c_req_ready;
    reg [C-1:0] c_req_we = {C{1'b0}};
    reg [32*C-1:0] c_req_addr = {32 * C{1'b0}};
    reg [16*C-1:0] c_req_len = {16 * C{1'b0}};
    reg [CORE_ID_W*C-1:0] c_req_id = {CORE_ID_W * C{1'b0}};
    reg [32*N*C-1:0] c_req_wdata = {32 * N * C{1'b0}};
    wire [C-1:0] c_rsp_valid;
    reg [C-1:0] c_rsp_ready = {C{1'b1}};
    wire [CORE_ID_W*C-1:0] c_rsp_id;
    wire [C-1:0] c_rsp_err;
    wire [32*N*C-1:0] c_rsp_rdata;
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
    wire [C-1:0] stall;

    tpu_chip_arb #(
        .N(N),
        .C(C),
        .CORE_ID_W(CORE_ID_W)
    ) dut (
        .clk(clk),
        .rst(rst),
        .c_req_valid(c_req_valid),
        .c_req_ready(c_req_ready),
        .c_req_we(c_req_we),
        .c_req_addr(c_req_addr),
        .c_req_len(c_req_len),
        .c_req_id(c_req_id),
        .c_req_wdata(c_req_wdata),
        .c_rsp_valid(c_rsp_valid),
        .c_rsp_ready(c_rsp_ready),
        .c_rsp_id(c_rsp_id),
        .c_rsp_err(c_rsp_err),
        .c_rsp_rdata(c_rsp_rdata),
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
        .stall(stall)
    );

    integer seed = SEED;
    integer p_req = 50;  // chance per cycle that an idle core starts a request
    integer ready_pct = 70;  // chance per cycle that mem_req_ready is high
    integer rsp_pct = 70;  // chance per cycle that a due response is given
    integer rsp_ready_pct = 100;  // chance per cycle that a core's rsp_ready is high
    integer active = C;  // cores 0..active-1 may request
    reg stop = 1'b0;  // cores start no new requests

    mem_model #(
        .BUS  (BUS),
        .ID_W (ID_W),
        .BYTES(MEM_SIZE),
        .DEPTH(32),
        .SEED (SEED + 100)
    ) u_mem (
        .clk(clk),
        .rst(rst),
        .size(MEM_SIZE),
        .latency(32'd1),
        .jitter(32'd8),
        .ready_pct(ready_pct),
        .rsp_pct(rsp_pct),
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

    function in_range(input [31:0] addr, input [15:0] len);
        in_range = {32'd0, addr} + len <= MEM_SIZE;
    endfunction

    task fail(input [8*120-1:0] what);
        begin
            $display("FAIL: C = %0d: %0s", C, what);
            $finish;
        end
    endtask

    // ------------------------------------------------------------ reference state --
    reg [7:0] shadow[0:MEM_SIZE-1];  // memory as the accepted writes leave it
    reg [32*N-1:0] e_data[0:NQ*QD-1];  // expected responses, queue q at entries q*QD..
    reg [15:0] e_len[0:NQ*QD-1];
    reg e_err[0:NQ*QD-1];
    reg e_we[0:NQ*QD-1];
    integer e_seq[0:NQ*QD-1];  // acceptance number
    integer e_head[0:NQ-1];
    integer e_tail[0:NQ-1];
    integer accepted = 0;  // requests accepted, all cores
    integer grants[0:C-1];
    integer waits[0:C-1];  // other cores' grants since this core's request was first offered
    integer max_wait = 0;
    integer last_grant = -1;
    integer stall_total[0:C-1];
    integer interleaved = 0;  // responses that overtook an older one of another core
    integer rsp_stalled = 0;  // cycles a response waited for its core's rsp_ready
    integer rotation_errs = 0;  // grants out of strict rotation (checked when all saturate)
    reg saturated = 1'b0;  // every core requests every cycle: check strict rotation
    integer sat_grants = 0;  // grants since saturated was set

    integer k, q, j, g, b, oldest;
    reg [31:0] r;
    reg found;

    // C = 1: the arbiter is wires; check them just after every change of the inputs.
    generate
        if (C == 1) begin : g_wire
            always @(c_req_valid or c_req_we or c_req_addr or c_req_len or c_req_id or
                     c_req_wdata or mem_req_ready or mem_rsp_valid or mem_rsp_id or mem_rsp_err or
                     mem_rsp_rdata or c_rsp_ready) begin
                #1;
                if (mem_req_valid !== c_req_valid || mem_req_we !== c_req_we ||
                    mem_req_addr !== c_req_addr || mem_req_len !== c_req_len ||
                    mem_req_id !== c_req_id || mem_req_wdata !== c_req_wdata ||
                    c_req_ready !== mem_req_ready || c_rsp_valid !== mem_rsp_valid ||
                    c_rsp_id !== mem_rsp_id || c_rsp_err !== mem_rsp_err ||
                    c_rsp_rdata !== mem_rsp_rdata || mem_rsp_ready !== c_rsp_ready ||
                    stall !== 1'b0)
                    fail("C = 1 is not a wire-through");
            end
        end
    endgenerate

    always @(posedge clk) begin
        if (!rst) begin
            // ---- requests
            if (mem_req_valid !== |c_req_valid) fail("mem_req_valid is not the OR of the cores'");
            g = -1;
            for (k = 0; k < C; k = k + 1) begin
                if (c_req_ready[k] && c_req_valid[k]) begin
                    if (g >= 0) fail("two cores granted in one cycle");
                    g = k;
                end
                if (stall[k] !== (c_req_valid[k] && mem_req_ready && !c_req_ready[k]))
                    fail("stall is not: valid, memory ready, another core granted");
                if (stall[k]) stall_total[k] = stall_total[k] + 1;
            end
            if ((g >= 0) !== (mem_req_valid && mem_req_ready))
                fail("a core handshake without a memory handshake or the reverse");
            if (g >= 0) begin
                if (mem_req_we !== c_req_we[g] || mem_req_addr !== c_req_addr[32*g+:32] ||
                    mem_req_len !== c_req_len[16*g+:16] ||
                    mem_req_id[CORE_ID_W-1:0] !== c_req_id[CORE_ID_W*g+:CORE_ID_W] ||
                    (mem_req_id >> CORE_ID_W) !== g ||
                    (mem_req_we && mem_req_wdata !== c_req_wdata[32*N*g+:32*N]))
                    fail("the chip request is not the granted core's");
                // Fairness: the bound, and strict rotation while every core saturates.
                if (waits[g] > C - 1) fail("a core waited more than C-1 grants");
                if (waits[g] > max_wait) max_wait = waits[g];
                if (saturated && last_grant >= 0 && g != (last_grant + 1) % C)
                    rotation_errs = rotation_errs + 1;
                if (saturated && sat_grants >= C && waits[g] != C - 1)
                    fail("a saturating core did not wait exactly C-1 grants");
                if (saturated) sat_grants = sat_grants + 1;
                last_grant = g;
                grants[g]  = grants[g] + 1;
                for (k = 0; k < C; k = k + 1) if (k != g && c_req_valid[k]) waits[k] = waits[k] + 1;
                waits[g] = 0;
                // The reference: the access happens now.
                q = g * NID + mem_req_id[CORE_ID_W-1:0];
                j = q * QD + e_tail[q] % QD;
                if (e_tail[q] - e_head[q] >= QD) fail("reference queue overflow");
                e_err[j] = !in_range(mem_req_addr, mem_req_len);
                e_len[j] = mem_req_len;
                e_we[j]  = mem_req_we;
                e_seq[j] = accepted;
                accepted = accepted + 1;
                for (b = 0; b < mem_req_len && !e_err[j]; b = b + 1)
                if (mem_req_we) shadow[mem_req_addr+b] = mem_req_wdata[8*b+:8];
                else e_data[j][8*b+:8] = shadow[mem_req_addr+b];
                e_tail[q] = e_tail[q] + 1;
            end

            // ---- responses
            found = 1'b0;
            for (k = 0; k < C; k = k + 1)
            if (c_rsp_valid[k]) begin
                if (found) fail("a response went to two cores");
                found = 1'b1;
                if ((mem_rsp_id >> CORE_ID_W) !== k) fail("a response went to the wrong core");
                if (c_rsp_id[CORE_ID_W*k+:CORE_ID_W] !== mem_rsp_id[CORE_ID_W-1:0])
                    fail("a core's response id is not the low id bits");
                if (mem_rsp_ready !== c_rsp_ready[k])
                    fail("mem_rsp_ready is not the addressed core's rsp_ready");
                if (!c_rsp_ready[k]) rsp_stalled = rsp_stalled + 1;
                else begin
                    q = k * NID + c_rsp_id[CORE_ID_W*k+:CORE_ID_W];
                    if (e_head[q] == e_tail[q]) fail("a response nobody asked for");
                    j = q * QD + e_head[q] % QD;
                    if (c_rsp_err[k] !== e_err[j]) fail("response err");
                    if (!e_err[j] && !e_we[j])
                        for (b = 0; b < e_len[j]; b = b + 1)
                        if (c_rsp_rdata[32*N*k+8*b+:8] !== e_data[j][8*b+:8])
                            fail("response read data");
                    // Overtaking: an older request of another core is still unanswered.
                    oldest = e_seq[j];
                    for (q = 0; q < NQ; q = q + 1)
                    if (q / NID != k && e_head[q] != e_tail[q] && e_seq[q*QD+e_head[q]%QD] < oldest)
                        oldest = e_seq[q*QD+e_head[q]%QD];
                    if (oldest < e_seq[j]) interleaved = interleaved + 1;
                    q = k * NID + c_rsp_id[CORE_ID_W*k+:CORE_ID_W];
                    e_head[q] = e_head[q] + 1;
                end
            end
            if (found !== mem_rsp_valid) fail("a response reached no core");

            // ---- the masters: a new request when idle, random rsp_ready
            for (k = 0; k < C; k = k + 1) begin
                if (!(c_req_valid[k] && !c_req_ready[k])) begin
                    r = $random(seed);
                    c_req_valid[k] <= !stop && k < active && ({r} % 100) < p_req;
                    c_req_we[k] <= r[20];
                    c_req_len[16*k+:16] <= 1 + {$random(seed)} % BUS;
                    c_req_id[CORE_ID_W*k+:CORE_ID_W] <= r[23:22];
                    c_req_addr[32*k+:32] <= (r[27:24] == 4'd0) ? MEM_SIZE - 4 + {$random(
                        seed
                    )} % 8 : {$random(
                        seed
                    )} % (MEM_SIZE - BUS);
                    for (b = 0; b < N; b = b + 1) c_req_wdata[32*N*k+32*b+:32] <= $random(seed);
                end
                c_rsp_ready[k] <= ({$random(seed)} % 100) < rsp_ready_pct;
            end
        end
    end

    // A phase of traffic, then a drain; saturating phases check the rotation and the bound.
    task phase(input integer rate, input integer ready, input integer rsp, input integer rrdy,
               input integer n_active, input integer cycles);
        integer t, a0, k;
        reg busy;
        integer g_min, g_max;
        integer gk[0:C-1];
        begin
            p_req = rate;
            ready_pct = ready;
            rsp_pct = rsp;
            rsp_ready_pct = rrdy;
            active = n_active;
            for (k = 0; k < C; k = k + 1) gk[k] = grants[k];
            repeat (4) @(posedge clk);  // every core has started requesting
            @(negedge clk);
            saturated = rate == 100 && n_active == C;
            sat_grants = 0;
            last_grant = -1;
            rotation_errs = 0;
            a0 = accepted;
            repeat (cycles) @(posedge clk);
            @(negedge clk);
            a0 = accepted - a0;
            saturated = 1'b0;
            stop = 1'b1;
            t = 0;
            busy = 1'b1;
            while (busy) begin
                @(negedge clk);
                busy = |c_req_valid;
                for (k = 0; k < NQ; k = k + 1) if (e_head[k] != e_tail[k]) busy = 1'b1;
                t = t + 1;
                if (t > 4000) fail("traffic did not drain");
            end
            stop  = 1'b0;
            g_min = 1 << 30;
            g_max = 0;
            for (k = 0; k < n_active; k = k + 1) begin
                gk[k] = grants[k] - gk[k];
                if (gk[k] < g_min) g_min = gk[k];
                if (gk[k] > g_max) g_max = gk[k];
            end
            if (rate == 100 && n_active == C) begin
                if (rotation_errs != 0) fail("saturating cores were not granted in rotation");
                if (g_max - g_min > 1) fail("saturating cores got unequal grants");
                if (ready == 100 && a0 != cycles)
                    fail("an always-ready memory did not accept every cycle");
                $display("C = %0d: saturated, memory ready %0d%%: grants per core %0d..%0d", C,
                         ready, g_min, g_max);
            end
            if (rate > 0 && g_min == 0) fail("a requesting core got no grant");
        end
    endtask

    integer i, st;
    initial begin
        done = 1'b0;
        for (i = 0; i < MEM_SIZE; i = i + 1) begin
            u_mem.mem[i] = $random(seed);
            shadow[i] = u_mem.mem[i];
        end
        for (i = 0; i < NQ; i = i + 1) begin
            e_head[i] = 0;
            e_tail[i] = 0;
        end
        for (i = 0; i < C; i = i + 1) begin
            grants[i] = 0;
            waits[i] = 0;
            stall_total[i] = 0;
        end
        repeat (3) @(posedge clk);
        rst <= 1'b0;
        phase(100, 100, 100, 100, C, 50 * C);  // saturated, always ready: strict rotation
        phase(100, 30, 60, 100, C, 100 * C);  // saturated, refusals: grants held, rotation
        phase(100, 100, 100, 100, 1, 100);  // one core alone gets every cycle
        phase(60, 70, 70, 70, C, 1500);  // random, cores stalling responses
        phase(30, 90, 40, 40, C, 1000);
        phase(90, 50, 100, 90, C, 1000);
        for (i = 0; i < MEM_SIZE; i = i + 1)
        if (u_mem.mem[i] !== shadow[i]) fail("final memory differs from the writes");
        // A response whose index names no core (C not a power of two) is accepted and dropped;
        // forced between two clock edges, after the traffic drained.
        if (C != 1 << CW) begin
            @(negedge clk);
            force mem_rsp_valid = 1'b1;
            force mem_rsp_id = C << CORE_ID_W;
            #1;
            if (mem_rsp_ready !== 1'b1 || c_rsp_valid !== {C{1'b0}})
                fail("a response to no core was not dropped");
            release mem_rsp_valid;
            release mem_rsp_id;
        end
        st = 0;
        for (i = 0; i < C; i = i + 1) st = st + stall_total[i];
        if (C > 1 && (max_wait != C - 1 || st == 0 || interleaved == 0))
            fail("no contention, no C-1 wait or no interleaved responses seen");
        if (C == 1 && st != 0) fail("stall counted with one core");
        if (rsp_stalled == 0) fail("no response back-pressure from the cores");
        $display(
            "C = %0d: %0d requests, max wait %0d grants (bound %0d), %0d stall cycles, %0d responses overtook another core's, %0d cycles of response back-pressure",
            C, accepted, max_wait, C - 1, st, interleaved, rsp_stalled);
        done = 1'b1;
    end
endmodule

module tb_chip_arb;
    parameter N = 8;
    wire [4:0] done;
    chip_arb_bench #(
        .N(N),
        .C(1),
        .SEED(11)
    ) b1 (
        .done(done[0])
    );
    chip_arb_bench #(
        .N(N),
        .C(2),
        .SEED(12)
    ) b2 (
        .done(done[1])
    );
    chip_arb_bench #(
        .N(N),
        .C(3),
        .SEED(13)
    ) b3 (
        .done(done[2])
    );
    chip_arb_bench #(
        .N(N),
        .C(5),
        .SEED(14)
    ) b5 (
        .done(done[3])
    );
    chip_arb_bench #(
        .N(N),
        .C(8),
        .SEED(15)
    ) b8 (
        .done(done[4])
    );
    initial begin
        wait (done === 5'b11111);
        $display("PASS");
        $finish;
    end
endmodule
