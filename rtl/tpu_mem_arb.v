`default_nettype none
// Puts the core's two memory masters on its one memory port: master 0 is the load unit (reads),
// master 1 the store unit (writes). The request id is the master number; responses are routed
// back on id[0] (the upper id bits belong to whatever shares the port outside the core).
// Arbitration is combinational (no added latency) and round-robin when both request. A request
// offered to the port and not accepted stays granted until it is, so the port sees a stable
// request, and mem_req_valid never depends on mem_req_ready.
module tpu_mem_arb #(
    parameter N = 16,
    parameter ID_W = 4
) (
    input wire clk,
    input wire rst,
    // master 0: load unit
    input wire m0_req_valid,
    output wire m0_req_ready,
    input wire [31:0] m0_req_addr,
    input wire [15:0] m0_req_len,
    output wire m0_rsp_valid,
    output wire m0_rsp_err,
    output wire [32*N-1:0] m0_rsp_rdata,
    // master 1: store unit
    input wire m1_req_valid,
    output wire m1_req_ready,
    input wire [31:0] m1_req_addr,
    input wire [15:0] m1_req_len,
    input wire [32*N-1:0] m1_req_wdata,
    output wire m1_rsp_valid,
    output wire m1_rsp_err,
    // the core's memory port
    output wire mem_req_valid,
    input wire mem_req_ready,
    output wire mem_req_we,
    output wire [31:0] mem_req_addr,
    output wire [15:0] mem_req_len,
    output wire [ID_W-1:0] mem_req_id,
    output wire [32*N-1:0] mem_req_wdata,
    input wire mem_rsp_valid,
    output wire mem_rsp_ready,
    // Only id[0] is the core's: the upper bits are unused here.
    /* verilator lint_off UNUSEDSIGNAL */
    input wire [ID_W-1:0] mem_rsp_id,
    /* verilator lint_on UNUSEDSIGNAL */
    input wire mem_rsp_err,
    input wire [32*N-1:0] mem_rsp_rdata
);
    localparam [ID_W-1:0] ID_M1 = 1;

    reg  last;  // master granted most recently
    reg  held;  // a request was offered and not accepted last cycle
    reg  held_m;  // ... by this master

    wire sel = held ? held_m : ((m0_req_valid && m1_req_valid) ? !last : m1_req_valid);

    assign mem_req_valid = sel ? m1_req_valid : m0_req_valid;
    assign mem_req_we = sel;
    assign mem_req_addr = sel ? m1_req_addr : m0_req_addr;
    assign mem_req_len = sel ? m1_req_len : m0_req_len;
    assign mem_req_id = sel ? ID_M1 : {ID_W{1'b0}};
    assign mem_req_wdata = m1_req_wdata;  // ignored by the memory on reads
    assign m0_req_ready = mem_req_ready && !sel;
    assign m1_req_ready = mem_req_ready && sel;

    assign mem_rsp_ready = 1'b1;
    assign m0_rsp_valid = mem_rsp_valid && !mem_rsp_id[0];
    assign m1_rsp_valid = mem_rsp_valid && mem_rsp_id[0];
    assign m0_rsp_err = mem_rsp_err;
    assign m1_rsp_err = mem_rsp_err;
    assign m0_rsp_rdata = mem_rsp_rdata;

    always @(posedge clk) begin
        if (rst) begin
            last   <= 1'b1;  // master 0 goes first
            held   <= 1'b0;
            held_m <= 1'b0;
        end else begin
            held   <= mem_req_valid && !mem_req_ready;
            held_m <= sel;
            if (mem_req_valid && mem_req_ready) last <= sel;
        end
    end
endmodule
