`default_nettype none
`include "tpu_isa.vh"
// tpu_chip_csr at C = 1, 3 and 8 (one chip_csr_bench each, side by side).
// Checks: CHIP_ID, CHIP_VERSION, CORES; unmapped, unaligned and write-only offsets read zero;
// each core's stall counter counts its stall input (random, every cycle) and carries into its high
// word; offsets of cores >= C read zero; CTRL.CLEAR_PERF clears the counters (and CTRL without
// the bit does not). Barrier: after reset BAR_MASK = all cores, BAR_GEN = 0; thousands of random
// writes (arrivals of single cores, of several at once, repeated, of cores outside the mask;
// mask changes, including an empty mask) against a reference model of the protocol in
// docs/isa.md: BAR_GEN, BAR_ARRIVE and BAR_MASK after every write; every core's arrival is the
// last one of some generation.
module chip_csr_bench #(
    parameter C = 2,
    parameter SEED = 1
) (
    output reg done
);
    localparam [7:0] A_ID = `TPU_CHIP_CSR_CHIP_ID, A_VERSION = `TPU_CHIP_CSR_CHIP_VERSION,
                     A_CORES = `TPU_CHIP_CSR_CORES, A_CTRL = `TPU_CHIP_CSR_CTRL,
                     A_MASK = `TPU_CHIP_CSR_BAR_MASK, A_ARRIVE = `TPU_CHIP_CSR_BAR_ARRIVE,
                     A_GEN = `TPU_CHIP_CSR_BAR_GEN, A_STALL = `TPU_CHIP_CSR_MEM_STALL;
    localparam [C-1:0] ALL = {C{1'b1}};

    reg clk = 1'b0;
    always #5 clk = !clk;
    reg rst = 1'b1;
    reg csr_we = 1'b0;
    reg [7:0] csr_addr = 8'd0;
    reg [31:0] csr_wdata = 32'd0;
    wire [31:0] csr_rdata;
    reg [C-1:0] stall = {C{1'b0}};

    tpu_chip_csr #(
        .C(C)
    ) dut (
        .clk(clk),
        .rst(rst),
        .csr_we(csr_we),
        .csr_addr(csr_addr),
        .csr_wdata(csr_wdata),
        .csr_rdata(csr_rdata),
        .stall(stall)
    );

    task fail(input [8*80-1:0] what, input [63:0] expv, input [63:0] actv);
        begin
            $display("FAIL: C = %0d: %0s: expected 0x%h, actual 0x%h", C, what, expv, actv);
            $finish;
        end
    endtask

    task expect_rd(input [7:0] addr, input [31:0] expv, input [8*80-1:0] what);
        begin
            csr_addr = addr;
            #1 if (csr_rdata !== expv) fail(what, expv, csr_rdata);
        end
    endtask

    task write(input [7:0] addr, input [31:0] data);
        begin
            @(negedge clk);
            csr_we = 1'b1;
            csr_addr = addr;
            csr_wdata = data;
            @(negedge clk);
            csr_we = 1'b0;
        end
    endtask

    // Stall counters: random stall bits every cycle while counting is on, counted here.
    integer seed = SEED;
    reg counting = 1'b0;
    reg [63:0] cnt[0:C-1];
    integer k;
    always @(negedge clk) stall = counting ? $random(seed) : {C{1'b0}};
    always @(posedge clk) for (k = 0; k < C; k = k + 1) if (stall[k]) cnt[k] = cnt[k] + 1;

    task check_counters(input [8*40-1:0] what);
        integer c;
        begin
            for (c = 0; c < 8; c = c + 1) begin
                expect_rd(A_STALL + 8 * c, c < C ? cnt[c][31:0] : 32'd0, "stall counter, low");
                expect_rd(A_STALL + 8 * c + 4, c < C ? cnt[c][63:32] : 32'd0,
                          "stall counter, high");
            end
        end
    endtask

    // The barrier's reference model.
    reg [C-1:0] r_mask, r_arrived;
    reg [31:0] r_gen;
    reg [C-1:0] last_of_gen;  // cores whose arrival completed a generation
    integer completions = 0;

    task ref_write(input [7:0] addr, input [31:0] data);
        reg [C-1:0] nxt;
        begin
            if (addr == A_MASK) begin
                r_mask = data[C-1:0];
                r_arrived = {C{1'b0}};
            end else if (addr == A_ARRIVE) begin
                nxt = r_arrived | (data[C-1:0] & r_mask);
                if (r_mask != 0 && nxt == r_mask) begin
                    last_of_gen = last_of_gen | (nxt & ~r_arrived);
                    r_arrived = {C{1'b0}};
                    r_gen = r_gen + 1;
                    completions = completions + 1;
                end else r_arrived = nxt;
            end
        end
    endtask

    task check_barrier;
        begin
            expect_rd(A_MASK, {{(32 - C) {1'b0}}, r_mask}, "BAR_MASK");
            expect_rd(A_ARRIVE, {{(32 - C) {1'b0}}, r_arrived}, "BAR_ARRIVE");
            expect_rd(A_GEN, r_gen, "BAR_GEN");
        end
    endtask

    integer i, c;
    reg [31:0] r, d;
    reg [7:0] a;
    initial begin
        done = 1'b0;
        for (c = 0; c < C; c = c + 1) cnt[c] = 64'd0;
        repeat (3) @(negedge clk);
        rst = 1'b0;
        expect_rd(A_ID, 32'h54505543, "CHIP_ID");
        expect_rd(A_VERSION, 32'h00010000, "CHIP_VERSION");
        expect_rd(A_CORES, C, "CORES");
        expect_rd(A_CTRL, 0, "CTRL reads zero");
        expect_rd(8'h1C, 0, "an unmapped offset");
        expect_rd(8'h3C, 0, "an unmapped offset");
        expect_rd(8'h42, 0, "an unaligned offset");
        expect_rd(8'h80, 0, "an offset past the counters");
        expect_rd(8'hFC, 0, "an offset past the counters");

        // ---- stall counters
        check_counters("after reset");
        counting = 1'b1;
        repeat (200) @(negedge clk);
        counting = 1'b0;
        @(negedge clk);
        check_counters("after random stalls");
        write(A_CTRL, 32'hFFFF_FFFD);  // every bit but CLEAR_PERF
        check_counters("after CTRL without CLEAR_PERF");
        // Carry into the high word: counters just below 2^32.
        for (c = 0; c < C; c = c + 1) begin
            dut.stall_cnt[64*c+:64] = 64'h0000_0000_FFFF_FFF0 + c;
            cnt[c] = 64'h0000_0000_FFFF_FFF0 + c;
        end
        counting = 1'b1;
        repeat (100) @(negedge clk);
        counting = 1'b0;
        @(negedge clk);
        check_counters("after carrying into the high word");
        for (c = 0; c < C; c = c + 1)
        if (cnt[c][63:32] == 0) fail("a counter did not reach the high word", 1, 0);
        write(A_CTRL, 32'h2);
        for (c = 0; c < C; c = c + 1) cnt[c] = 64'd0;
        check_counters("after CTRL.CLEAR_PERF");

        // ---- barrier
        r_mask = ALL;
        r_arrived = {C{1'b0}};
        r_gen = 32'd0;
        last_of_gen = {C{1'b0}};
        check_barrier;
        write(A_ARRIVE, {{(32 - C) {1'b0}}, ALL});  // everyone at once
        ref_write(A_ARRIVE, {{(32 - C) {1'b0}}, ALL});
        check_barrier;
        if (r_gen != 1) fail("all arriving at once did not complete a generation", 1, r_gen);
        last_of_gen = {C{1'b0}};
        for (i = 0; i < 3000; i = i + 1) begin
            r = $random(seed);
            if (r[7:0] < 8'd6) begin
                a = A_MASK;  // rarely: a new mask, sometimes empty, mostly all cores
                d = r[8] ? {{(32 - C) {1'b0}}, ALL} : $random(seed);
                if (r[9] && r[10]) d = 0;
            end else begin
                a = A_ARRIVE;
                d = r[8] ? $random(seed) : 1 << ({$random(seed)} % C);
            end
            write(a, d);
            ref_write(a, d);
            check_barrier;
            // Back to all cores now and then, so that every core's arrival completes some.
            if (r_mask != ALL && r[31:28] == 4'd0) begin
                write(A_MASK, {{(32 - C) {1'b0}}, ALL});
                ref_write(A_MASK, {{(32 - C) {1'b0}}, ALL});
                check_barrier;
            end
        end
        if (last_of_gen != ALL || completions < 100)
            fail("too few completions, or some core never completed a generation", ALL,
                 last_of_gen);
        rst = 1'b1;
        @(negedge clk);
        rst = 1'b0;
        r_mask = ALL;
        r_arrived = {C{1'b0}};
        r_gen = 32'd0;
        check_barrier;
        $display("C = %0d: %0d barrier generations completed, counters carry and clear", C,
                 completions);
        done = 1'b1;
    end
endmodule

module tb_chip_csr;
    parameter N = 8;  // run_tb.sh sets it; the chip CSRs do not depend on it
    wire [2:0] done;
    chip_csr_bench #(
        .C(1),
        .SEED(N + 1)
    ) b1 (
        .done(done[0])
    );
    chip_csr_bench #(
        .C(3),
        .SEED(N + 2)
    ) b3 (
        .done(done[1])
    );
    chip_csr_bench #(
        .C(8),
        .SEED(N + 3)
    ) b8 (
        .done(done[2])
    );
    initial begin
        wait (done === 3'b111);
        $display("PASS");
        $finish;
    end
endmodule
