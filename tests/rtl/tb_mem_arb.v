`default_nettype none
// tpu_mem_arb between two random masters and the shared memory model (model/mem_model.v). Master 0
// reads the lower half of memory (which nobody writes) or beyond the end (err); master 1 writes the
// upper half, sometimes across the end (err). Masters hold each request stable until it is
// accepted. The memory has random req_ready (and refuses while 32 requests are outstanding),
// random latency per request, and keeps only each id's responses in order, so the two masters'
// responses interleave in any order.
// Checks: each memory-side request is exactly the granted master's (we, addr, len, id, wdata) and
// exactly one master sees ready; a refused request stays stable (checked by the model); a master
// that was waiting when the other was granted gets the next grant (round robin, no starvation);
// saturating masters split the grants evenly and use every cycle of an always-ready memory; every
// response reaches the right master, in order, with its err and (reads) data; final memory
// matches the writes.
module tb_mem_arb;
    parameter N = 8;
    localparam ID_W = 4;
    localparam MEM_SIZE = 4096;
    localparam HALF = MEM_SIZE / 2;
    localparam QD = 64;  // expected responses per master

    reg clk = 1'b0;
    always #5 clk = !clk;
    reg rst = 1'b1;

    reg m0_req_valid = 1'b0;
    wire m0_req_ready;
    reg [31:0] m0_req_addr = 32'd0;
    reg [15:0] m0_req_len = 16'd0;
    wire m0_rsp_valid;
    wire m0_rsp_err;
    wire [32*N-1:0] m0_rsp_rdata;
    reg m1_req_valid = 1'b0;
    wire m1_req_ready;
    reg [31:0] m1_req_addr = 32'd0;
    reg [15:0] m1_req_len = 16'd0;
    reg [32*N-1:0] m1_req_wdata = {32 * N{1'b0}};
    wire m1_rsp_valid;
    wire m1_rsp_err;
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

    tpu_mem_arb #(
        .N(N),
        .ID_W(ID_W)
    ) dut (
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

    integer seed = 3;
    integer p0 = 50;  // chance per cycle that an idle master 0 starts a request
    integer p1 = 50;
    integer ready_pct = 70;  // chance per cycle that mem_req_ready is high
    integer rsp_pct = 70;  // chance per cycle that a due response is given
    reg     stop = 1'b0;  // masters start no new requests

    // A request is answered with err unless all its bytes are below MEM_SIZE (no wrap at 2^32).
    function in_range(input [31:0] addr, input [15:0] len);
        in_range = {32'd0, addr} + len <= MEM_SIZE;
    endfunction

    // ---------------------------------------------------------------- memory --
    reg [7:0] init_mem[0:MEM_SIZE-1];  // the lower half never changes
    reg [7:0] exp_mem [0:MEM_SIZE-1];  // the upper half as master 1's writes leave it

    mem_model #(
        .BUS  (4 * N),
        .ID_W (ID_W),
        .BYTES(MEM_SIZE),
        .DEPTH(QD / 2),
        .SEED (5)
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

    // --------------------------------------------------------------- masters --
    // Expected responses, in order, per master.
    reg [32*N-1:0] e0_data[0:QD-1];
    reg [15:0] e0_len[0:QD-1];
    reg e0_err[0:QD-1];
    reg e1_err[0:QD-1];
    integer e0_head = 0;
    integer e0_tail = 0;
    integer e1_head = 0;
    integer e1_tail = 0;
    integer grants0 = 0;
    integer grants1 = 0;
    integer waiting_grants = 0;  // grants given to a master that waited through the other's grant
    // A master valid when the other was granted is owed the next grant.
    reg owed0 = 1'b0;
    reg owed1 = 1'b0;
    reg [31:0] g_r;
    integer g_j;

    always @(posedge clk) begin
        if (!rst) begin
            if (m0_req_ready && m1_req_ready) begin
                $display("FAIL: both masters see ready");
                $finish;
            end
            if ((m0_req_valid && m0_req_ready) || (m1_req_valid && m1_req_ready)) begin
                if (!(mem_req_valid && mem_req_ready)) begin
                    $display("FAIL: a master handshake without a memory handshake");
                    $finish;
                end
                if (m0_req_ready ? (mem_req_we !== 1'b0 || mem_req_addr !== m0_req_addr || mem_req_len !== m0_req_len)
                                 : (mem_req_we !== 1'b1 || mem_req_addr !== m1_req_addr ||
                                    mem_req_len !== m1_req_len || mem_req_wdata !== m1_req_wdata)) begin
                    $display("FAIL: master %0d granted, memory sees we %b addr %h len %0d",
                             m1_req_ready, mem_req_we, mem_req_addr, mem_req_len);
                    $finish;
                end
                if (mem_req_id !== {{(ID_W - 1) {1'b0}}, mem_req_we}) begin
                    $display("FAIL: request id %0d with we %b", mem_req_id, mem_req_we);
                    $finish;
                end
                if (m0_req_ready ? owed1 : owed0) begin
                    $display("FAIL: master %0d granted twice while master %0d waited",
                             m1_req_ready, m0_req_ready);
                    $finish;
                end
                if (m0_req_ready ? owed0 : owed1) waiting_grants = waiting_grants + 1;
                owed0 = m1_req_ready && m0_req_valid;
                owed1 = m0_req_ready && m1_req_valid;
            end else if (mem_req_valid && mem_req_ready) begin
                $display("FAIL: a memory handshake without a master handshake");
                $finish;
            end

            // Master 0: reads of the static lower half, sometimes beyond the end.
            if (m0_req_valid && m0_req_ready) begin
                for (g_j = 0; g_j < 4 * N; g_j = g_j + 1)
                e0_data[e0_tail%QD][8*g_j+:8] =
                    (g_j < m0_req_len && in_range(m0_req_addr, m0_req_len)) ?
                    init_mem[m0_req_addr+g_j] : 8'd0;
                e0_len[e0_tail%QD] = m0_req_len;
                e0_err[e0_tail%QD] = !in_range(m0_req_addr, m0_req_len);
                e0_tail = e0_tail + 1;
                grants0 = grants0 + 1;
            end
            if (!(m0_req_valid && !m0_req_ready)) begin
                g_r = $random(seed);
                m0_req_valid <= !stop && ({g_r} % 100) < p0;
                m0_req_len <= 1 + {$random(seed)} % (4 * N);
                m0_req_addr <= (g_r[27:24] == 4'd0) ? MEM_SIZE + {$random(
                    seed
                )} % 8 : {$random(
                    seed
                )} % (HALF - 4 * N);
            end

            // Master 1: writes of the upper half, sometimes beyond the end.
            if (m1_req_valid && m1_req_ready) begin
                if (in_range(m1_req_addr, m1_req_len))
                    for (g_j = 0; g_j < m1_req_len; g_j = g_j + 1)
                    exp_mem[m1_req_addr+g_j] = m1_req_wdata[8*g_j+:8];
                e1_err[e1_tail%QD] = !in_range(m1_req_addr, m1_req_len);
                e1_tail = e1_tail + 1;
                grants1 = grants1 + 1;
            end
            if (!(m1_req_valid && !m1_req_ready)) begin
                g_r = $random(seed);
                m1_req_valid <= !stop && ({g_r} % 100) < p1;
                m1_req_len <= 1 + {$random(seed)} % (4 * N);
                m1_req_addr <= (g_r[27:24] == 4'd0) ? MEM_SIZE - 1 - {$random(
                    seed
                )} % 8 : HALF + {$random(
                    seed
                )} % (HALF - 4 * N);
                for (g_j = 0; g_j < N; g_j = g_j + 1) m1_req_wdata[32*g_j+:32] <= $random(seed);
            end

            // Responses.
            if (m0_rsp_valid && m1_rsp_valid) begin
                $display("FAIL: a response went to both masters");
                $finish;
            end
            if (m0_rsp_valid !== (mem_rsp_valid && mem_rsp_id[0] == 1'b0) ||
                m1_rsp_valid !== (mem_rsp_valid && mem_rsp_id[0] == 1'b1) || mem_rsp_ready !== 1'b1) begin
                $display("FAIL: response id %0d valid %b routed as m0 %b m1 %b (rsp_ready %b)",
                         mem_rsp_id, mem_rsp_valid, m0_rsp_valid, m1_rsp_valid, mem_rsp_ready);
                $finish;
            end
            if (m0_rsp_valid) begin
                if (e0_head == e0_tail) begin
                    $display("FAIL: master 0 got a response it did not ask for");
                    $finish;
                end
                if (m0_rsp_err !== e0_err[e0_head%QD]) begin
                    $display("FAIL: master 0 response %0d err %b, expected %b", e0_head,
                             m0_rsp_err, e0_err[e0_head%QD]);
                    $finish;
                end
                if (!m0_rsp_err)
                    for (g_j = 0; g_j < e0_len[e0_head%QD]; g_j = g_j + 1)
                    if (m0_rsp_rdata[8*g_j+:8] !== e0_data[e0_head%QD][8*g_j+:8]) begin
                        $display("FAIL: master 0 response %0d byte %0d = %h, expected %h", e0_head,
                                 g_j, m0_rsp_rdata[8*g_j+:8], e0_data[e0_head%QD][8*g_j+:8]);
                        $finish;
                    end
                e0_head = e0_head + 1;
            end
            if (m1_rsp_valid) begin
                if (e1_head == e1_tail) begin
                    $display("FAIL: master 1 got a response it did not ask for");
                    $finish;
                end
                if (m1_rsp_err !== e1_err[e1_head%QD]) begin
                    $display("FAIL: master 1 response %0d err %b, expected %b", e1_head,
                             m1_rsp_err, e1_err[e1_head%QD]);
                    $finish;
                end
                e1_head = e1_head + 1;
            end
        end
    end

    // A phase of traffic with the given request rates and memory behaviour, then a drain.
    task phase(input integer rate0, input integer rate1, input integer ready, input integer rsp,
               input integer cycles);
        integer t;
        integer g0;
        integer g1;
        begin
            p0 = rate0;
            p1 = rate1;
            ready_pct = ready;
            rsp_pct = rsp;
            g0 = grants0;
            g1 = grants1;
            repeat (cycles) @(posedge clk);
            stop = 1'b1;
            t = 0;
            while (m0_req_valid || m1_req_valid || e0_head != e0_tail || e1_head != e1_tail) begin
                @(posedge clk);
                t = t + 1;
                if (t > 2000) begin
                    $display("FAIL: traffic did not drain (%0d/%0d reads, %0d/%0d writes answered)",
                             e0_head, e0_tail, e1_head, e1_tail);
                    $finish;
                end
            end
            stop = 1'b0;
            // A master that always requests, with an always-ready memory, uses every cycle.
            if (ready == 100 && (rate0 == 100 || rate1 == 100) && grants0 - g0 + grants1 - g1 < cycles - 1) begin
                $display("FAIL: %0d grants in %0d cycles with a saturating master",
                         grants0 - g0 + grants1 - g1, cycles);
                $finish;
            end
            // Both masters saturating: round robin splits the grants evenly.
            if (rate0 == 100 && rate1 == 100 && (grants0 - g0 - (grants1 - g1) > 1 ||
                                                 grants1 - g1 - (grants0 - g0) > 1)) begin
                $display("FAIL: saturated masters got %0d and %0d grants", grants0 - g0,
                         grants1 - g1);
                $finish;
            end
            if ((rate0 > 0 && grants0 == g0) || (rate1 > 0 && grants1 == g1)) begin
                $display("FAIL: a requesting master got no grant (%0d, %0d)", grants0 - g0,
                         grants1 - g1);
                $finish;
            end
        end
    endtask

    integer i;

    initial begin
        for (i = 0; i < MEM_SIZE; i = i + 1) begin
            u_mem.mem[i] = $random(seed);
            init_mem[i]  = u_mem.mem[i];
            exp_mem[i]   = u_mem.mem[i];
        end
        repeat (3) @(posedge clk);
        rst <= 1'b0;

        phase(100, 100, 100, 100, 200);  // saturated, always ready: strict alternation
        phase(100, 100, 30, 60, 300);  // saturated with refusals: grants held, still alternating
        phase(100, 0, 100, 100, 100);  // one master alone gets every cycle
        phase(0, 100, 50, 100, 100);
        phase(60, 40, 70, 70, 1000);  // random interleaving
        phase(20, 90, 100, 30, 500);
        phase(90, 20, 20, 100, 500);

        for (i = HALF; i < MEM_SIZE; i = i + 1)
        if (u_mem.mem[i] !== exp_mem[i]) begin
            $display("FAIL: mem[%0d] = %h after master 1's writes, expected %h", i, u_mem.mem[i],
                     exp_mem[i]);
            $finish;
        end
        if (waiting_grants == 0) begin
            $display("FAIL: the arbiter never had both masters competing");
            $finish;
        end
        $display("%0d reads, %0d writes, %0d contested grants", grants0, grants1, waiting_grants);
        $display("PASS");
        $finish;
    end
endmodule
