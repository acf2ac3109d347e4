`default_nettype none
// tpu_icg: an integrated clock-gating cell. gclk = clk & en_l, en_l a latch transparent while
// clk is low, so an en that changes after a rising edge (it comes from registers of the clk
// domain) cannot cut a high phase short or add an edge: gclk rises with clk on the cycles en was
// high before the edge, and stays low otherwise.
//
// Real TPUs, like every low-power design, gate the clock of an idle datapath; here it also saves
// simulation time: Verilator evaluates the registers of the gated domain only on cycles it ticks.
module tpu_icg (
    input  wire clk,
    input  wire en,
    output wire gclk
);
    reg en_l;
    // The latch is the cell's point; Verilog-2005 has no always_latch to say so.
    /* verilator lint_off LATCH */
    always @(clk or en) if (!clk) en_l = en;
    /* verilator lint_on LATCH */
    assign gclk = clk & en_l;
endmodule
