`default_nettype none
// tpu_dma_rd against the shared memory model (model/mem_model.v: latency, random req_ready,
// random gaps between responses, err beyond MEM_SIZE, junk on every lane that carries no data,
// refused requests held stable), a model of the weight FIFO's count (tiles popped at random) and
// models of the UB, the tail tile being written and the parameter rows.
// Instructions are offered in batches, back to back or with random gaps, so several are in
// flight. Checked for every batch and instruction: the request stream (in program order across
// instructions, none for the zero rows of a tile: rows i .. i+k-1 as one request of
// (k-1)*stride + len bytes at a + i*stride, k = min(R, rows left) with R the largest count whose
// rows fit one write (k*S <= 4 UB rows for an RD_HOST of S = ceil(len / N), k <= WF_ROWS for an
// RD_WEIGHT, WF_ROWS/2 for an RD_WEIGHT.BF16 of 2N-byte rows, 1 for RD_PARAMS and RD_ACC) and whose bytes
// fit the 4N-byte bus), no
// RD_WEIGHT request unless a tile is free counting the tiles of RD_WEIGHTs already started and
// not pushed, at most LD_SLOTS instructions accepted and not done, writes only for the oldest
// instruction not done (so write-back is in order), the k*S UB rows b + i*S .. of an RD_HOST
// response in one write (memory row l's lane s bytes l*stride + s*N.., in row order, the cycle
// after its response arrives), every destination row (bytes >= len zero,
// err rows zero, all rows of a multi-row request with err zero, untouched rows unchanged, tiles
// row by row at their push), one UB write per response, tile writes of 1..WF_ROWS rows inside
// the tile (BF16: 1..WF_ROWS/2 rows of 2N bytes, wf_bf16 set), one per response and one per
// zero row, an RD_ACC's ACC rows b + i one per response (one memory row per request) the cycle
// after it arrives, with its ACC and BF16 flags, not accumulating a row whose response has err,
// exactly one done per
// instruction in order, with its last write or its tile push, and its fault; no activity
// outside instructions; one request per cycle when the memory always accepts, and, for chains of
// full-size instructions, no cycle lost between instructions (so they overlap).
// ZEROs are offered in between (in cycles where no load is, as the sequencer issues one
// instruction per cycle), on UB rows of their own (the sequencer keeps a ZERO and a load apart):
// each sets rows b.. one per cycle from the cycle after it is taken, zero_done with the last,
// zero_ready low exactly while one runs except in its done cycle (chains of ZEROs leave no
// cycle between them), no zero-port write outside a ZERO.
module tb_dma_rd;
    parameter N = 8;
    localparam MEM_SIZE = 4096;
    localparam UB_ROWS = 64;  // rows the loads write
    localparam Z_ROWS = 32;  // rows after them, for the ZEROs
    localparam TILES = 4;
    localparam WF_ROWS = 4;  // the weight FIFO's write port, rows per cycle
    localparam CW = $clog2(WF_ROWS + 1);
    localparam LD_SLOTS = 4;
    localparam MAXI = 4096;  // instructions in the whole run
    localparam [7:0] OP_HOST = 8'h01;
    localparam [7:0] OP_WEIGHT = 8'h02;
    localparam [7:0] OP_PARAMS = 8'h03;
    localparam [7:0] OP_ACC = 8'h0a;

    reg clk = 1'b0;
    always #5 clk = !clk;
    reg rst = 1'b1;

    reg cmd_valid = 1'b0;
    wire cmd_ready;
    reg [7:0] cmd_op = 8'd0;
    reg [15:0] cmd_rows = 16'd0;
    reg [31:0] cmd_a = 32'd0;
    reg [19:0] cmd_b = 20'd0;
    reg [11:0] cmd_len = 12'd0;
    reg [31:0] cmd_stride = 32'd0;
    reg cmd_bf16 = 1'b0;
    reg cmd_acc = 1'b0;
    wire done;
    wire fault;
    reg zero_valid = 1'b0;
    wire zero_ready;
    wire zero_done;
    wire ub_z_en;
    wire [19:0] ub_z_addr;
    wire req_valid;
    wire req_ready;
    wire [31:0] req_addr;
    wire [15:0] req_len;
    wire rsp_valid;
    wire rsp_err;
    wire [32*N-1:0] rsp_rdata;
    wire ub_en;
    wire [19:0] ub_addr;
    wire [2:0] ub_rows;
    wire [32*N-1:0] ub_data;
    reg [8:0] wf_count = 9'd0;
    wire wf_en;
    wire [8:0] wf_row;
    wire [CW-1:0] wf_rows;
    wire wf_bf16;
    wire [8*N*WF_ROWS-1:0] wf_data;
    wire wf_push;
    wire prm_en;
    wire [1:0] prm_sel;
    wire [32*N-1:0] prm_data;
    wire acc_en;
    wire [19:0] acc_addr;
    wire acc_accumulate;
    wire acc_bf16;
    wire [32*N-1:0] acc_data;

    tpu_dma_rd #(
        .N(N),
        .WFIFO_TILES(TILES),
        .LD_SLOTS(LD_SLOTS),
        .WF_ROWS(WF_ROWS)
    ) dut (
        .clk(clk),
        .rst(rst),
        .cmd_valid(cmd_valid),
        .cmd_ready(cmd_ready),
        .cmd_op(cmd_op),
        .cmd_rows(cmd_rows),
        .cmd_a(cmd_a),
        .cmd_b(cmd_b),
        .cmd_len(cmd_len),
        .cmd_stride(cmd_stride),
        .cmd_bf16(cmd_bf16),
        .cmd_acc(cmd_acc),
        .done(done),
        .fault(fault),
        .zero_valid(zero_valid),
        .zero_ready(zero_ready),
        .zero_done(zero_done),
        .ub_z_en(ub_z_en),
        .ub_z_addr(ub_z_addr),
        .req_valid(req_valid),
        .req_ready(req_ready),
        .req_addr(req_addr),
        .req_len(req_len),
        .rsp_valid(rsp_valid),
        .rsp_err(rsp_err),
        .rsp_rdata(rsp_rdata),
        .ub_en(ub_en),
        .ub_addr(ub_addr),
        .ub_rows(ub_rows),
        .ub_data(ub_data),
        .wf_count(wf_count),
        .wf_en(wf_en),
        .wf_row(wf_row),
        .wf_rows(wf_rows),
        .wf_bf16(wf_bf16),
        .wf_data(wf_data),
        .wf_push(wf_push),
        .prm_en(prm_en),
        .prm_sel(prm_sel),
        .prm_data(prm_data),
        .acc_en(acc_en),
        .acc_addr(acc_addr),
        .acc_accumulate(acc_accumulate),
        .acc_bf16(acc_bf16),
        .acc_data(acc_data)
    );

    integer seed = 1;
    integer cycle = 0;

    always @(posedge clk) cycle <= cycle + 1;

    // ---------------------------------------------------------------- memory --
    integer latency = 1;  // cycles from acceptance to the earliest response, >= 1
    integer ready_pct = 100;  // chance per cycle that req_ready is high
    integer rsp_pct = 100;  // chance per cycle that a due response is given
    integer pop_pct = 100;  // chance per cycle that the FIFO's head tile is popped
    integer gap_pct = 0;  // chance per cycle that the driver offers nothing

    mem_model #(
        .BUS  (4 * N),
        .BYTES(MEM_SIZE),
        .SEED (11)
    ) u_mem (
        .clk(clk),
        .rst(rst),
        .size(MEM_SIZE),
        .latency(latency),
        .jitter(32'd0),
        .ready_pct(ready_pct),
        .rsp_pct(rsp_pct),
        .req_valid(req_valid),
        .req_ready(req_ready),
        .req_we(1'b0),
        .req_addr(req_addr),
        .req_len(req_len),
        .req_id(1'b0),
        .req_wdata({32 * N{1'b0}}),
        .rsp_valid(rsp_valid),
        .rsp_ready(1'b1),
        .rsp_id(),
        .rsp_err(rsp_err),
        .rsp_rdata(rsp_rdata)
    );

    // A request is answered with err unless all its bytes are below MEM_SIZE (no wrap at 2^32).
    function in_range(input [31:0] addr, input [15:0] len);
        in_range = {32'd0, addr} + len <= MEM_SIZE;
    endfunction

    // What an instruction should write for a memory row: bytes < len, zero elsewhere and on err.
    function [32*N-1:0] exp_row(input [31:0] addr, input [11:0] len);
        integer k;
        begin
            exp_row = {32 * N{1'b0}};
            if (in_range(addr, {4'd0, len}))
                for (k = 0; k < len; k = k + 1) exp_row[8*k+:8] = u_mem.mem[addr+k];
        end
    endfunction

    // ------------------------------------------------------------ the program --
    // UB rows per memory row of an RD_HOST of len bytes: S = ceil(len / N).
    function integer span(input integer len);
        span = (len + N - 1) / N;
    endfunction

    // Memory rows per request of instruction j: R, the most that one write takes and the bus holds.
    function integer per_of(input integer j);
        integer cap;
        integer k;
        begin
            cap = p_op[j] == OP_HOST ? 4 / span(p_len[j]) :
                p_op[j] == OP_WEIGHT ? (p_bf[j] ? WF_ROWS / 2 : WF_ROWS) : 1;
            per_of = 1;
            if (p_stride[j] < 4 * N)
                for (k = 2; k <= cap; k = k + 1)
                if ((k - 1) * p_stride[j] + p_len[j] <= 4 * N) per_of = k;
        end
    endfunction

    // The bytes of the request that carries row w of instruction j.
    function integer req_bytes(input integer j, input integer w);
        req_bytes = (req_rows(j, w) - 1) * p_stride[j] + p_len[j];
    endfunction

    // Rows of the request that carries row w of instruction j, from row req_at(j, w) on.
    function integer req_at(input integer j, input integer w);
        req_at = w / per_of(j) * per_of(j);
    endfunction
    function integer req_rows(input integer j, input integer w);
        begin
            req_rows = per_of(j);
            if (req_at(j, w) + req_rows > p_rows[j]) req_rows = p_rows[j] - req_at(j, w);
        end
    endfunction

    // The request that carries row w gets err.
    function req_err(input integer j, input integer w);
        req_err = !in_range(p_a[j] + req_at(j, w) * p_stride[j], req_bytes(j, w));
    endfunction

    // What row w (< rows) of instruction j should be: zero if its request failed.
    function [32*N-1:0] exp_wrow(input integer j, input integer w);
        exp_wrow = req_err(j, w) ? {32 * N{1'b0}} : exp_row(p_a[j] + w * p_stride[j], p_len[j]);
    endfunction

    reg [7:0] p_op[0:MAXI-1];
    reg [15:0] p_rows[0:MAXI-1];
    reg [31:0] p_a[0:MAXI-1];
    reg [19:0] p_b[0:MAXI-1];
    reg [11:0] p_len[0:MAXI-1];
    reg [31:0] p_stride[0:MAXI-1];
    reg p_bf[0:MAXI-1];  // RD_WEIGHT.BF16, RD_ACC.BF16
    reg p_accf[0:MAXI-1];  // RD_ACC.ACC
    integer p_first[0:MAXI-1];  // cycles of the first and last request
    integer p_last[0:MAXI-1];
    integer p_nreq[0:MAXI-1];  // requests issued
    integer n_prog = 0;  // instructions generated
    integer n_acc = 0;  // accepted
    integer n_done = 0;  // done
    integer rq_j = 0;  // instruction and row of the next expected request
    integer rq_i = 0;
    integer started = 0;  // RD_WEIGHTs with a request out and no push yet

    task fail;
        begin
            $display(
                "      at cycle %0d: instruction %0d (op %0d rows %0d a %h b %0d len %0d stride %0d bf16 %0d)",
                cycle, n_done, p_op[n_done], p_rows[n_done], p_a[n_done], p_b[n_done],
                p_len[n_done], p_stride[n_done], p_bf[n_done]);
            $finish;
        end
    endtask

    // -------------------------------------------------- destination models --
    reg [8*N-1:0] ub_img[0:UB_ROWS+Z_ROWS-1];
    reg [8*N-1:0] exp_ub[0:UB_ROWS+Z_ROWS-1];
    reg [16*N-1:0] tile_img[0:N-1];  // int8 rows in the low half, the high half zero
    reg tile_written[0:N-1];
    reg [32*N-1:0] prm_img[0:2];
    integer n_ub = 0;  // writes for the oldest instruction not done (RD_HOST: rows of memory)
    integer n_wf = 0;
    integer n_prm = 0;
    integer n_accw = 0;  // ACC rows written for the oldest instruction not done
    integer n_accw_all = 0;  // ... in the whole run
    integer n_push = 0;
    integer n_wfw = 0;  // tile writes (each of 1..WF_ROWS rows)
    integer n_req = 0;  // requests of the whole run, and of contiguous RD_WEIGHTs
    integer n_req_co = 0;
    integer n_req_hm = 0;  // RD_HOST requests of more than one memory row
    integer n_ubw = 0;  // UB writes for the oldest instruction not done
    integer exp_wfw;
    integer exp_req;
    integer exp_len;
    reg exp_fault;
    reg [32*N-1:0] row;
    integer w_j;
    integer pops;
    integer ik_s;
    integer w_u;
    integer w_s;  // UB rows per memory row and memory rows of the response being written
    integer w_k;
    reg rsp_host = 1'b0;  // the previous cycle's response was for an RD_HOST
    reg rsp_acc = 1'b0;  // ... for an RD_ACC
    integer n_wide = 0;  // RD_HOST writes of more than one UB row

    // ZEROs: their own program, rows b >= UB_ROWS.
    reg [15:0] z_rows[0:MAXI-1];
    reg [19:0] z_b[0:MAXI-1];
    integer nz_prog = 0;  // generated
    integer nz_acc = 0;  // accepted
    integer nz_done = 0;  // done
    integer z_at = 0;  // cycle the running one was accepted
    integer z_written = 0;  // its rows written
    integer z_b2b = 0;  // ZEROs taken in the previous one's done cycle
    integer zpct = 0;  // chance per cycle that a pending ZERO is offered instead of a load
    reg z_offer;

    always @(posedge clk) begin
        if (!rst) begin
            if (ub_z_en) begin
                if (nz_acc == nz_done || ub_z_addr !== z_b[nz_done] + z_written ||
                    cycle != z_at + 1 + z_written) begin
                    $display(
                        "FAIL: zero-port write to row %0d at cycle %0d outside ZERO %0d's rows %0d.. (cycle %0d on)",
                        ub_z_addr, cycle, nz_done, z_b[nz_done], z_at + 1);
                    fail;
                end
                ub_img[ub_z_addr] = {8 * N{1'b0}};
                z_written = z_written + 1;
            end
            if (zero_done !== (ub_z_en && z_written == z_rows[nz_done])) begin
                $display("FAIL: zero_done %b with %0d of %0d rows of ZERO %0d written", zero_done,
                         z_written, z_rows[nz_done], nz_done);
                fail;
            end
            if (zero_ready !== (nz_acc == nz_done || zero_done)) begin
                $display("FAIL: zero_ready %b with %0d ZEROs taken, %0d done", zero_ready, nz_acc,
                         nz_done);
                fail;
            end
            if (zero_done) begin
                for (w_j = 0; w_j < z_rows[nz_done]; w_j = w_j + 1)
                exp_ub[z_b[nz_done]+w_j] = {8 * N{1'b0}};
                nz_done   = nz_done + 1;
                z_written = 0;
            end
            if (zero_valid && zero_ready) begin
                if (zero_done) z_b2b = z_b2b + 1;
                nz_acc = nz_acc + 1;
                z_at   = cycle;
            end
            if (n_done == n_acc && (ub_en || wf_en || wf_push || prm_en || acc_en || done)) begin
                $display(
                    "FAIL: activity with no instruction in flight (ub %b wf %b push %b prm %b acc %b done %b)",
                    ub_en, wf_en, wf_push, prm_en, acc_en, done);
                fail;
            end
            if (n_acc - n_done > LD_SLOTS) begin
                $display("FAIL: %0d instructions in flight, more than %0d", n_acc - n_done,
                         LD_SLOTS);
                fail;
            end
            if (req_valid && req_ready) begin
                if (rq_j >= n_acc) begin
                    $display("FAIL: request at %h with every accepted row requested", req_addr);
                    fail;
                end
                exp_len = req_bytes(rq_j, rq_i);
                if (req_addr !== p_a[rq_j] + rq_i * p_stride[rq_j] || req_len !== exp_len) begin
                    $display(
                        "FAIL: request for row %0d of instruction %0d: addr %h len %0d, expected addr %h len %0d",
                        rq_i, rq_j, req_addr, req_len, p_a[rq_j] + rq_i * p_stride[rq_j], exp_len);
                    fail;
                end
                if (rq_i == 0) begin
                    p_first[rq_j] = cycle;
                    p_nreq[rq_j]  = 0;
                    if (p_op[rq_j] == OP_WEIGHT) started = started + 1;
                end
                p_last[rq_j] = cycle;
                p_nreq[rq_j] = p_nreq[rq_j] + 1;
                n_req = n_req + 1;
                if (per_of(rq_j) > 1) n_req_co = n_req_co + 1;
                if (p_op[rq_j] == OP_HOST && req_rows(rq_j, rq_i) > 1) n_req_hm = n_req_hm + 1;
                rq_i = rq_i + req_rows(rq_j, rq_i);
                if (rq_i == p_rows[rq_j]) begin
                    rq_i = 0;
                    rq_j = rq_j + 1;
                end
            end
            if (ub_en !== rsp_host) begin
                $display("FAIL: UB write %b, response for an RD_HOST in the cycle before %b",
                         ub_en, rsp_host);
                fail;
            end
            if (ub_en) begin
                // In order: memory rows n_ub .. of the oldest instruction, k of them (its
                // request's), as k*S rows at b + n_ub*S.
                w_s = span(p_len[n_done]);
                w_k = n_ub < p_rows[n_done] ? req_rows(n_done, n_ub) : 0;
                if (p_op[n_done] != OP_HOST || w_k == 0 || ub_addr !== p_b[n_done] + n_ub * w_s ||
                    ub_rows !== w_k * w_s) begin
                    $display(
                        "FAIL: UB write of %0d rows at row %0d, expected memory row %0d of the oldest instruction: %0d rows at %0d",
                        ub_rows, ub_addr, n_ub, w_k * w_s, p_b[n_done] + n_ub * w_s);
                    fail;
                end
                for (w_j = 0; w_j < ub_rows; w_j = w_j + 1)
                ub_img[ub_addr+w_j] = ub_data[8*N*w_j+:8*N];
                if (ub_rows > 1) n_wide = n_wide + 1;
                n_ub  = n_ub + req_rows(n_done, n_ub);
                n_ubw = n_ubw + 1;
            end
            if (wf_en) begin
                if (p_op[n_done] != OP_WEIGHT || wf_rows < 1 ||
                    wf_rows > (p_bf[n_done] ? WF_ROWS / 2 : WF_ROWS) || wf_row + wf_rows > N ||
                    wf_bf16 !== p_bf[n_done]) begin
                    $display(
                        "FAIL: tile rows %0d..+%0d (bf16 %b) written outside an RD_WEIGHT's tile",
                        wf_row, wf_rows, wf_bf16);
                    fail;
                end
                for (w_j = 0; w_j < wf_rows; w_j = w_j + 1) begin
                    tile_img[wf_row+w_j] = wf_bf16 ? wf_data[16*N*w_j+:16*N] :
                        {{8 * N{1'b0}}, wf_data[8*N*w_j+:8*N]};
                    tile_written[wf_row+w_j] = 1'b1;
                end
                n_wf  = n_wf + wf_rows;
                n_wfw = n_wfw + 1;
            end
            // RD_ACC: ACC row b + i the cycle after memory row i's response, its bytes >= len zero
            // (all of it after err, then not added), ACC and BF16 as the instruction says.
            if (acc_en !== rsp_acc) begin
                $display("FAIL: ACC write %b, response for an RD_ACC in the cycle before %b",
                         acc_en, rsp_acc);
                fail;
            end
            if (acc_en) begin
                row = exp_wrow(n_done, n_accw);
                if (p_op[n_done] != OP_ACC || n_accw >= p_rows[n_done] ||
                    acc_addr !== p_b[n_done] + n_accw || acc_data !== row ||
                    acc_bf16 !== p_bf[n_done] ||
                    acc_accumulate !== (p_accf[n_done] && !req_err(
                        n_done, n_accw
                    ))) begin
                    $display(
                        "FAIL: ACC write of row %0d (%h, accumulate %b, bf16 %b), expected memory row %0d of the oldest instruction: row %0d (%h, accumulate %b, bf16 %b)",
                        acc_addr, acc_data, acc_accumulate, acc_bf16, n_accw, p_b[n_done] + n_accw,
                        row, p_accf[n_done] && !req_err(n_done, n_accw), p_bf[n_done]);
                    fail;
                end
                n_accw = n_accw + 1;
                n_accw_all = n_accw_all + 1;
            end
            if (prm_en) begin
                if (p_op[n_done] != OP_PARAMS || prm_sel > 2) begin
                    $display("FAIL: parameter register %0d written outside an RD_PARAMS", prm_sel);
                    fail;
                end
                prm_img[prm_sel] = prm_data;
                n_prm = n_prm + 1;
            end
            if (wf_push) begin
                if (p_op[n_done] != OP_WEIGHT) begin
                    $display("FAIL: tile pushed outside an RD_WEIGHT");
                    fail;
                end
                for (w_j = 0; w_j < N; w_j = w_j + 1) begin
                    row = w_j < p_rows[n_done] ? exp_wrow(n_done, w_j) : {32 * N{1'b0}};
                    // A row's bytes: N of them, or 2N with BF16 (len <= 2N, the rest zero).
                    if (!p_bf[n_done]) row[16*N-1:8*N] = {8 * N{1'b0}};
                    if (!tile_written[w_j] || tile_img[w_j] !== row[16*N-1:0]) begin
                        $display("FAIL: tile row %0d at its push: written %b, %h, expected %h",
                                 w_j, tile_written[w_j], tile_img[w_j], row[16*N-1:0]);
                        fail;
                    end
                    tile_written[w_j] = 1'b0;
                end
                n_push  = n_push + 1;
                started = started - 1;
            end
            if (done) begin
                if (!(p_op[n_done] == OP_HOST ? ub_en : p_op[n_done] == OP_WEIGHT ? wf_push :
                      p_op[n_done] == OP_ACC ? acc_en : prm_en)) begin
                    $display("FAIL: done not with the last write or push");
                    fail;
                end
                exp_fault = 1'b0;
                for (w_j = 0; w_j < p_rows[n_done]; w_j = w_j + 1) begin
                    exp_fault = exp_fault | req_err(n_done, w_j);
                    row = exp_wrow(n_done, w_j);
                    if (p_op[n_done] == OP_HOST)
                        for (ik_s = 0; ik_s < span(p_len[n_done]); ik_s = ik_s + 1) begin
                            w_u = p_b[n_done] + w_j * span(p_len[n_done]) + ik_s;
                            exp_ub[w_u] = row[8*N*ik_s+:8*N];
                            if (ub_img[w_u] !== exp_ub[w_u]) begin
                                $display(
                                    "FAIL: UB[%0d] = %h, expected %h (memory row %0d, lane %0d)",
                                    w_u, ub_img[w_u], exp_ub[w_u], w_j, ik_s);
                                fail;
                            end
                        end
                    if (p_op[n_done] == OP_PARAMS && prm_img[w_j] !== row) begin
                        $display("FAIL: parameter register %0d = %h, expected %h", w_j,
                                 prm_img[w_j], row);
                        fail;
                    end
                end
                if (fault !== exp_fault) begin
                    $display("FAIL: fault %b, expected %b", fault, exp_fault);
                    fail;
                end
                if (n_ub != (p_op[n_done] == OP_HOST ? p_rows[n_done] : 0) ||
                    n_wf != (p_op[n_done] == OP_WEIGHT ? N : 0) ||
                    n_push != (p_op[n_done] == OP_WEIGHT ? 1 : 0) ||
                    n_prm != (p_op[n_done] == OP_PARAMS ? 3 : 0) ||
                    n_accw != (p_op[n_done] == OP_ACC ? p_rows[n_done] : 0)) begin
                    $display(
                        "FAIL: %0d UB writes, %0d tile row writes, %0d pushes, %0d parameter writes, %0d ACC writes",
                        n_ub, n_wf, n_push, n_prm, n_accw);
                    fail;
                end
                // One write per response, one per zero row.
                exp_req = (p_rows[n_done] + per_of(n_done) - 1) / per_of(n_done);
                exp_wfw = p_op[n_done] != OP_WEIGHT ? 0 : N - p_rows[n_done] + exp_req;
                if (n_wfw != exp_wfw || p_nreq[n_done] != exp_req ||
                    n_ubw != (p_op[n_done] == OP_HOST ? exp_req : 0)) begin
                    $display(
                        "FAIL: %0d requests, %0d tile writes and %0d UB writes, expected %0d and %0d",
                        p_nreq[n_done], n_wfw, n_ubw, exp_req, exp_wfw);
                    fail;
                end
                if (ready_pct == 100 && p_last[n_done] - p_first[n_done] != p_nreq[n_done] - 1) begin
                    $display("FAIL: requests took %0d cycles with an always-ready memory",
                             p_last[n_done] - p_first[n_done] + 1);
                    fail;
                end
                n_ub   = 0;
                n_ubw  = 0;
                n_wf   = 0;
                n_prm  = 0;
                n_accw = 0;
                n_push = 0;
                n_wfw  = 0;
                n_done = n_done + 1;
            end
            if (cmd_valid && cmd_ready) n_acc = n_acc + 1;
            // Responses belong to the oldest instruction not done after this cycle's done.
            rsp_host = rsp_valid && n_done < n_acc && p_op[n_done] == OP_HOST;
            rsp_acc  = rsp_valid && n_done < n_acc && p_op[n_done] == OP_ACC;

            // The driver offers the instructions generated so far in order, gaps at random, and
            // in some cycles the next ZERO instead (cmd_rows and cmd_b are then its fields).
            z_offer  = nz_acc < nz_prog && {$random(seed)} % 100 < zpct;
            zero_valid <= z_offer;
            if (z_offer) begin
                cmd_valid <= 1'b0;
                cmd_rows  <= z_rows[nz_acc];
                cmd_b     <= z_b[nz_acc];
            end else if (n_acc < n_prog && {$random(seed)} % 100 >= gap_pct) begin
                cmd_valid <= 1'b1;
                cmd_op <= p_op[n_acc];
                cmd_rows <= p_rows[n_acc];
                cmd_a <= p_a[n_acc];
                cmd_b <= p_b[n_acc];
                cmd_len <= p_len[n_acc];
                cmd_stride <= p_stride[n_acc];
                cmd_bf16 <= p_bf[n_acc];
                cmd_acc <= p_accf[n_acc];
            end else cmd_valid <= 1'b0;

            // The FIFO: pushed tiles count from the next cycle, as do pops of the head tile.
            pops = (wf_count != 0 && {$random(seed)} % 100 < pop_pct) ? 1 : 0;
            wf_count <= wf_count + wf_push - pops;
            if (wf_count + wf_push - pops + started > TILES) begin
                $display("FAIL: %0d tiles in the FIFO and %0d RD_WEIGHTs started: more than %0d",
                         wf_count + wf_push - pops, started, TILES);
                fail;
            end
        end
    end


    // ----------------------------------------------------------------- batches --
    task add(input [7:0] op, input [15:0] rows, input [31:0] a, input [19:0] b, input [11:0] len,
             input [31:0] stride);
        begin
            p_op[n_prog] = op;
            p_rows[n_prog] = rows;
            p_a[n_prog] = a;
            p_b[n_prog] = b;
            p_len[n_prog] = len;
            p_stride[n_prog] = stride;
            p_bf[n_prog] = 1'b0;
            p_accf[n_prog] = 1'b0;
            n_prog = n_prog + 1;
        end
    endtask

    // An RD_WEIGHT.BF16: rows of len 1..2N bytes.
    task add_bf16(input [15:0] rows, input [31:0] a, input [11:0] len, input [31:0] stride);
        begin
            add(OP_WEIGHT, rows, a, 0, len, stride);
            p_bf[n_prog-1] = 1'b1;
        end
    endtask

    // An RD_ACC (ISA 1.4) with its ACC and BF16 flags: rows of len 4..4N bytes, one per request.
    task add_acc(input [15:0] rows, input [31:0] a, input [19:0] b, input [11:0] len,
                 input [31:0] stride, input accf, input bf);
        begin
            add(OP_ACC, rows, a, b, len, stride);
            p_accf[n_prog-1] = accf;
            p_bf[n_prog-1]   = bf;
        end
    endtask

    task add_zero(input [15:0] rows, input [19:0] b);
        begin
            z_rows[nz_prog] = rows;
            z_b[nz_prog] = b;
            nz_prog = nz_prog + 1;
        end
    endtask

    task rand_zero;
        reg [15:0] rr;
        begin
            rr = ({$random(seed)} % 4 == 0) ? Z_ROWS : 1 + {$random(seed)} % 6;
            add_zero(rr, UB_ROWS + {$random(seed)} % (Z_ROWS - rr + 1));
        end
    endtask

    // Runs the instructions added since the last batch and waits until all are done.
    task run_batch;
        integer t;
        integer i;
        begin
            t = 0;
            while (n_done != n_prog || nz_done != nz_prog) begin
                @(posedge clk);
                t = t + 1;
                if (t > 50000) begin
                    $display("FAIL: %0d of %0d instructions done after %0d cycles", n_done, n_prog,
                             t);
                    fail;
                end
            end
            repeat (3) @(posedge clk);
            for (i = 0; i < UB_ROWS + Z_ROWS; i = i + 1)
            if (ub_img[i] !== exp_ub[i]) begin
                $display("FAIL: after the batch UB[%0d] = %h, expected %h", i, ub_img[i],
                         exp_ub[i]);
                fail;
            end
        end
    endtask

    // Instructions [from, n_prog) must have issued their requests with no cycle between them.
    task check_gapless(input integer from);
        integer j;
        begin
            for (j = from + 1; j < n_prog; j = j + 1)
            if (p_first[j] != p_last[j-1] + 1) begin
                $display(
                    "FAIL: chain: instruction %0d's first request %0d cycles after the previous one's last",
                    j, p_first[j] - p_last[j-1]);
                $finish;
            end
        end
    endtask

    task rand_insn;
        integer op_i;
        reg [15:0] rr;
        reg [31:0] ra;
        reg [31:0] rs;
        reg [11:0] rl;
        begin
            op_i = 1 + {$random(seed)} % 4;
            ra   = {$random(seed)} % MEM_SIZE;
            case ({$random(
                seed
            )} % 4)
                0: rs = 0;
                1: rs = 1 + {$random(seed)} % (4 * N);
                2: rs = {$random(seed)} % (MEM_SIZE / 4);
                default: rs = {$random(seed)};
            endcase
            if (op_i == 1) begin
                // Half of them wide, len up to the bus (4N): rows*S UB rows in all.
                rl = ({$random(seed)} % 2) ? 1 + {$random(seed)} % N :
                    1 + {$random(seed)} % (4 * N);
                rr = 1 + {$random(seed)} % (UB_ROWS / span(rl) < 24 ? UB_ROWS / span(rl) : 24);
                add(OP_HOST, rr, ra, {$random(seed)} % (UB_ROWS - rr * span(rl) + 1), rl, rs);
            end else if (op_i == 2) begin
                // Mostly full tiles, which overlap; short ones hold the instructions behind them.
                // Half of them with contiguous rows (stride == len), requested R rows at once.
                // A third BF16, rows of up to 2N bytes.
                rr = ({$random(seed)} % 2) ? N : 1 + {$random(seed)} % N;
                if ({$random(seed)} % 3 == 0) begin
                    rl = ({$random(seed)} % 2) ? 2 * N : 1 + {$random(seed)} % (2 * N);
                    add_bf16(rr, ra, rl, ({$random(seed)} % 2) ? {20'd0, rl} : rs);
                end else begin
                    rl = ({$random(seed)} % 2) ? N : 1 + {$random(seed)} % N;
                    add(OP_WEIGHT, rr, ra, 0, rl, ({$random(seed)} % 2) ? {20'd0, rl} : rs);
                end
            end else if (op_i == 3) add(OP_PARAMS, 3, ra, 0, 4 * (1 + {$random(seed)} % N), rs);
            else begin
                rr = 1 + {$random(seed)} % 24;
                add_acc(rr, ra, {$random(seed)} % 40, 4 * (1 + {$random(seed)} % N), rs, $random(
                        seed), $random(seed));
            end
        end
    endtask

    integer it;
    integer ik;
    integer from;
    integer from_req;

    initial begin
        for (it = 0; it < MEM_SIZE; it = it + 1) u_mem.mem[it] = $random(seed);
        for (it = 0; it < UB_ROWS + Z_ROWS; it = it + 1) begin
            for (ik = 0; ik < N; ik = ik + 1) ub_img[it][8*ik+:8] = $random(seed);
            exp_ub[it] = ub_img[it];
        end
        for (it = 0; it < N; it = it + 1) tile_written[it] = 1'b0;
        repeat (3) @(posedge clk);
        rst <= 1'b0;

        // Edges, one at a time: one row of one byte, the last byte of memory, stride 0, a large
        // stride, every opcode.
        add(OP_HOST, 1, 0, 0, 1, 0);
        run_batch;
        add(OP_HOST, 1, MEM_SIZE - 1, 63, 1, 0);
        run_batch;
        add(OP_HOST, 5, 13, 7, N - 1, 0);
        run_batch;
        add(OP_HOST, 4, 3, 20, N, 997);
        run_batch;
        add(OP_WEIGHT, N, 64, 0, N, N);
        run_batch;
        add(OP_WEIGHT, 1, 7, 0, 1, 0);
        run_batch;
        add(OP_PARAMS, 3, 32, 0, 4 * N, 4 * N);
        run_batch;
        add(OP_PARAMS, 3, 9, 0, 4, 0);
        run_batch;
        add_acc(1, 0, 0, 4, 0, 1'b0, 1'b0);
        run_batch;
        add_acc(5, MEM_SIZE - 4 * N * 5, 9, 4 * N, 4 * N, 1'b1, 1'b1);
        run_batch;
        add_acc(3, 64, 60, 8, 0, 1'b1, 1'b0);
        run_batch;
        add_acc(3, MEM_SIZE - 4 * N, 30, 4 * N, 2 * N, 1'b1, 1'b1);  // rows 1, 2 past memory
        run_batch;

        // Wide RD_HOST rows (ISA 1.2: len up to the bus's 4N bytes), each written as its S =
        // ceil(len / N) UB rows in one cycle: len N+1, 2N, 3N-1, 3N+1, 4N, rows 7, 5, 3, 1, 6,
        // strides 4N+5, len, 3, 0, 1 (rows overlapping in memory); the last UB rows with memory's
        // last bytes; a row past memory (err: all S of its rows zero, the others written); two
        // on overlapping UB rows (the younger's data wins); then a chain with an always-ready
        // memory, its responses and writes in consecutive cycles.
        latency = 1;
        add(OP_HOST, 7, 5, 0, N + 1, 4 * N + 5);
        run_batch;
        add(OP_HOST, 5, 100, 1, 2 * N, 2 * N);
        run_batch;
        add(OP_HOST, 3, 200, 40, 3 * N - 1, 3);
        run_batch;
        add(OP_HOST, 6, 250, 13, 3 * N + 1, 1);
        run_batch;
        add(OP_HOST, 1, MEM_SIZE - 4 * N, UB_ROWS - 4, 4 * N, 0);
        run_batch;
        add(OP_HOST, 3, MEM_SIZE - 3 * 4 * N + 1, 20, 4 * N, 4 * N);  // the last row fails
        run_batch;
        add(OP_HOST, 2, MEM_SIZE - 2 * N, 44, 2 * N, 3 * N);  // the second row fails
        run_batch;
        latency = 3;
        add(OP_HOST, 4, 300, 2, 4 * N, 4 * N);
        add(OP_HOST, 3, 500, 9, 2 * N - 1, 2 * N);  // UB rows 9..14 meet the first's 2..17
        run_batch;
        from = n_prog;
        from_req = n_wide;
        for (it = 0; it < 8; it = it + 1)
        add(OP_HOST, 1 + it % 3, 37 * it, 8 * it, 1 + (5 * N * it / 8) % (4 * N), 4 * N - it);
        run_batch;
        check_gapless(from);
        if (n_wide == from_req) begin
            $display("FAIL: no RD_HOST wrote more than one UB row at once");
            $finish;
        end

        // Rows close together, k per request (any stride), each request and written row checked:
        // stride 0 (one row, k copies), stride 1 with len 3 (sliding windows: 4 rows from 6
        // bytes), stride < len, stride == len, stride > len with (k-1)*stride + len within the
        // bus, wide rows (S = 2) two per request, overlapping or not, rows not a multiple of k;
        // a request past memory (all its rows zero, also the one that ends below memory's end);
        // RD_WEIGHTs with stride 1, 0 and N; then a chain of them back to back.
        latency = 2;
        from = n_prog;
        from_req = n_req_hm;
        add(OP_HOST, 6, 33, 0, N - 1, 0);
        add(OP_HOST, 7, 40, 8, 3, 1);
        add(OP_HOST, 5, 60, 16, N, N / 2);
        add(OP_HOST, 6, 80, 24, N / 2, N / 2);
        add(OP_HOST, 5, 120, 32, 2, N + 1);
        add(OP_HOST, 5, 200, 40, N + 1, N + 1);
        add(OP_HOST, 3, 300, 50, 2 * N, 2 * N - 3);
        add(OP_HOST, 6, MEM_SIZE - 17, 56, 3, 3);  // rows 4 and 5 in one failing request
        add(OP_WEIGHT, N, 500, 0, 3, 1);
        add(OP_WEIGHT, N - 1, 600, 0, N, 0);
        add(OP_WEIGHT, N - 1, 700, 0, 2, N);
        run_batch;
        // The model's rule itself: k = 4, 4, 4, 4, 3 (N = 4) or 4, 2, 2, 4; 4, 4, 4.
        if (p_nreq[from] != 2 || p_nreq[from+1] != 2 || p_nreq[from+2] != 2 ||
            p_nreq[from+3] != 2 || p_nreq[from+4] != 2 || p_nreq[from+5] != 3 ||
            p_nreq[from+6] != 2 || p_nreq[from+7] != 2 || p_nreq[from+8] != N / 4 ||
            p_nreq[from+9] != (N + 2) / 4 || p_nreq[from+10] != (N + 2) / 4 ||
            n_req_hm - from_req != (N < 5 ? 14 : 13)) begin
            $display("FAIL: close rows in %0d %0d %0d %0d %0d %0d %0d %0d / %0d %0d %0d requests",
                     p_nreq[from], p_nreq[from+1], p_nreq[from+2], p_nreq[from+3], p_nreq[from+4],
                     p_nreq[from+5], p_nreq[from+6], p_nreq[from+7], p_nreq[from+8],
                     p_nreq[from+9], p_nreq[from+10]);
            $finish;
        end
        from = n_prog;
        for (it = 0; it < 4; it = it + 1) add(OP_HOST, 16, 37 * it, 16 * it, 3, 2);
        run_batch;
        check_gapless(from);

        // Contiguous RD_WEIGHTs (stride == len): full tiles in N / 4 requests of 4N bytes, back to
        // back with no cycle lost; rows of len < N, R = min(WF_ROWS, floor(4N / len)) at a time;
        // short tiles (rows not a multiple of R: the last request carries fewer rows, then the
        // zero rows); a tile whose last request runs past memory (all of its rows zero, fault)
        // and one that starts past it; RD_HOSTs interleaved, their order kept. The chains' latency
        // is short: at N = 4 a tile is one request and WFIFO_TILES tiles cover 4 cycles.
        latency = 1;
        from = n_prog;
        from_req = n_req_co;
        for (it = 0; it < 6; it = it + 1) add(OP_WEIGHT, N, 3 * N * it + it, 0, N, N);
        run_batch;
        check_gapless(from);
        if (n_req_co - from_req != 6 * N / WF_ROWS) begin
            $display("FAIL: 6 contiguous full tiles in %0d requests, expected %0d",
                     n_req_co - from_req, 6 * N / WF_ROWS);
            $finish;
        end
        from = n_prog;
        add(OP_WEIGHT, N, 7, 0, 1, 1);
        add(OP_WEIGHT, N, 20, 0, 3, 3);
        add(OP_WEIGHT, N, 40, 0, N - 1, N - 1);
        add(OP_WEIGHT, N, 90, 0, N / 2, N / 2);
        run_batch;
        check_gapless(from);
        add(OP_WEIGHT, 1, 11, 0, N, N);
        add(OP_WEIGHT, N - 1, 300, 0, N, N);
        add(OP_WEIGHT, N > WF_ROWS ? WF_ROWS + 1 : N - 1, 500, 0, N, N);
        add(OP_WEIGHT, 3, 600, 0, 2, 2);
        add(OP_HOST, 3, 8, 5, N, N);
        run_batch;
        latency = 7;
        add(OP_WEIGHT, N, MEM_SIZE - N * N + 1, 0, N, N);  // the last request fails
        add(OP_WEIGHT, N, MEM_SIZE - N * N, 0, N, N);  // the last row is memory's last
        add(OP_WEIGHT, N - 2, MEM_SIZE - 2 * N - 3, 0, N, N);  // a middle request fails
        add(OP_WEIGHT, N, MEM_SIZE, 0, N, N);  // all fail
        add(OP_HOST, 2, 40, 30, N, N);
        run_batch;
        latency = 2;
        from = n_prog;
        for (it = 0; it < 4; it = it + 1) begin
            add(OP_WEIGHT, N, 200 * it, 0, N, N);
            add(OP_HOST, N, 100 * it + 1, 10 * it, N, N);
            add(OP_WEIGHT, N, 200 * it + 50, 0, N, 2 * N);
            add(OP_HOST, 2, 100 * it + 7, 10 * it + 2, N, N);  // overlaps the previous one's rows
        end
        run_batch;
        check_gapless(from);

        // RD_WEIGHT.BF16: contiguous full tiles of 2N-byte rows, two per request (N / 2
        // requests), back to back with no cycle lost, between int8 ones; an odd len (the last
        // bf16's high byte zero), rows of N bytes (four per request would fit the bus, two fit
        // the FIFO's port), short tiles, stride 0, a request past memory.
        latency = 2;
        from = n_prog;
        from_req = n_req_co;
        for (it = 0; it < 4; it = it + 1) add_bf16(N, 4 * N * it + 2 * it, 2 * N, 2 * N);
        run_batch;
        check_gapless(from);
        if (n_req_co - from_req != 4 * N / 2) begin
            $display("FAIL: 4 contiguous full bf16 tiles in %0d requests, expected %0d",
                     n_req_co - from_req, 4 * N / 2);
            $finish;
        end
        from = n_prog;
        add(OP_WEIGHT, N, 100, 0, N, N);
        add_bf16(N, 300, 2 * N - 1, 2 * N - 1);
        add(OP_WEIGHT, N, 500, 0, N, N);
        add_bf16(N, 700, N, N);
        run_batch;
        if (p_nreq[from+3] != N / 2) begin
            $display("FAIL: a bf16 tile of N-byte rows in %0d requests, expected %0d",
                     p_nreq[from+3], N / 2);
            $finish;
        end
        add_bf16(N - 1, 40, 2 * N, 2 * N);
        add_bf16(1, 41, 3, 0);
        add_bf16(3, 900, 2 * N, 0);
        add_bf16(N, MEM_SIZE - 2 * N * N + 1, 2 * N, 2 * N);  // the last request fails
        add(OP_HOST, 2, 40, 30, N, N);
        run_batch;

        // Chains of full-size instructions, back to back with an always-ready memory: no cycle
        // lost between them, several in flight at once. Rows more than 3N apart are one request
        // each, so LD_SLOTS instructions cover the latency.
        latency = 6;
        from = n_prog;
        for (it = 0; it < 10; it = it + 1)
        add(OP_HOST, N, 17 * it, (5 * it) % (UB_ROWS - N), N, 3 * N + 1 + it);
        run_batch;
        check_gapless(from);
        latency = 3;
        from = n_prog;
        for (it = 0; it < 10; it = it + 1) add(OP_WEIGHT, N, 31 * it, 0, N - it % N, 2 * N);
        run_batch;
        check_gapless(from);
        // Mixed: RD_HOST and RD_PARAMS after RD_WEIGHTs and the other way round.
        latency = 4;
        from = n_prog;
        add(OP_WEIGHT, N, 100, 0, N, N);
        add(OP_HOST, 3, 200, 40, N / 2, 7);
        add(OP_WEIGHT, N, 300, 0, N, 0);
        add(OP_PARAMS, 3, 400, 0, 4 * N, 4 * N);
        add(OP_HOST, 2, 500, 41, N, N);  // overlaps the first RD_HOST's rows: written after it
        add(OP_WEIGHT, N, 600, 0, 3, 5);
        run_batch;
        check_gapless(from);

        // The FIFO nearly full: tiles are popped rarely, RD_WEIGHTs wait for a free tile.
        pop_pct = 3;
        latency = 5;
        for (it = 0; it < 12; it = it + 1)
        add(OP_WEIGHT, it % 3 == 0 ? N / 2 + 1 : N, 7 * it, 0, N, 3);
        add(OP_HOST, 4, 9, 0, N, N);
        add(OP_WEIGHT, N, 9, 0, N, N);
        run_batch;
        pop_pct = 100;
        repeat (10) @(posedge clk);
        pop_pct = 0;
        for (it = 0; it < 3; it = it + 1) add(OP_WEIGHT, N, 11 * it, 0, N, 1);
        add(OP_HOST, 2, 1, 3, N, N);  // runs while the FIFO stays full
        run_batch;
        pop_pct = 40;

        // Errors in the middle of overlapped instructions: each faulting one still runs to the
        // end, the others are unaffected.
        latency = 8;
        add(OP_HOST, 4, 0, 0, N, N);
        add(OP_HOST, 6, MEM_SIZE - 3 * N - 1, 40, N, N);
        add(OP_WEIGHT, N, 64, 0, N, N);
        add(OP_HOST, 3, MEM_SIZE - 2 * N - 1, 10, N, N);  // only the last row fails
        add(OP_WEIGHT, 3, MEM_SIZE - 2, 0, 4, 0);
        add(OP_PARAMS, 3, 0, 0, 4 * N, MEM_SIZE - 2 * N);
        add(OP_HOST, 2, 32'hffff_fff0, 0, N, 16);
        add(OP_PARAMS, 3, 0, 0, 4 * N, MEM_SIZE / 2 - N);  // only the last row fails
        add(OP_WEIGHT, N, MEM_SIZE - N * N, 0, N, N + 1);  // the last rows fail
        add_acc(4, MEM_SIZE - 4 * N - 8, 3, 4 * N, 4, 1'b1, 1'b1);  // the last two rows fail
        add(OP_HOST, 5, 77, 50, N, 1);
        run_batch;

        // ZEROs alone: one row, all rows, a chain taken back to back (each in the previous
        // one's done cycle, the rows written without a gap); then beside a chain of loads.
        zpct = 100;
        add_zero(1, UB_ROWS);
        run_batch;
        add_zero(Z_ROWS, UB_ROWS);
        run_batch;
        from = z_b2b;
        for (it = 0; it < 6; it = it + 1) add_zero(1 + it, UB_ROWS + 3 * it);
        run_batch;
        if (z_b2b - from != 5) begin
            $display("FAIL: %0d of 5 chained ZEROs taken in the previous one's done cycle",
                     z_b2b - from);
            $finish;
        end
        zpct = 30;
        latency = 5;
        for (it = 0; it < 8; it = it + 1) begin
            add(OP_HOST, N, 17 * it, (5 * it) % (UB_ROWS - N), N, N + it);
            rand_zero;
        end
        run_batch;

        // Random batches: random memory timing, FIFO pops and gaps between instructions, ZEROs
        // offered among them.
        for (it = 0; it < 40; it = it + 1) begin
            latency = 1 + {$random(seed)} % 13;
            ready_pct = (it % 3 == 0) ? 100 : 20 + {$random(seed)} % 80;
            rsp_pct = (it % 4 == 0) ? 100 : 30 + {$random(seed)} % 70;
            pop_pct = 5 + {$random(seed)} % 96;
            gap_pct = (it % 2 == 0) ? 0 : {$random(seed)} % 80;
            from = 1 + {$random(seed)} % 8;
            zpct = 5 + {$random(seed)} % 55;
            for (ik = 0; ik < from; ik = ik + 1) begin
                rand_insn;
                if ({$random(seed)} % 3 == 0) rand_zero;
            end
            run_batch;
        end
        $display("%0d loads (%0d ACC rows of RD_ACCs) and %0d ZEROs checked", n_prog, n_accw_all,
                 nz_prog);
        $display("PASS");
        $finish;
    end
endmodule
