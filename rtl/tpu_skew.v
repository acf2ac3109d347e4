`default_nettype none
// tpu_skew: triangular delay line. N lanes of W bits; lane i is delayed by i cycles, or by
// N-1-i cycles when REVERSE = 1. A lane with delay 0 is a wire. Every lane has its own shift
// register (no bus shared between lanes), which keeps Icarus fast.
module tpu_skew #(
    parameter N       = 16,
    parameter W       = 8,
    parameter REVERSE = 0
) (
    input  wire           clk,
    input  wire           rst,
    input  wire [N*W-1:0] d,
    output wire [N*W-1:0] q
);
    genvar i;
    generate
        for (i = 0; i < N; i = i + 1) begin : g_lane
            localparam integer D = (REVERSE != 0) ? N - 1 - i : i;
            if (D == 0) begin : g_wire
                assign q[i*W+:W] = d[i*W+:W];
            end else begin : g_delay
                // sr holds the last D inputs of this lane, newest in the low W bits.
                reg [W*D-1:0] sr;
                if (D == 1) begin : g_one
                    always @(posedge clk) sr <= rst ? {W{1'b0}} : d[i*W+:W];
                end else begin : g_many
                    always @(posedge clk) sr <= rst ? {W * D{1'b0}} : {sr[W*(D-1)-1:0], d[i*W+:W]};
                end
                assign q[i*W+:W] = sr[W*D-1-:W];
            end
        end
    endgenerate
endmodule
