`default_nettype none
// tpu_acc (ROWS = 2N + 3) against a memory model of per-lane wrapping int32 adds and (w_bf16)
// fp32 adds (rtl/tpu_fp.vh's fp32_add).
// Directed first, with hard-coded expectations: overwrite with INT32_MAX then accumulate +1
// back to back (wraps to INT32_MIN), read on both ports; then three back-to-back accumulates
// to one row whose lanes alternate 0xFFFFFFFF / 0, so a carry leaking into the next lane shows.
// Then fp32, directed: 1 + -1 = +0, the largest finite doubled = inf, inf + -inf = NaN, a
// subnormal read as zero, -0 + -0 = -0; and an fp32 overwrite of an int32 row and back.
// Then random traffic: overwrite or accumulate, int32 or fp32, often to the row of the previous
// cycle, lanes drawn from random values and the wrap edges (fp32: tb_bf16.vh's), random reads on both ports (never of the row
// written in the same cycle, which the contract leaves open). Every cycle each read port must
// show the row it last read, holding it while not enabled.
module tb_acc;
    `include "tpu_fp.vh"
    `include "tb_bf16.vh"
    parameter N = 8;
    localparam ROWS = 2 * N + 3;
    localparam CYCLES = 3000;

    reg clk = 1'b0;
    always #5 clk = ~clk;

    reg w_en = 1'b0;
    reg w_accumulate = 1'b0;
    reg w_bf16 = 1'b0;
    reg [19:0] w_addr = 20'd0;
    reg [32*N-1:0] w_data = {32 * N{1'b0}};
    reg r0_en = 1'b0;
    reg r1_en = 1'b0;
    reg [19:0] r0_addr = 20'd0;
    reg [19:0] r1_addr = 20'd0;
    wire [32*N-1:0] r0_data;
    wire [32*N-1:0] r1_data;

    tpu_acc #(
        .N(N),
        .ROWS(ROWS)
    ) dut (
        .clk(clk),
        .w_en(w_en),
        .w_addr(w_addr),
        .w_accumulate(w_accumulate),
        .w_bf16(w_bf16),
        .w_data(w_data),
        .r0_en(r0_en),
        .r0_addr(r0_addr),
        .r0_data(r0_data),
        .r1_en(r1_en),
        .r1_addr(r1_addr),
        .r1_data(r1_data)
    );

    reg [32*N-1:0] model[0:ROWS-1];
    reg [32*N-1:0] exp_r0;
    reg [32*N-1:0] exp_r1;
    integer valid_r0 = 0;
    integer valid_r1 = 0;
    integer cycle = 0;
    integer row;
    integer k;
    integer last_w = 0;

    // One clock cycle: at the falling edge check both read ports, then apply the inputs for the
    // next rising edge and advance the model to match.
    task tick(input we, input [19:0] wa, input acc, input [32*N-1:0] wd, input re0,
              input [19:0] ra0, input re1, input [19:0] ra1);
        tick_t(we, wa, acc, 1'b0, wd, re0, ra0, re1, ra1);
    endtask

    task tick_t(input we, input [19:0] wa, input acc, input bf, input [32*N-1:0] wd, input re0,
                input [19:0] ra0, input re1, input [19:0] ra1);
        begin
            @(negedge clk);
            if (valid_r0 && r0_data !== exp_r0) begin
                $display("FAIL: acc cycle %0d: r0_data expected %h, actual %h", cycle, exp_r0,
                         r0_data);
                $finish;
            end
            if (valid_r1 && r1_data !== exp_r1) begin
                $display("FAIL: acc cycle %0d: r1_data expected %h, actual %h", cycle, exp_r1,
                         r1_data);
                $finish;
            end
            w_en = we;
            w_addr = wa;
            w_accumulate = acc;
            w_bf16 = bf;
            w_data = wd;
            r0_en = re0;
            r0_addr = ra0;
            r1_en = re1;
            r1_addr = ra1;
            if (re0) begin
                exp_r0   = model[ra0];
                valid_r0 = 1;
            end
            if (re1) begin
                exp_r1   = model[ra1];
                valid_r1 = 1;
            end
            if (we) begin
                for (k = 0; k < N; k = k + 1)
                model[wa][32*k+:32] = !acc ? wd[32*k+:32] : bf ? fp32_add(
                    model[wa][32*k+:32], wd[32*k+:32]) : model[wa][32*k+:32] + wd[32*k+:32];
                last_w = wa;
            end
            cycle = cycle + 1;
        end
    endtask

    function [32*N-1:0] lanes(input [31:0] even, input [31:0] odd);
        integer i;
        begin
            for (i = 0; i < N; i = i + 1) lanes[32*i+:32] = (i % 2) ? odd : even;
        end
    endfunction

    function [31:0] edge_or_random(input integer pick);
        case (pick % 6)
            0: edge_or_random = 32'h7fffffff;
            1: edge_or_random = 32'h80000000;
            2: edge_or_random = 32'hffffffff;
            3: edge_or_random = 32'd1;
            default: edge_or_random = $urandom;
        endcase
    endfunction

    reg [32*N-1:0] d;
    reg we;
    reg bf;
    reg [19:0] wa;
    reg [19:0] ra0;
    reg [19:0] ra1;

    initial begin
        // Every row gets a defined value first.
        for (row = 0; row < ROWS; row = row + 1) begin
            for (k = 0; k < N; k = k + 1) d[32*k+:32] = $urandom;
            tick(1, row, 0, d, 0, 0, 0, 0);
        end

        // Wrap at INT32_MAX, back-to-back read-modify-write, both read ports.
        tick(1, 1, 0, lanes(32'h7fffffff, 32'h7fffffff), 0, 0, 0, 0);
        tick(1, 1, 1, lanes(32'd1, 32'd1), 0, 0, 0, 0);
        tick(1, 2, 0, lanes(32'hffffffff, 32'd0), 1, 1, 0, 0);
        tick(1, 2, 1, lanes(32'd1, 32'd1), 0, 0, 1, 1);
        #1
        if (r0_data !== lanes(32'h80000000, 32'h80000000)) begin
            $display("FAIL: acc r0 after INT32_MAX + 1: expected %h, actual %h", lanes(
                     32'h80000000, 32'h80000000), r0_data);
            $finish;
        end
        // Lanes: (-1, 0) + 1 = (0, 1); - 1 = (-1, 0); + 1 = (0, 1). No carry between lanes.
        tick(1, 2, 1, lanes(32'hffffffff, 32'hffffffff), 0, 0, 0, 0);
        #1
        if (r1_data !== lanes(32'h80000000, 32'h80000000)) begin
            $display("FAIL: acc r1 after INT32_MAX + 1: expected %h, actual %h", lanes(
                     32'h80000000, 32'h80000000), r1_data);
            $finish;
        end
        tick(1, 2, 1, lanes(32'd1, 32'd1), 0, 0, 0, 0);
        // An overwrite right after an accumulate to the same row: the old value must not leak in.
        tick(1, 3, 1, lanes(32'd5, 32'd7), 0, 0, 0, 0);
        tick(1, 3, 0, lanes(32'd9, 32'h80000000), 1, 2, 1, 2);
        tick(0, 3, 1, lanes(32'd1, 32'd1), 1, 3, 0, 0);
        #1
        if (r0_data !== lanes(32'd0, 32'd1) || r1_data !== lanes(32'd0, 32'd1)) begin
            $display("FAIL: acc lane carry: expected %h on both ports, actual %h and %h", lanes(
                     32'd0, 32'd1), r0_data, r1_data);
            $finish;
        end
        tick(0, 0, 0, d, 0, 0, 0, 0);
        #1
        if (r0_data !== lanes(32'd9, 32'h80000000)) begin
            $display("FAIL: acc overwrite after accumulate: expected %h, actual %h", lanes(
                     32'd9, 32'h80000000), r0_data);
            $finish;
        end

        // fp32, lanes (even, odd): (1, max) + (-1, max) = (+0, inf); + (-0, -inf) = (+0, NaN);
        // then (-0, a negative subnormal) + (-0, -0) = (-0, -0) and an int32 accumulate of 1 on that.
        tick_t(1, 4, 0, 1, lanes(32'h3f800000, 32'h7f7fffff), 0, 0, 0, 0);
        tick_t(1, 4, 1, 1, lanes(32'hbf800000, 32'h7f7fffff), 0, 0, 0, 0);
        tick_t(1, 5, 0, 1, lanes(32'h80000000, 32'h80000001), 1, 4, 0, 0);
        tick_t(1, 4, 1, 1, lanes(32'h80000000, 32'hff800000), 0, 0, 0, 0);
        #1
        if (r0_data !== lanes(32'h0, 32'h7f800000)) begin
            $display("FAIL: acc fp32 1 - 1, max + max: expected %h, actual %h", lanes(
                     32'h0, 32'h7f800000), r0_data);
            $finish;
        end
        tick_t(1, 5, 1, 1, lanes(32'h80000000, 32'h80000000), 0, 0, 1, 4);
        tick(0, 0, 0, d, 1, 5, 0, 0);
        #1
        if (r1_data !== lanes(32'h0, 32'h7fc00000)) begin
            $display("FAIL: acc fp32 + -0, inf - inf: expected %h, actual %h", lanes(
                     32'h0, 32'h7fc00000), r1_data);
            $finish;
        end
        tick(1, 5, 1, lanes(32'd1, 32'd1), 0, 0, 0, 0);
        #1
        if (r0_data !== lanes(32'h80000000, 32'h80000000)) begin
            $display("FAIL: acc fp32 -0 + -0, subnormal + -0: expected %h, actual %h", lanes(
                     32'h80000000, 32'h80000000), r0_data);
            $finish;
        end
        tick(0, 0, 0, d, 1, 5, 0, 0);
        tick(0, 0, 0, d, 0, 0, 0, 0);
        #1
        if (r0_data !== lanes(32'h80000001, 32'h80000001)) begin
            $display("FAIL: acc int32 after fp32: expected %h, actual %h", lanes(
                     32'h80000001, 32'h80000001), r0_data);
            $finish;
        end

        // Random traffic.
        while (cycle < CYCLES) begin
            we = ($urandom % 4) != 0;
            bf = $urandom % 2;
            wa = ($urandom % 5 < 2) ? last_w : $urandom % ROWS;
            for (k = 0; k < N; k = k + 1)
            d[32*k+:32] = bf ? tb_fp32($urandom) : edge_or_random($urandom);
            ra0 = ($urandom % 3 == 0) ? last_w : $urandom % ROWS;
            while (we && ra0 == wa) ra0 = $urandom % ROWS;
            ra1 = ($urandom % 3 == 0) ? ra0 : $urandom % ROWS;
            while (we && ra1 == wa) ra1 = $urandom % ROWS;
            tick_t(we, wa, ($urandom % 10) < 7, bf, d, $urandom % 2, ra0, $urandom % 2, ra1);
        end
        tick(0, 0, 0, d, 0, 0, 0, 0);
        $display("PASS");
        $finish;
    end
endmodule
