`default_nettype none
// Chip-level control and status registers (docs/isa.md "Chip"): identity, core count, the
// per-core memory-stall counters (64 bits, counting tpu_chip_arb's stall events) and a barrier.
// Reads are combinational from csr_addr; unmapped, unaligned and write-only offsets read as zero.
// Writes take effect at the clock edge.
//
// Barrier: BAR_MASK holds the participating cores (all C after reset). A write to BAR_ARRIVE
// marks the cores of its set bits (masked by BAR_MASK) as arrived; in the edge where every
// participating core has arrived, BAR_GEN increments and the arrived set clears, so the barrier
// is ready for its next use. A core waits by reading BAR_GEN (g) before it arrives and polling
// until BAR_GEN != g: the generation cannot advance between the read and its own arrival. A write
// to BAR_MASK restarts the current generation (arrivals cleared, BAR_GEN kept). BAR_MASK = 0
// never completes.
module tpu_chip_csr #(
    parameter C = 2  // cores, 1..8
) (
    input wire clk,
    input wire rst,
    input wire csr_we,
    input wire [7:0] csr_addr,
    input wire [31:0] csr_wdata,
    output reg [31:0] csr_rdata,
    input wire [C-1:0] stall  // core k lost a cycle of the memory port to another core
);
    localparam [7:0] A_CHIP_ID = 8'h00, A_CHIP_VERSION = 8'h04, A_CORES = 8'h08,
                     A_CTRL = 8'h0C, A_BAR_MASK = 8'h10, A_BAR_ARRIVE = 8'h14,
                     A_BAR_GEN = 8'h18, A_STALL = 8'h40;
    localparam [31:0] CHIP_ID = 32'h54505543;  // "TPUC"
    localparam [31:0] CHIP_VERSION = 32'h00010000;  // 1.0
    localparam [31:0] P_CORES = C;
    localparam CTRL_CLEAR_PERF_BIT = 1;  // as the core's CTRL
    localparam [C-1:0] ALL = {C{1'b1}};

    reg [64*C-1:0] stall_cnt;  // core k's counter at bits [64k +: 64]
    reg [C-1:0] bar_mask;
    reg [C-1:0] bar_arrived;
    reg [31:0] bar_gen;

    wire clear = csr_we && csr_addr == A_CTRL && csr_wdata[CTRL_CLEAR_PERF_BIT];
    wire [C-1:0] bar_next = bar_arrived |
        ((csr_we && csr_addr == A_BAR_ARRIVE) ? csr_wdata[C-1:0] & bar_mask : {C{1'b0}});
    wire bar_done = bar_mask != {C{1'b0}} && (bar_next & bar_mask) == bar_mask;
    // Stall counter k at A_STALL + 8k (low word) and + 4 (high word), k < C <= 8.
    // Offsets of cores C..7 read as zero.
    wire [2:0] stall_idx = csr_addr[5:3];
    reg [63:0] stall_sel;
    integer i, j;

    always @(posedge clk) begin
        if (rst) begin
            bar_mask <= ALL;
            bar_arrived <= {C{1'b0}};
            bar_gen <= 32'd0;
        end else if (csr_we && csr_addr == A_BAR_MASK) begin
            bar_mask <= csr_wdata[C-1:0];
            bar_arrived <= {C{1'b0}};
        end else if (bar_done) begin
            bar_arrived <= {C{1'b0}};
            bar_gen <= bar_gen + 32'd1;
        end else begin
            bar_arrived <= bar_next;
        end
    end

    always @(posedge clk) begin
        for (i = 0; i < C; i = i + 1)
        stall_cnt[64*i+:64] <= (rst || clear) ? 64'd0 : stall_cnt[64*i+:64] + {63'd0, stall[i]};
    end

    always @* begin
        stall_sel = 64'd0;
        for (j = 0; j < C; j = j + 1) if ({29'd0, stall_idx} == j) stall_sel = stall_cnt[64*j+:64];
        csr_rdata = 32'd0;
        case (csr_addr)
            A_CHIP_ID: csr_rdata = CHIP_ID;
            A_CHIP_VERSION: csr_rdata = CHIP_VERSION;
            A_CORES: csr_rdata = P_CORES;
            A_BAR_MASK: csr_rdata[C-1:0] = bar_mask;
            A_BAR_ARRIVE: csr_rdata[C-1:0] = bar_arrived;
            A_BAR_GEN: csr_rdata = bar_gen;
            default: ;
        endcase
        if (csr_addr[7:6] == A_STALL[7:6] && csr_addr[1:0] == 2'd0)
            csr_rdata = csr_addr[2] ? stall_sel[63:32] : stall_sel[31:0];
    end
endmodule
