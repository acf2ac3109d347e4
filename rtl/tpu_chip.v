`default_nettype none
`include "tpu_isa.vh"
// tpu_chip: C full tpu_core instances (each with its own instruction queue, CSR port and irq),
// their memory ports arbitrated onto one (tpu_chip_arb) and the chip CSRs (tpu_chip_csr:
// identity, core count, per-core memory-stall counters, barrier); docs/isa.md "Chip".
// Per-core ports are vectors with core k at bits [k*W +: W]. The memory port is tpu_core's with
// CORE_ID_W + ceil(log2 C) id bits, the upper ones the core index. With C = 1 the chip's memory
// port is the core's (the arbiter is wires), so it times exactly like tpu_core.
module tpu_chip #(
    parameter N = 16,
    parameter UB_ROWS = 16384,
    parameter ACC_ROWS = 4096,
    parameter WFIFO_TILES = 4,
    parameter IQ_DEPTH = 32,
    parameter LD_SLOTS = 4,
    parameter C = 2,  // cores, 1..8
    parameter CORE_ID_W = 4  // each core's ID_W
) (
    input wire clk,
    input wire rst,
    // the cores
    input wire [C-1:0] iq_valid,
    output wire [C-1:0] iq_ready,
    input wire [`TPU_INSN_W*C-1:0] iq_data,
    input wire [C-1:0] csr_we,
    input wire [`TPU_CSR_ADDR_W*C-1:0] csr_addr,
    input wire [32*C-1:0] csr_wdata,
    output wire [32*C-1:0] csr_rdata,
    output wire [C-1:0] irq,
    // the chip CSRs
    input wire chip_csr_we,
    input wire [`TPU_CHIP_CSR_ADDR_W-1:0] chip_csr_addr,
    input wire [31:0] chip_csr_wdata,
    output wire [31:0] chip_csr_rdata,
    // the memory port
    output wire mem_req_valid,
    input wire mem_req_ready,
    output wire mem_req_we,
    output wire [31:0] mem_req_addr,
    output wire [15:0] mem_req_len,
    output wire [CORE_ID_W+(C>4 ? 3 : C>2 ? 2 : C>1 ? 1 : 0)-1:0] mem_req_id,
    output wire [32*N-1:0] mem_req_wdata,
    input wire mem_rsp_valid,
    output wire mem_rsp_ready,
    input wire [CORE_ID_W+(C>4 ? 3 : C>2 ? 2 : C>1 ? 1 : 0)-1:0] mem_rsp_id,
    input wire mem_rsp_err,
    input wire [32*N-1:0] mem_rsp_rdata
);
    wire [C-1:0] c_req_valid, c_req_ready, c_req_we;
    wire [32*C-1:0] c_req_addr;
    wire [16*C-1:0] c_req_len;
    wire [CORE_ID_W*C-1:0] c_req_id, c_rsp_id;
    wire [32*N*C-1:0] c_req_wdata, c_rsp_rdata;
    wire [C-1:0] c_rsp_valid, c_rsp_ready, c_rsp_err;
    wire [C-1:0] stall;

    genvar k;
    generate
        for (k = 0; k < C; k = k + 1) begin : g_core
            tpu_core #(
                .N(N),
                .UB_ROWS(UB_ROWS),
                .ACC_ROWS(ACC_ROWS),
                .WFIFO_TILES(WFIFO_TILES),
                .IQ_DEPTH(IQ_DEPTH),
                .LD_SLOTS(LD_SLOTS),
                .ID_W(CORE_ID_W)
            ) u_core (
                .clk(clk),
                .rst(rst),
                .iq_valid(iq_valid[k]),
                .iq_ready(iq_ready[k]),
                .iq_data(iq_data[`TPU_INSN_W*k+:`TPU_INSN_W]),
                .csr_we(csr_we[k]),
                .csr_addr(csr_addr[`TPU_CSR_ADDR_W*k+:`TPU_CSR_ADDR_W]),
                .csr_wdata(csr_wdata[32*k+:32]),
                .csr_rdata(csr_rdata[32*k+:32]),
                .mem_req_valid(c_req_valid[k]),
                .mem_req_ready(c_req_ready[k]),
                .mem_req_we(c_req_we[k]),
                .mem_req_addr(c_req_addr[32*k+:32]),
                .mem_req_len(c_req_len[16*k+:16]),
                .mem_req_id(c_req_id[CORE_ID_W*k+:CORE_ID_W]),
                .mem_req_wdata(c_req_wdata[32*N*k+:32*N]),
                .mem_rsp_valid(c_rsp_valid[k]),
                .mem_rsp_ready(c_rsp_ready[k]),
                .mem_rsp_id(c_rsp_id[CORE_ID_W*k+:CORE_ID_W]),
                .mem_rsp_err(c_rsp_err[k]),
                .mem_rsp_rdata(c_rsp_rdata[32*N*k+:32*N]),
                .irq(irq[k])
            );
        end
    endgenerate

    tpu_chip_arb #(
        .N(N),
        .C(C),
        .CORE_ID_W(CORE_ID_W)
    ) u_arb (
        .clk(clk),
        .rst(rst),
        .c_req_valid(c_req_valid),
        .c_req_ready(c_req_ready),
        .c_req_we(c_req_we),
        .c_req_addr(c_req_addr),
        .c_req_len(c_req_len),
        .c_req_id(c_req_id),
        .c_req_wdata(c_req_wdata),
        .c_rsp_valid(c_rsp_valid),
        .c_rsp_ready(c_rsp_ready),
        .c_rsp_id(c_rsp_id),
        .c_rsp_err(c_rsp_err),
        .c_rsp_rdata(c_rsp_rdata),
        .mem_req_valid(mem_req_valid),
        .mem_req_ready(mem_req_ready),
        .mem_req_we(mem_req_we),
        .mem_req_addr(mem_req_addr),
        .mem_req_len(mem_req_len),
        .mem_req_id(mem_req_id),
        .mem_req_wdata(mem_req_wdata),
        .mem_rsp_valid(mem_rsp_valid),
        .mem_rsp_ready(mem_rsp_ready),
        .mem_rsp_id(mem_rsp_id),
        .mem_rsp_err(mem_rsp_err),
        .mem_rsp_rdata(mem_rsp_rdata),
        .stall(stall)
    );

    tpu_chip_csr #(
        .C(C)
    ) u_csr (
        .clk(clk),
        .rst(rst),
        .csr_we(chip_csr_we),
        .csr_addr(chip_csr_addr),
        .csr_wdata(chip_csr_wdata),
        .csr_rdata(chip_csr_rdata),
        .stall(stall)
    );
endmodule
