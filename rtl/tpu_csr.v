`default_nettype none
// Control and status registers and the 64-bit performance counters (docs/isa.md). Reads are
// combinational from csr_addr; unmapped, unaligned and write-only offsets read as zero. Writes
// (MEM_SIZE, CTRL) take effect at the clock edge. CTRL bit1 clears the performance counters,
// winning over that cycle's events; SYNC_COUNT and INSN_COUNT only clear on rst.
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
    input wire [7:0] csr_addr,
    input wire [31:0] csr_wdata,
    output reg [31:0] csr_rdata,
    output reg [31:0] mem_size,
    // state from the sequencer
    input wire busy,
    input wire halted,
    input wire error,
    input wire [3:0] error_code,
    input wire [31:0] error_pc,
    input wire [31:0] iq_free,
    // events of this cycle
    input wire ev_push,          // an instruction entered the queue
    input wire ev_sync,          // a SYNC retired
    input wire ev_mxu_row,       // an activation row entered the array
    input wire ev_stall_hazard,
    input wire ev_stall_unit,
    input wire ev_stall_weight,
    input wire ev_stall_mem,
    input wire ev_stall_issue,
    input wire [15:0] rd_bytes,  // bytes of a read request accepted by the memory
    input wire [15:0] wr_bytes,  // bytes of a write request accepted by the memory
    input wire [2:0] retired     // instructions completed
);
    localparam NPERF = 10;
    localparam [7:0] A_ID = 8'h00, A_VERSION = 8'h04, A_ARRAY_N = 8'h08, A_UB_ROWS = 8'h0C,
                     A_ACC_ROWS = 8'h10, A_WFIFO_TILES = 8'h14, A_IQ_DEPTH = 8'h18,
                     A_BUS_BYTES = 8'h1C, A_CTRL = 8'h20, A_STATUS = 8'h24,
                     A_ERROR_CODE = 8'h28, A_ERROR_PC = 8'h2C, A_SYNC_COUNT = 8'h30,
                     A_MEM_SIZE = 8'h34, A_IQ_FREE = 8'h38, A_INSN_COUNT = 8'h3C,
                     A_PERF = 8'h40, A_PERF_END = 8'h40 + 8 * NPERF;
    localparam [31:0] P_N = N, P_UB_ROWS = UB_ROWS, P_ACC_ROWS = ACC_ROWS,
                      P_WFIFO_TILES = WFIFO_TILES, P_IQ_DEPTH = IQ_DEPTH, P_BUS_BYTES = 4 * N;

    reg [31:0] sync_count;
    reg [31:0] insn_count;
    reg [64*NPERF-1:0] perf;  // counter i at bits 64*i

    // Increment of each counter this cycle, in docs/isa.md order (PERF_ACTIVE first).
    wire [16*NPERF-1:0] inc = {
        {13'd0, retired}, wr_bytes, rd_bytes, {15'd0, ev_stall_issue}, {15'd0, ev_stall_mem},
        {15'd0, ev_stall_weight}, {15'd0, ev_stall_unit}, {15'd0, ev_stall_hazard},
        {15'd0, ev_mxu_row}, {15'd0, busy}
    };
    wire clear = csr_we && csr_addr == A_CTRL && csr_wdata[1];
    // Counter index within A_PERF..A_PERF_END: (csr_addr - 0x40) / 8, modulo 16.
    wire [3:0] perf_idx = csr_addr[6:3] - 4'd8;
    integer i;

    always @(posedge clk) begin
        if (rst) begin
            mem_size <= 32'd0;
            sync_count <= 32'd0;
            insn_count <= 32'd0;
        end else begin
            if (csr_we && csr_addr == A_MEM_SIZE) mem_size <= csr_wdata;
            if (ev_sync) sync_count <= sync_count + 32'd1;
            if (ev_push) insn_count <= insn_count + 32'd1;
        end
    end

    always @(posedge clk) begin
        for (i = 0; i < NPERF; i = i + 1)
            perf[64*i +: 64] <= (rst || clear) ? 64'd0 : perf[64*i +: 64] + {48'd0, inc[16*i +: 16]};
    end

    always @* begin
        csr_rdata = 32'd0;
        case (csr_addr)
            A_ID: csr_rdata = 32'h54505531;
            A_VERSION: csr_rdata = 32'h00010000;
            A_ARRAY_N: csr_rdata = P_N;
            A_UB_ROWS: csr_rdata = P_UB_ROWS;
            A_ACC_ROWS: csr_rdata = P_ACC_ROWS;
            A_WFIFO_TILES: csr_rdata = P_WFIFO_TILES;
            A_IQ_DEPTH: csr_rdata = P_IQ_DEPTH;
            A_BUS_BYTES: csr_rdata = P_BUS_BYTES;
            A_STATUS: csr_rdata = {29'd0, error, halted, busy};
            A_ERROR_CODE: csr_rdata = {28'd0, error_code};
            A_ERROR_PC: csr_rdata = error_pc;
            A_SYNC_COUNT: csr_rdata = sync_count;
            A_MEM_SIZE: csr_rdata = mem_size;
            A_IQ_FREE: csr_rdata = iq_free;
            A_INSN_COUNT: csr_rdata = insn_count;
            default: ;
        endcase
        if (csr_addr >= A_PERF && csr_addr < A_PERF_END && csr_addr[1:0] == 2'd0)
            csr_rdata = perf[64*perf_idx + 32*csr_addr[2] +: 32];
    end
endmodule
