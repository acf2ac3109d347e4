`default_nettype none
// tpu_skew: triangular delay line. N lanes of W bits; lane i is delayed by i cycles, or by
// N-1-i cycles when REVERSE = 1. A lane with delay 0 is a wire. Reset clears the lines: a lane
// with delay D outputs zeros for the D cycles after it.
//
// Every lane has storage of its own (no bus shared between lanes, which keeps Icarus fast), and
// nothing wide moves in a cycle:
//  - a lane of at most 64 bits of history (W * D <= 64) is a shift register;
//  - a longer one is a ring of 2^PW entries of W bits (2^PW >= N > D): one write pointer, shared
//    by the lanes, steps every cycle, and lane i reads the entry written D cycles ago, so a cycle
//    costs one write and one read per lane whatever D and W are. After reset `age` counts the
//    cycles (up to N - 1) and a lane shows zeros until its line has filled (age >= D), as a
//    cleared shift register would.
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
    localparam PW = (N > 2) ? $clog2(N) : 1;
    localparam integer AGE_MAX_I = N - 1;
    localparam [PW-1:0] AGE_MAX = AGE_MAX_I[PW-1:0];
    localparam [PW-1:0] PW_ONE = 1;

    // Whether any lane is a ring: the longest has D = N - 1.
    localparam RINGS = W * (N - 1) > 64;

    generate
        if (RINGS) begin : g_ptr
            // The ring pointer and the cycles since reset.
            reg [PW-1:0] wp;
            reg [PW-1:0] age;
            always @(posedge clk) begin
                if (rst) begin
                    wp  <= {PW{1'b0}};
                    age <= {PW{1'b0}};
                end else begin
                    wp <= wp + PW_ONE;
                    if (age != AGE_MAX) age <= age + PW_ONE;
                end
            end
        end
    endgenerate

    genvar i;
    generate
        for (i = 0; i < N; i = i + 1) begin : g_lane
            localparam integer D = (REVERSE != 0) ? N - 1 - i : i;
            if (D == 0) begin : g_wire
                assign q[i*W+:W] = d[i*W+:W];
            end else if (W * D <= 64) begin : g_shift
                // sr holds the last D inputs of this lane, newest in the low W bits.
                reg [W*D-1:0] sr;
                if (D == 1) begin : g_one
                    always @(posedge clk) sr <= rst ? {W{1'b0}} : d[i*W+:W];
                end else begin : g_many
                    always @(posedge clk) sr <= rst ? {W * D{1'b0}} : {sr[W*(D-1)-1:0], d[i*W+:W]};
                end
                assign q[i*W+:W] = sr[W*D-1-:W];
            end else begin : g_ring
                localparam [PW-1:0] DP = D[PW-1:0];
                reg [W-1:0] ring[0:(1<<PW)-1];
                wire [PW-1:0] rp = g_ptr.wp - DP;  // written D cycles ago
                always @(posedge clk) ring[g_ptr.wp] <= d[i*W+:W];
                assign q[i*W+:W] = (g_ptr.age >= DP) ? ring[rp] : {W{1'b0}};
            end
        end
    endgenerate
endmodule
