`default_nettype none
`include "tpu_isa.vh"
// Control and status registers and the 64-bit performance counters (docs/isa.md, offsets and
// counter order from rtl/tpu_isa.toml). Reads are combinational from csr_addr; unmapped,
// unaligned and write-only offsets read as zero. Writes (MEM_SIZE, CTRL) take effect at the clock
// edge. CTRL.CLEAR_PERF clears the performance counters, winning over that cycle's events;
// SYNC_COUNT and INSN_COUNT only clear on rst.
module tpu_csr #(
    parameter N = 16,
    parameter UB_ROWS = 16384,
    parameter ACC_ROWS = 4096,
    parameter WFIFO_TILES = 4,
    parameter IQ_DEPTH = 32
) (
    input wire clk,
    input wire rst,
    input wire csr_we,
    input wire [`TPU_CSR_ADDR_W-1:0] csr_addr,
    input wire [31:0] csr_wdata,
    output reg [31:0] csr_rdata,
    output reg [31:0] mem_size,
    // state from the sequencer
    input wire busy,
    input wire halted,
    input wire error,
    input wire [`TPU_FAULT_W-1:0] error_code,
    input wire [31:0] error_pc,
    input wire [31:0] iq_free,
    // events of this cycle
    input wire ev_push,  // an instruction entered the queue
    input wire ev_sync,  // a SYNC retired
    input wire ev_mxu_row,  // an activation row entered the array
    input wire ev_stall_hazard,
    input wire ev_stall_unit,
    input wire ev_stall_weight,
    input wire ev_stall_mem,
    input wire ev_stall_issue,
    input wire [15:0] rd_bytes,  // bytes of a read request accepted by the memory
    input wire [15:0] wr_bytes,  // bytes of a write request accepted by the memory
    input wire [2:0] retired  // instructions completed
);
    localparam NPERF = `TPU_PERF_COUNT;
    localparam [`TPU_CSR_ADDR_W-1:0] A_PERF = `TPU_CSR_PERF_BASE, A_PERF_END = A_PERF + 8 * NPERF;
    localparam [31:0] P_N = N, P_UB_ROWS = UB_ROWS, P_ACC_ROWS = ACC_ROWS,
                      P_WFIFO_TILES = WFIFO_TILES, P_IQ_DEPTH = IQ_DEPTH, P_BUS_BYTES = 4 * N;

    reg [31:0] sync_count;
    reg [31:0] insn_count;
    reg [63:0] perf[0:NPERF-1];  // one register per counter, in the table's order

    // Increment of each counter this cycle, at its index in the table: a counter the table lists
    // and nothing drives here is an undriven bit for lint.
    wire [16*NPERF-1:0] inc;
    assign inc[16*`TPU_PERF_ACTIVE+:16] = {15'd0, busy};
    assign inc[16*`TPU_PERF_MXU_BUSY+:16] = {15'd0, ev_mxu_row};
    assign inc[16*`TPU_PERF_STALL_HAZARD+:16] = {15'd0, ev_stall_hazard};
    assign inc[16*`TPU_PERF_STALL_UNIT+:16] = {15'd0, ev_stall_unit};
    assign inc[16*`TPU_PERF_STALL_WEIGHT+:16] = {15'd0, ev_stall_weight};
    assign inc[16*`TPU_PERF_STALL_MEM+:16] = {15'd0, ev_stall_mem};
    assign inc[16*`TPU_PERF_STALL_ISSUE+:16] = {15'd0, ev_stall_issue};
    assign inc[16*`TPU_PERF_DMA_RD_BYTES+:16] = rd_bytes;
    assign inc[16*`TPU_PERF_DMA_WR_BYTES+:16] = wr_bytes;
    assign inc[16*`TPU_PERF_RETIRED+:16] = {13'd0, retired};
    wire clear = csr_we && csr_addr == `TPU_CSR_CTRL && csr_wdata[`TPU_CTRL_CLEAR_PERF_BIT];
    // Counter index within A_PERF..A_PERF_END: (csr_addr - A_PERF) / 8, modulo 16 (NPERF <= 16).
    wire [3:0] perf_idx = csr_addr[6:3] - A_PERF[6:3];
    wire [63:0] perf_sel = perf[perf_idx];  // read only when perf_idx < NPERF
    integer i;

    always @(posedge clk) begin
        if (rst) begin
            mem_size   <= 32'd0;
            sync_count <= 32'd0;
            insn_count <= 32'd0;
        end else begin
            if (csr_we && csr_addr == `TPU_CSR_MEM_SIZE) mem_size <= csr_wdata;
            if (ev_sync) sync_count <= sync_count + 32'd1;
            if (ev_push) insn_count <= insn_count + 32'd1;
        end
    end

    always @(posedge clk) begin
        for (i = 0; i < NPERF; i = i + 1)
        perf[i] <= (rst || clear) ? 64'd0 : perf[i] + {48'd0, inc[16*i+:16]};
    end

    always @* begin
        csr_rdata = 32'd0;
        case (csr_addr)
            `TPU_CSR_ID: csr_rdata = `TPU_ID_MAGIC;
            `TPU_CSR_VERSION: csr_rdata = `TPU_VERSION;
            `TPU_CSR_ARRAY_N: csr_rdata = P_N;
            `TPU_CSR_UB_ROWS: csr_rdata = P_UB_ROWS;
            `TPU_CSR_ACC_ROWS: csr_rdata = P_ACC_ROWS;
            `TPU_CSR_WFIFO_TILES: csr_rdata = P_WFIFO_TILES;
            `TPU_CSR_IQ_DEPTH: csr_rdata = P_IQ_DEPTH;
            `TPU_CSR_BUS_BYTES: csr_rdata = P_BUS_BYTES;
            `TPU_CSR_STATUS: begin
                csr_rdata[`TPU_STATUS_BUSY_BIT]   = busy;
                csr_rdata[`TPU_STATUS_HALTED_BIT] = halted;
                csr_rdata[`TPU_STATUS_ERROR_BIT]  = error;
            end
            `TPU_CSR_ERROR_CODE: csr_rdata = {{(32 - `TPU_FAULT_W) {1'b0}}, error_code};
            `TPU_CSR_ERROR_PC: csr_rdata = error_pc;
            `TPU_CSR_SYNC_COUNT: csr_rdata = sync_count;
            `TPU_CSR_MEM_SIZE: csr_rdata = mem_size;
            `TPU_CSR_IQ_FREE: csr_rdata = iq_free;
            `TPU_CSR_INSN_COUNT: csr_rdata = insn_count;
            default: ;
        endcase
        if (csr_addr >= A_PERF && csr_addr < A_PERF_END && csr_addr[1:0] == 2'd0)
            csr_rdata = csr_addr[2] ? perf_sel[63:32] : perf_sel[31:0];
    end
endmodule
