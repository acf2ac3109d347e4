// tb_icg: the clock-gating cell. en changes at random times in either phase of clk (N * 64
// cycles); every rising edge of gclk must come with a rising edge of clk on which en was high
// at the end of the low phase before it, every such clk edge must give one, and gclk must be low
// while clk is.
module tb_icg;
    parameter N = 8;

    reg  clk = 1'b0;
    reg  en;
    wire gclk;

    tpu_icg dut (
        .clk (clk),
        .en  (en),
        .gclk(gclk)
    );

    integer errors = 0;
    integer seed = 5;
    integer i, edges = 0, want = 0;
    reg en_low;  // en as clk last rose

    task fail(input [8*24-1:0] what);
        begin
            $display("FAIL: cycle %0d: %0s", i, what);
            errors = errors + 1;
            if (errors > 10) $finish;
        end
    endtask

    always @(posedge gclk) begin
        edges = edges + 1;
        if (!clk) fail("gclk rose, clk low");
    end
    always @(negedge clk) begin
        #1;
        if (gclk !== 1'b0) fail("gclk high, clk low");
    end

    // One cycle: clk low for 5, high for 5. en may change once in each phase, at a random time
    // inside it (never on a clk edge: the cell's timing rule, as registers of the clk domain
    // drive it after the rising edge). It is set in the first low phase: the latch holds X
    // until then, as a real one's unknown state at power-up.
    initial begin
        for (i = 0; i < 64 * N; i = i + 1) begin
            #1;
            if (i == 0 || $random(seed) & 1) en = $random(seed);
            #3;
            en_low = en;
            #1 clk = 1'b1;
            #1;
            if (gclk !== en_low) fail("gclk != en as clk rose");
            if (en_low) want = want + 1;
            if ($random(seed) & 1) en = $random(seed);
            #1;
            if (gclk !== en_low) fail("gclk moved with en high");
            #3 clk = 1'b0;
        end
        #1;
        if (edges != want) fail("gclk edge count");
        if (errors == 0) $display("PASS");
        $finish;
    end
endmodule
