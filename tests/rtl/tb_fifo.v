`default_nettype none
// tpu_fifo against a queue model under random traffic, for DEPTH = N (power of two) and
// DEPTH = N - 1 (explicit pointer wrap). Traffic alternates push-heavy, pop-heavy, balanced and
// push+pop-every-cycle phases, so the FIFO runs full and empty, pushes when full and pops when
// empty (both must be ignored) and pushes and pops together at every occupancy. A reset in the
// middle must empty it. Outputs are checked every cycle: count, full, empty and, when not empty,
// the head.
module tb_fifo;
    parameter N = 8;
    localparam CYCLES = 4000;
    localparam RESET_AT = 1900;

    reg clk = 1'b0;
    reg rst = 1'b1;
    integer cycle = 0;
    integer done = 0;

    always #5 clk = ~clk;

    genvar g;
    generate
        for (g = 0; g < 2; g = g + 1) begin : cfg
            localparam DEPTH = N - g;
            localparam W = 8 + 3 * g;
            localparam CW = $clog2(DEPTH + 1);

            reg push = 1'b0;
            reg pop = 1'b0;
            reg [W-1:0] din = {W{1'b0}};
            wire full;
            wire empty;
            wire [W-1:0] dout;
            wire [CW-1:0] count;

            tpu_fifo #(
                .W(W),
                .DEPTH(DEPTH)
            ) dut (
                .clk  (clk),
                .rst  (rst),
                .push (push),
                .din  (din),
                .full (full),
                .pop  (pop),
                .dout (dout),
                .empty(empty),
                .count(count)
            );

            // Model: circular queue of DEPTH entries.
            reg [W-1:0] q[0:DEPTH-1];
            integer head = 0;
            integer n = 0;
            integer seen_full = 0;
            integer seen_both_full = 0;
            integer seen_empty_pop = 0;
            integer pct_push;
            integer pct_pop;
            integer do_push;
            integer do_pop;

            always @(negedge clk) begin
                if (!rst) begin
                    if (count !== n[CW-1:0] || full !== (n == DEPTH) || empty !== (n == 0)) begin
                        $display(
                            "FAIL: fifo DEPTH=%0d cycle %0d: count/full/empty expected %0d/%0d/%0d, actual %0d/%b/%b",
                            DEPTH, cycle, n, n == DEPTH, n == 0, count, full, empty);
                        $finish;
                    end
                    if (n != 0 && dout !== q[head]) begin
                        $display("FAIL: fifo DEPTH=%0d cycle %0d: head expected %h, actual %h",
                                 DEPTH, cycle, q[head], dout);
                        $finish;
                    end
                end
                case ((cycle / 50) % 4)
                    0: begin
                        pct_push = 80;
                        pct_pop  = 20;
                    end
                    1: begin
                        pct_push = 20;
                        pct_pop  = 80;
                    end
                    2: begin
                        pct_push = 50;
                        pct_pop  = 50;
                    end
                    default: begin
                        pct_push = 95;
                        pct_pop  = 95;
                    end
                endcase
                push = ($urandom % 100) < pct_push;
                pop  = ($urandom % 100) < pct_pop;
                din  = $urandom;
                // The model follows the inputs the DUT sees at the next rising edge.
                if (rst) begin
                    head = 0;
                    n = 0;
                end else begin
                    do_push = push && n < DEPTH;
                    do_pop  = pop && n > 0;
                    if (push && pop && n == DEPTH) seen_both_full = seen_both_full + 1;
                    if (pop && n == 0) seen_empty_pop = seen_empty_pop + 1;
                    if (n == DEPTH) seen_full = seen_full + 1;
                    if (do_push) q[(head+n)%DEPTH] = din;
                    if (do_pop) head = (head + 1) % DEPTH;
                    n = n + do_push - do_pop;
                end
            end

            initial begin
                wait (done);
                if (seen_full == 0 || seen_both_full == 0 || seen_empty_pop == 0) begin
                    $display(
                        "FAIL: fifo DEPTH=%0d: traffic never reached full (%0d), push+pop when full (%0d) or pop when empty (%0d)",
                        DEPTH, seen_full, seen_both_full, seen_empty_pop);
                    $finish;
                end
            end
        end
    endgenerate

    // rst changes just after a rising edge, so the checkers (on the falling edge) and the DUT
    // (on the next rising edge) both see it.
    initial begin
        repeat (2) @(posedge clk);
        #1 rst = 1'b0;
        while (cycle < CYCLES) begin
            @(posedge clk);
            #1 cycle = cycle + 1;
            rst = cycle == RESET_AT;
        end
        done = 1;
        #1;
        $display("PASS");
        $finish;
    end
endmodule
