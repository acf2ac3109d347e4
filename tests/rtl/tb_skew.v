// tb_skew: forward (lane i delayed i) and reverse (lane i delayed N-1-i) tpu_skew with random
// and all-ones/all-zeros lane data; every lane is compared every cycle against the input
// history, including the zeros it must show right after reset and after a mid-run reset.
module tb_skew;
    parameter N = 8;
    // 24-bit lanes: lanes with W * delay <= 64 are shift registers, longer ones rings, so every
    // N tested (4, 8, 16) has lanes of both kinds.
    localparam W = 24;
    localparam CYCLES = 6 * N + 40;

    reg clk = 1'b0;
    always #5 clk = ~clk;
    reg rst;
    reg [N*W-1:0] d;
    wire [N*W-1:0] q_fwd, q_rev;

    tpu_skew #(
        .N(N),
        .W(W),
        .REVERSE(0)
    ) u_fwd (
        .clk(clk),
        .rst(rst),
        .d  (d),
        .q  (q_fwd)
    );
    tpu_skew #(
        .N(N),
        .W(W),
        .REVERSE(1)
    ) u_rev (
        .clk(clk),
        .rst(rst),
        .d  (d),
        .q  (q_rev)
    );

    reg [N*W-1:0] hist[0:CYCLES-1];
    integer errors = 0;
    integer seed = 7;
    integer t, t0, i, run;

    // expected lane i at cycle t for delay dly: input of cycle t-dly, zero before the reset point
    function [W-1:0] expect_lane(input integer lane, input integer dly);
        expect_lane = (t - dly < t0) ? {W{1'b0}} : hist[t-dly][lane*W+:W];
    endfunction

    task check(input [8*8-1:0] which, input [N*W-1:0] q, input integer rev);
        integer dly;
        begin
            for (i = 0; i < N; i = i + 1) begin
                dly = rev ? N - 1 - i : i;
                if (q[i*W+:W] !== expect_lane(i, dly)) begin
                    $display("FAIL: %0s lane %0d (delay %0d) cycle %0d expected %h actual %h",
                             which, i, dly, t, expect_lane(i, dly), q[i*W+:W]);
                    errors = errors + 1;
                    if (errors > 10) $finish;
                end
            end
        end
    endtask

    initial begin
        rst = 1'b1;
        d   = {N * W{1'b1}};  // inputs during reset must not leak into the lanes
        @(posedge clk);
        #1 rst = 1'b0;
        t0 = 0;
        for (run = 0; run < 2; run = run + 1) begin
            for (t = t0; t < (run == 0 ? CYCLES / 2 : CYCLES); t = t + 1) begin
                case (t % 9)
                    0: d = {N * W{1'b1}};
                    1: d = {N * W{1'b0}};
                    default: for (i = 0; i < N; i = i + 1) d[i*W+:W] = $random(seed);
                endcase
                hist[t] = d;
                #1;
                check("forward", q_fwd, 0);
                check("reverse", q_rev, 1);
                @(posedge clk);
                #1;
            end
            // synchronous reset in the middle of a run clears every lane
            rst = 1'b1;
            @(posedge clk);
            #1 rst = 1'b0;
            t0 = t;
        end
        if (errors == 0) $display("PASS");
        $finish;
    end
endmodule
