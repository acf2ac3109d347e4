`default_nettype none
// Puts the memory ports of C cores (each exactly tpu_core's port, docs/isa.md "Ports of
// tpu_core") onto the chip's one memory port of the same protocol (docs/isa.md "Chip").
//
// Requests: the chip's request id is {core index, the core's id}: CORE_ID_W + ceil(log2 C) bits
// (the port widths below spell ceil(log2 C) for C = 1..8 out, as CW does).
// Arbitration is combinational (no added latency) and round-robin: the grant goes to the first
// requesting core after the one granted most recently (`last`, which only moves when the memory
// accepts a request), in the order 0, 1, .., C-1, 0, ..; core 0 goes first after reset. A request
// offered to the memory and not accepted stays granted until it is (the cores hold their requests
// stable), so the memory sees a stable request, and mem_req_valid never depends on mem_req_ready.
// Bound: while a core's request waits, the memory accepts at most C-1 requests of other cores
// before its own (each grant moves `last` towards the waiting core without passing it).
//
// Responses: routed to the core in the id's upper bits, which gets the lower CORE_ID_W bits as
// its id; err and rdata go to every core. The chip port has one response channel, so
// mem_rsp_ready is the addressed core's rsp_ready: a core that stalls its response stalls the
// channel for every core (tpu_core never does: its rsp_ready is always 1). A response with an
// index of no core (C not a power of two) is accepted and dropped.
//
// stall[k]: core k offers a request, the memory is ready, and the port is granted to another core
// (cycles the memory itself refuses are not counted). tpu_chip counts them per core.
//
// With C = 1 every output is a wire from an input: the chip times exactly like tpu_core.
module tpu_chip_arb #(
    parameter N = 16,
    parameter C = 2,  // cores, 1..8
    parameter CORE_ID_W = 4  // tpu_core's ID_W
) (
    input wire clk,
    input wire rst,
    // the cores' ports, core k at bits [k*W +: W] of each vector
    input wire [C-1:0] c_req_valid,
    output wire [C-1:0] c_req_ready,
    input wire [C-1:0] c_req_we,
    input wire [32*C-1:0] c_req_addr,
    input wire [16*C-1:0] c_req_len,
    input wire [CORE_ID_W*C-1:0] c_req_id,
    input wire [32*N*C-1:0] c_req_wdata,
    output wire [C-1:0] c_rsp_valid,
    input wire [C-1:0] c_rsp_ready,
    output wire [CORE_ID_W*C-1:0] c_rsp_id,
    output wire [C-1:0] c_rsp_err,
    output wire [32*N*C-1:0] c_rsp_rdata,
    // the chip's memory port
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
    input wire [32*N-1:0] mem_rsp_rdata,
    output wire [C-1:0] stall
);
    localparam CW = C > 4 ? 3 : C > 2 ? 2 : C > 1 ? 1 : 0;  // core index bits: ceil(log2 C)

    genvar k;
    generate
        for (k = 0; k < C; k = k + 1) begin : g_rsp
            assign c_rsp_id[CORE_ID_W*k+:CORE_ID_W] = mem_rsp_id[CORE_ID_W-1:0];
            assign c_rsp_err[k] = mem_rsp_err;
            assign c_rsp_rdata[32*N*k+:32*N] = mem_rsp_rdata;
        end

        if (C == 1) begin : g_one
            assign mem_req_valid = c_req_valid;
            assign c_req_ready = mem_req_ready;
            assign mem_req_we = c_req_we;
            assign mem_req_addr = c_req_addr;
            assign mem_req_len = c_req_len;
            assign mem_req_id = c_req_id;
            assign mem_req_wdata = c_req_wdata;
            assign c_rsp_valid = mem_rsp_valid;
            assign mem_rsp_ready = c_rsp_ready;
            assign stall = 1'b0;
            // One core needs no arbitration state.
            /* verilator lint_off UNUSEDSIGNAL */
            wire unused_clk_rst = clk | rst;
            /* verilator lint_on UNUSEDSIGNAL */
        end else begin : g_arb
            localparam integer LAST_CORE = C - 1;
            reg [CW-1:0] last;  // core granted most recently
            reg held;  // a request was offered and not accepted last cycle
            reg [CW-1:0] held_c;  // ... by this core
            reg [CW-1:0] rr;  // round-robin choice among this cycle's requests
            reg found;
            integer i, j;

            always @* begin
                rr = last;
                found = 1'b0;
                for (i = 1; i <= C; i = i + 1) begin
                    j = {{(32 - CW) {1'b0}}, last} + i;
                    if (j >= C) j = j - C;
                    if (!found && c_req_valid[j]) begin
                        rr = j[CW-1:0];
                        found = 1'b1;
                    end
                end
            end

            wire [CW-1:0] sel = held ? held_c : rr;
            wire [CW-1:0] rsp_c = mem_rsp_id[CORE_ID_W+:CW];

            assign mem_req_valid = c_req_valid[sel];
            assign mem_req_we = c_req_we[sel];
            assign mem_req_addr = c_req_addr[32*sel+:32];
            assign mem_req_len = c_req_len[16*sel+:16];
            assign mem_req_id = {sel, c_req_id[CORE_ID_W*sel+:CORE_ID_W]};
            assign mem_req_wdata = c_req_wdata[32*N*sel+:32*N];
            // Cores beyond C-1 (C not a power of two) have no ready: their responses drop.
            assign mem_rsp_ready = ({{(32 - CW) {1'b0}}, rsp_c} < C) ? c_rsp_ready[rsp_c] : 1'b1;

            for (k = 0; k < C; k = k + 1) begin : g_core
                wire granted = sel == k;
                assign c_req_ready[k] = mem_req_ready && granted;
                assign c_rsp_valid[k] = mem_rsp_valid && rsp_c == k;
                assign stall[k] = c_req_valid[k] && mem_req_ready && !granted;
            end

            always @(posedge clk) begin
                if (rst) begin
                    last   <= LAST_CORE[CW-1:0];  // core 0 goes first
                    held   <= 1'b0;
                    held_c <= {CW{1'b0}};
                end else begin
                    held   <= mem_req_valid && !mem_req_ready;
                    held_c <= sel;
                    if (mem_req_valid && mem_req_ready) last <= sel;
                end
            end
        end
    endgenerate
endmodule
