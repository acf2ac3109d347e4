`default_nettype none
// Behavioural memory behind a memory port (docs/isa.md, "Ports of tpu_core"), shared by the RTL
// test benches. It lives outside tests/rtl/tb_*.v so that the harness does not run it as a bench.
//
// Semantics, as in sim/memmodel.h: a request is performed when it is accepted (writes update
// `mem`, reads copy their data then); one touching a byte at or beyond `size` (or BYTES), or of
// len 0 or more than BUS, gets err and no access.
// Timing: a request accepted at the edge that ends cycle t is answered from cycle
// t + latency + (0..jitter, drawn per request), no earlier. Outputs are registered. req_ready is
// high with chance ready_pct per cycle while fewer than DEPTH requests have been accepted since
// (and including) the oldest one still pending. Each cycle without a response held for
// rsp_ready, one due response is presented with chance rsp_pct, picked at random among the ids
// whose oldest pending response is due: responses with the same id keep request order, different
// ids interleave in any order. A presented response is held until rsp_ready. Every lane that
// carries no data (read lanes >= len, err, and all of them while rsp_valid is low) is random, so
// the device must not depend on it.
// Checks the requester: a refused request stays offered unchanged; req_valid, rsp_ready and an
// accepted request's fields are never X.
// rst drops the pending responses; `mem` keeps its contents (benches read and write it directly).
module mem_model #(
    parameter BUS    = 32,    // bytes per beat (4N)
    parameter ADDR_W = 32,
    parameter LEN_W  = 16,
    parameter ID_W   = 1,
    parameter BYTES  = 4096,  // bytes the array holds
    parameter DEPTH  = 64,    // pending responses it holds before refusing requests
    parameter SEED   = 1
) (
    input  wire              clk,
    input  wire              rst,
    // Knobs, sampled every cycle so that a bench can change them between (or during) tests.
    input  wire [      31:0] size,       // bytes that exist (at most BYTES count)
    input  wire [      31:0] latency,    // >= 1
    input  wire [      31:0] jitter,
    input  wire [      31:0] ready_pct,
    input  wire [      31:0] rsp_pct,
    input  wire              req_valid,
    output reg               req_ready,
    input  wire              req_we,
    input  wire [ADDR_W-1:0] req_addr,
    input  wire [ LEN_W-1:0] req_len,
    input  wire [  ID_W-1:0] req_id,
    input  wire [ 8*BUS-1:0] req_wdata,
    output reg               rsp_valid,
    input  wire              rsp_ready,
    output reg  [  ID_W-1:0] rsp_id,
    output reg               rsp_err,
    output reg  [ 8*BUS-1:0] rsp_rdata
);
    reg [7:0] mem[0:BYTES-1];

    integer seed = SEED;
    integer now = 0;  // the cycle that the current edge ends

    // Pending responses in acceptance order: entries head..tail-1 of a ring, some already taken.
    integer q_due[0:DEPTH-1];
    reg [ID_W-1:0] q_id[0:DEPTH-1];
    reg q_err[0:DEPTH-1];
    reg [8*BUS-1:0] q_data[0:DEPTH-1];
    reg q_live[0:DEPTH-1];
    integer head = 0;
    integer tail = 0;
    integer cur = 0;  // the entry presented while rsp_valid

    // Random bits for the lanes without data: 32 new ones shift in at the bottom every cycle and
    // the top 32 fall off (cheaper under Icarus than redrawing the whole bus).
    reg [8*BUS-1:0] junk;
    integer k;

    initial begin
        for (k = 0; k < BUS / 4 + 1; k = k + 1) junk = {junk, $random(seed)};
        req_ready = 1'b0;
        rsp_valid = 1'b0;
        rsp_id = {ID_W{1'b0}};
        rsp_err = 1'b0;
        rsp_rdata = junk;
    end

    // The request refused last cycle, which must be offered again unchanged.
    reg held = 1'b0;
    reg h_we;
    reg [ADDR_W-1:0] h_addr;
    reg [LEN_W-1:0] h_len;
    reg [ID_W-1:0] h_id;
    reg [8*BUS-1:0] h_wdata;

    reg [63:0] last;  // one past the request's last byte, without wrapping
    reg err;
    reg [(1<<ID_W)-1:0] seen;  // ids with an older live entry
    integer pick;
    integer cands;
    integer i;
    integer slot;
    integer r;

    always @(posedge clk) begin
        junk = {junk, $random(seed)};
        if (rst) begin
            head = 0;
            tail = 0;
            held = 1'b0;
            req_ready <= 1'b0;
            rsp_valid <= 1'b0;
        end else begin
            if ((req_valid ^ rsp_ready) === 1'bx ||
                (req_valid && req_ready && ^{req_we, req_addr, req_len, req_id} === 1'bx)) begin
                $display(
                    "FAIL: memory port: X on req_valid %b, rsp_ready %b or an accepted request (we %b addr %h len %h id %h)",
                    req_valid, rsp_ready, req_we, req_addr, req_len, req_id);
                $finish;
            end
            if (held && (!req_valid || req_we !== h_we || req_addr !== h_addr || req_len !== h_len ||
                         req_id !== h_id || (h_we && req_wdata !== h_wdata))) begin
                $display(
                    "FAIL: memory port: refused request (we %b addr %h len %0d id %0d) changed to valid %b we %b addr %h len %0d id %0d",
                    h_we, h_addr, h_len, h_id, req_valid, req_we, req_addr, req_len, req_id);
                $finish;
            end
            held = req_valid && !req_ready;
            h_we = req_we;
            h_addr = req_addr;
            h_len = req_len;
            h_id = req_id;
            h_wdata = req_wdata;

            if (rsp_valid && rsp_ready) begin
                q_live[cur%DEPTH] = 1'b0;
                while (head != tail && !q_live[head%DEPTH]) head = head + 1;
            end

            if (req_valid && req_ready) begin
                last = req_addr;
                last = last + req_len;
                err = req_len == 0 || req_len > BUS || last > size || last > BYTES;
                slot = tail % DEPTH;
                q_data[slot] = junk;
                for (i = 0; i < req_len && !err; i = i + 1)
                if (req_we) mem[req_addr+i] = req_wdata[8*i+:8];
                else q_data[slot][8*i+:8] = mem[req_addr+i];
                q_err[slot] = err;
                q_id[slot] = req_id;
                q_due[slot] = now + latency + (jitter == 0 ? 0 : {$random(seed)} % (jitter + 1));
                q_live[slot] = 1'b1;
                tail = tail + 1;
            end

            if (!(rsp_valid && !rsp_ready)) begin
                // Reservoir sampling: each candidate replaces the pick with chance 1/(its number).
                pick  = -1;
                cands = 0;
                seen  = {(1 << ID_W) {1'b0}};
                for (i = head; i < tail; i = i + 1)
                if (q_live[i%DEPTH]) begin
                    if (!seen[q_id[i%DEPTH]] && q_due[i%DEPTH] <= now + 1) begin
                        cands = cands + 1;
                        if ({$random(seed)} % cands == 0) pick = i;
                    end
                    seen[q_id[i%DEPTH]] = 1'b1;
                end
                if (pick >= 0 && {$random(seed)} % 100 < rsp_pct) begin
                    cur = pick;
                    rsp_valid <= 1'b1;
                    rsp_id <= q_id[pick%DEPTH];
                    rsp_err <= q_err[pick%DEPTH];
                    rsp_rdata <= q_data[pick%DEPTH];
                end else begin
                    r = $random(seed);
                    rsp_valid <= 1'b0;
                    rsp_id <= r[ID_W-1:0];
                    rsp_err <= r[31];
                    rsp_rdata <= junk;
                end
            end
            req_ready <= {$random(seed)} % 100 < ready_pct && tail - head < DEPTH;
        end
        now = now + 1;
    end
endmodule
