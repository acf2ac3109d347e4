`default_nettype none
`include "tpu_isa.vh"
// Chip-level control and status registers (docs/isa.md "Chip", offsets from rtl/tpu_isa.toml):
// identity, core count, the per-core memory-stall counters (64 bits, counting tpu_chip_arb's
// stall events) and a barrier.
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
    parameter C = 2  // cores, 1..TPU_CHIP_CORES_MAX
) (
    input wire clk,
    input wire rst,
    input wire csr_we,
    input wire [`TPU_CHIP_CSR_ADDR_W-1:0] csr_addr,
    // The registers written are narrower than the port: BAR_MASK and BAR_ARRIVE take C bits, CTRL
    // one, hence the waiver.
    /* verilator lint_off UNUSEDSIGNAL */
    input wire [31:0] csr_wdata,
    /* verilator lint_on UNUSEDSIGNAL */
    output reg [31:0] csr_rdata,
    input wire [C-1:0] stall  // core k lost a cycle of the memory port to another core
);
    localparam [31:0] P_CORES = C;
    localparam [31:0] STALL = {{(32 - `TPU_CHIP_CSR_ADDR_W) {1'b0}}, `TPU_CHIP_CSR_MEM_STALL};
    localparam [C-1:0] ALL = {C{1'b1}};

    reg [64*C-1:0] stall_cnt;  // core k's counter at bits [64k +: 64]
    reg [C-1:0] bar_mask;
    reg [C-1:0] bar_arrived;
    reg [31:0] bar_gen;

    wire clear = csr_we && csr_addr == `TPU_CHIP_CSR_CTRL &&
        csr_wdata[`TPU_CHIP_CTRL_CLEAR_PERF_BIT];
    wire [C-1:0] bar_next = bar_arrived |
        ((csr_we && csr_addr == `TPU_CHIP_CSR_BAR_ARRIVE) ? csr_wdata[C-1:0] & bar_mask : {C{1'b0}});
    wire bar_done = bar_mask != {C{1'b0}} && (bar_next & bar_mask) == bar_mask;
    // Core k's stall counter: low word at MEM_STALL + 8k, high word at + 4, k < C; the offsets
    // of the cores a chip lacks read as zero.
    wire [31:0] addr32 = {{(32 - `TPU_CHIP_CSR_ADDR_W) {1'b0}}, csr_addr};
    integer i, j;

    always @(posedge clk) begin
        if (rst) begin
            bar_mask <= ALL;
            bar_arrived <= {C{1'b0}};
            bar_gen <= 32'd0;
        end else if (csr_we && csr_addr == `TPU_CHIP_CSR_BAR_MASK) begin
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
        csr_rdata = 32'd0;
        case (csr_addr)
            `TPU_CHIP_CSR_CHIP_ID: csr_rdata = `TPU_CHIP_ID_MAGIC;
            `TPU_CHIP_CSR_CHIP_VERSION: csr_rdata = `TPU_CHIP_VERSION;
            `TPU_CHIP_CSR_CORES: csr_rdata = P_CORES;
            `TPU_CHIP_CSR_BAR_MASK: csr_rdata[C-1:0] = bar_mask;
            `TPU_CHIP_CSR_BAR_ARRIVE: csr_rdata[C-1:0] = bar_arrived;
            `TPU_CHIP_CSR_BAR_GEN: csr_rdata = bar_gen;
            default: ;
        endcase
        for (j = 0; j < C; j = j + 1) begin
            if (addr32 == STALL + 8 * j) csr_rdata = stall_cnt[64*j+:32];
            if (addr32 == STALL + 8 * j + 4) csr_rdata = stall_cnt[64*j+32+:32];
        end
    end
endmodule
