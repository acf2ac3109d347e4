`default_nettype none
// tpu_dma_rd against the shared memory model (model/mem_model.v: fixed latency, random req_ready,
// random gaps between responses, err beyond MEM_SIZE, junk on every lane that carries no data,
// refused requests held stable) and models of the UB, the weight tile being written and the
// parameter rows.
// Each instruction is checked for: the request sequence (addresses a + i*stride, len, one per
// row, none for the zero rows of a tile, none while the FIFO is full), every destination row
// (bytes >= len zero, err rows zero, untouched rows unchanged), exactly one done pulse with the
// last write or the tile push, fault, no activity outside the instruction, and one request per
// cycle when the memory always accepts.
module tb_dma_rd;
    parameter N = 8;
    localparam MEM_SIZE = 4096;
    localparam UB_ROWS = 64;
    localparam [7:0] OP_HOST = 8'h01;
    localparam [7:0] OP_WEIGHT = 8'h02;
    localparam [7:0] OP_PARAMS = 8'h03;

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
    wire done;
    wire fault;
    wire req_valid;
    wire req_ready;
    wire [31:0] req_addr;
    wire [15:0] req_len;
    wire rsp_valid;
    wire rsp_err;
    wire [32*N-1:0] rsp_rdata;
    wire ub_en;
    wire [19:0] ub_addr;
    wire [8*N-1:0] ub_data;
    reg wf_full = 1'b0;
    wire wf_en;
    wire [8:0] wf_row;
    wire [8*N-1:0] wf_data;
    wire wf_push;
    wire prm_en;
    wire [1:0] prm_sel;
    wire [32*N-1:0] prm_data;

    tpu_dma_rd #(
        .N(N)
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
        .done(done),
        .fault(fault),
        .req_valid(req_valid),
        .req_ready(req_ready),
        .req_addr(req_addr),
        .req_len(req_len),
        .rsp_valid(rsp_valid),
        .rsp_err(rsp_err),
        .rsp_rdata(rsp_rdata),
        .ub_en(ub_en),
        .ub_addr(ub_addr),
        .ub_data(ub_data),
        .wf_full(wf_full),
        .wf_en(wf_en),
        .wf_row(wf_row),
        .wf_data(wf_data),
        .wf_push(wf_push),
        .prm_en(prm_en),
        .prm_sel(prm_sel),
        .prm_data(prm_data)
    );

    integer seed = 1;
    integer cycle = 0;

    always @(posedge clk) cycle <= cycle + 1;

    // ---------------------------------------------------------------- memory --
    integer latency = 1;      // cycles from acceptance to the earliest response, >= 1
    integer ready_pct = 100;  // chance per cycle that req_ready is high
    integer rsp_pct = 100;    // chance per cycle that a due response is given

    mem_model #(
        .BUS(4 * N), .BYTES(MEM_SIZE), .SEED(11)
    ) u_mem (
        .clk(clk), .rst(rst), .size(MEM_SIZE), .latency(latency), .jitter(32'd0),
        .ready_pct(ready_pct), .rsp_pct(rsp_pct), .req_valid(req_valid), .req_ready(req_ready),
        .req_we(1'b0), .req_addr(req_addr), .req_len(req_len), .req_id(1'b0),
        .req_wdata({32 * N{1'b0}}), .rsp_valid(rsp_valid), .rsp_ready(1'b1), .rsp_id(),
        .rsp_err(rsp_err), .rsp_rdata(rsp_rdata)
    );

    // A request is answered with err unless all its bytes are below MEM_SIZE (no wrap at 2^32).
    function in_range(input [31:0] addr, input [15:0] len);
        in_range = {32'd0, addr} + len <= MEM_SIZE;
    endfunction

    // -------------------------------------------------- destination models --
    reg [8*N-1:0] ub_img[0:UB_ROWS-1];
    reg [8*N-1:0] tile_img[0:N-1];
    reg tile_written[0:N-1];
    reg [32*N-1:0] prm_img[0:2];

    // What the monitor saw during the current instruction.
    reg busy = 1'b0;
    reg [7:0] cur_op = 8'd0;
    reg [31:0] cur_a;
    reg [31:0] cur_stride;
    reg [11:0] cur_len;
    integer n_req;
    integer n_ub;
    integer n_wf;
    integer n_prm;
    integer n_push;
    integer n_done;
    integer first_req;
    integer last_req;
    reg fault_seen;
    integer w_j;

    always @(posedge clk) begin
        if (!rst) begin
            if (!busy && (req_valid || ub_en || wf_en || wf_push || prm_en || done)) begin
                $display("FAIL: activity while idle at cycle %0d (req %b ub %b wf %b push %b prm %b done %b)",
                         cycle, req_valid, ub_en, wf_en, wf_push, prm_en, done);
                $finish;
            end
            if (cur_op == OP_WEIGHT && wf_full && (req_valid || wf_en)) begin
                $display("FAIL: RD_WEIGHT started while the FIFO was full (cycle %0d)", cycle);
                $finish;
            end
            if (req_valid && req_ready) begin
                if (req_addr !== cur_a + n_req * cur_stride || req_len !== {4'd0, cur_len}) begin
                    $display("FAIL: request %0d: addr %h len %0d, expected addr %h len %0d", n_req,
                             req_addr, req_len, cur_a + n_req * cur_stride, cur_len);
                    $finish;
                end
                if (n_req == 0) first_req = cycle;
                last_req = cycle;
                n_req = n_req + 1;
            end
            if (ub_en) begin
                if (ub_addr >= UB_ROWS) begin
                    $display("FAIL: UB write to row %0d, beyond the %0d rows", ub_addr, UB_ROWS);
                    $finish;
                end
                ub_img[ub_addr] = ub_data;
                n_ub = n_ub + 1;
            end
            if (wf_en) begin
                if (wf_row >= N) begin
                    $display("FAIL: weight write to tile row %0d >= N", wf_row);
                    $finish;
                end
                tile_img[wf_row] = wf_data;
                tile_written[wf_row] = 1'b1;
                n_wf = n_wf + 1;
            end
            if (wf_push) begin
                for (w_j = 0; w_j < N; w_j = w_j + 1)
                if (!tile_written[w_j]) begin
                    $display("FAIL: tile pushed before row %0d was written", w_j);
                    $finish;
                end
                n_push = n_push + 1;
            end
            if (prm_en) begin
                if (prm_sel > 2) begin
                    $display("FAIL: parameter write to register %0d", prm_sel);
                    $finish;
                end
                prm_img[prm_sel] = prm_data;
                n_prm = n_prm + 1;
            end
            if (done) begin
                if (!(cur_op == OP_HOST ? ub_en : cur_op == OP_WEIGHT ? wf_push : prm_en)) begin
                    $display("FAIL: done (op %0d) not with the last write or push", cur_op);
                    $finish;
                end
                fault_seen = fault;
                n_done = n_done + 1;
                busy = 1'b0;
            end
            if (cmd_valid && cmd_ready) begin
                busy = 1'b1;
                cur_op = cmd_op;
                cur_a = cmd_a;
                cur_stride = cmd_stride;
                cur_len = cmd_len;
                n_req = 0;
                n_ub = 0;
                n_wf = 0;
                n_prm = 0;
                n_push = 0;
                n_done = 0;
            end
        end
    end

    // ------------------------------------------------------- one instruction --
    reg [8*N-1:0] exp_ub[0:UB_ROWS-1];
    reg [8*N-1:0] exp_tile[0:N-1];
    reg [32*N-1:0] exp_prm[0:2];
    reg exp_fault;
    integer n_tests = 0;

    // What an instruction should write for a memory row: bytes < len, zero elsewhere and on err.
    function [32*N-1:0] exp_row(input [31:0] addr, input [11:0] len);
        integer k;
        begin
            exp_row = {32 * N{1'b0}};
            if (in_range(addr, {4'd0, len})) for (k = 0; k < len; k = k + 1) exp_row[8*k+:8] = u_mem.mem[addr+k];
        end
    endfunction

    // full_cycles: hold wf_full high that many cycles after the instruction is offered.
    task run(input [7:0] op, input [15:0] rows, input [31:0] a, input [19:0] b, input [11:0] len,
             input [31:0] stride, input integer full_cycles);
        integer i;
        integer k;
        integer t;
        reg [31:0] addr;
        reg [32*N-1:0] row;
        begin
            n_tests = n_tests + 1;
            exp_fault = 1'b0;
            for (i = 0; i < UB_ROWS; i = i + 1) exp_ub[i] = ub_img[i];
            for (i = 0; i < N; i = i + 1) begin
                for (k = 0; k < N; k = k + 1) tile_img[i][8*k+:8] = $random(seed);
                tile_written[i] = 1'b0;
                exp_tile[i] = {8 * N{1'b0}};
            end
            for (i = 0; i < 3; i = i + 1) begin
                for (k = 0; k < N; k = k + 1) prm_img[i][32*k+:32] = $random(seed);
                exp_prm[i] = prm_img[i];
            end
            for (i = 0; i < rows; i = i + 1) begin
                addr = a + i * stride;
                row = exp_row(addr, len);
                exp_fault = exp_fault | !in_range(addr, {4'd0, len});
                if (op == OP_HOST) exp_ub[b+i] = row[8*N-1:0];
                else if (op == OP_WEIGHT) exp_tile[i] = row[8*N-1:0];
                else exp_prm[i] = row;
            end

            @(posedge clk);
            cmd_valid <= 1'b1;
            cmd_op <= op;
            cmd_rows <= rows;
            cmd_a <= a;
            cmd_b <= b;
            cmd_len <= len;
            cmd_stride <= stride;
            // Other instructions must ignore wf_full: hold it at random for their whole run.
            wf_full <= (op == OP_WEIGHT) ? full_cycles > 0 : $random(seed) % 2 != 0;
            @(posedge clk);
            t = 0;
            while (!cmd_ready) begin
                @(posedge clk);
                t = t + 1;
                if (t > 100) begin
                    $display("FAIL: cmd_ready stayed low");
                    $finish;
                end
            end
            cmd_valid <= 1'b0;
            t = 0;
            while (!done) begin
                if (op == OP_WEIGHT && t == full_cycles) wf_full <= 1'b0;
                @(posedge clk);
                t = t + 1;
                if (t > 20000) begin
                    $display("FAIL: op %0d rows %0d a %h len %0d stride %0d: no done after %0d cycles",
                             op, rows, a, len, stride, t);
                    $finish;
                end
            end
            wf_full <= 1'b0;
            repeat (2) @(posedge clk);

            if (n_done != 1 || fault_seen !== exp_fault) begin
                $display("FAIL: op %0d rows %0d a %h len %0d stride %0d: %0d done pulses, fault %b, expected 1 and %b",
                         op, rows, a, len, stride, n_done, fault_seen, exp_fault);
                $finish;
            end
            if (n_req != rows) begin
                $display("FAIL: op %0d rows %0d: %0d requests", op, rows, n_req);
                $finish;
            end
            if (ready_pct == 100 && last_req - first_req != rows - 1) begin
                $display("FAIL: op %0d rows %0d latency %0d: requests took %0d cycles with an always-ready memory",
                         op, rows, latency, last_req - first_req + 1);
                $finish;
            end
            if (n_ub != (op == OP_HOST ? rows : 0) || n_wf != (op == OP_WEIGHT ? N : 0) ||
                n_push != (op == OP_WEIGHT ? 1 : 0) || n_prm != (op == OP_PARAMS ? 3 : 0)) begin
                $display("FAIL: op %0d rows %0d: %0d UB writes, %0d tile row writes, %0d pushes, %0d parameter writes",
                         op, rows, n_ub, n_wf, n_push, n_prm);
                $finish;
            end
            for (i = 0; i < UB_ROWS; i = i + 1)
            if (ub_img[i] !== exp_ub[i]) begin
                $display("FAIL: RD_HOST rows %0d a %h b %0d len %0d stride %0d: UB[%0d] = %h, expected %h",
                         rows, a, b, len, stride, i, ub_img[i], exp_ub[i]);
                $finish;
            end
            if (op == OP_WEIGHT)
                for (i = 0; i < N; i = i + 1)
                if (tile_img[i] !== exp_tile[i]) begin
                    $display("FAIL: RD_WEIGHT rows %0d a %h len %0d stride %0d: tile row %0d = %h, expected %h",
                             rows, a, len, stride, i, tile_img[i], exp_tile[i]);
                    $finish;
                end
            for (i = 0; i < 3; i = i + 1)
            if (prm_img[i] !== exp_prm[i]) begin
                $display("FAIL: RD_PARAMS a %h len %0d stride %0d: register %0d = %h, expected %h",
                         a, len, stride, i, prm_img[i], exp_prm[i]);
                $finish;
            end
        end
    endtask

    integer it;
    integer ik;
    integer op_i;
    reg [15:0] rr;
    reg [19:0] rb;
    reg [11:0] rl;
    reg [31:0] ra;
    reg [31:0] rs;

    initial begin
        for (it = 0; it < MEM_SIZE; it = it + 1) u_mem.mem[it] = $random(seed);
        for (it = 0; it < UB_ROWS; it = it + 1) begin
            for (ik = 0; ik < N; ik = ik + 1) ub_img[it][8*ik+:8] = $random(seed);
        end
        repeat (3) @(posedge clk);
        rst <= 1'b0;

        // Edges: one row of one byte, the last byte of memory, stride 0, a large stride.
        run(OP_HOST, 1, 0, 0, 1, 0, 0);
        run(OP_HOST, 1, MEM_SIZE - 1, 63, 1, 0, 0);
        run(OP_HOST, 5, 13, 7, N - 1, 0, 0);
        run(OP_HOST, 4, 3, 20, N, 997, 0);
        // Many rows in flight; then back-pressure and gaps between responses.
        latency = 10;
        run(OP_HOST, 40, 1, 10, N, N, 0);
        ready_pct = 30;
        rsp_pct = 50;
        run(OP_HOST, 20, 101, 30, N / 2, 3 * N + 1, 0);
        ready_pct = 100;
        rsp_pct = 100;

        run(OP_WEIGHT, N, 64, 0, N, N, 0);
        run(OP_WEIGHT, 1, 7, 0, 1, 0, 0);
        run(OP_WEIGHT, N / 2, 1001, 0, 3, 0, 12);  // waits for a free tile
        latency = 3;
        rsp_pct = 40;
        run(OP_WEIGHT, N - 1, 5, 0, N - 1, 1000, 3);

        run(OP_PARAMS, 3, 32, 0, 4 * N, 4 * N, 0);
        run(OP_PARAMS, 3, 9, 0, 4, 0, 0);
        run(OP_PARAMS, 3, 2, 0, 4 * (N / 2 + 1), 1500, 0);

        // Errors: the instruction still runs to the end.
        rsp_pct = 100;
        run(OP_HOST, 6, MEM_SIZE - 3 * N - 1, 40, N, N, 0);
        run(OP_HOST, 3, MEM_SIZE - 2 * N - 1, 40, N, N, 0);  // only the last row fails
        run(OP_HOST, 2, 32'hffff_fff0, 0, N, 16, 0);
        run(OP_WEIGHT, 3, MEM_SIZE - 2, 0, 4, 0, 0);
        run(OP_PARAMS, 3, 0, 0, 4 * N, MEM_SIZE - 2 * N, 0);
        run(OP_PARAMS, 3, 0, 0, 4 * N, MEM_SIZE / 2 - N, 0);  // only the last row fails

        for (it = 0; it < 80; it = it + 1) begin
            op_i = 1 + {$random(seed)} % 3;
            latency = 1 + {$random(seed)} % 13;
            ready_pct = (it % 3 == 0) ? 100 : 20 + {$random(seed)} % 80;
            rsp_pct = (it % 4 == 0) ? 100 : 30 + {$random(seed)} % 70;
            ra = {$random(seed)} % MEM_SIZE;
            case ({$random(seed)} % 4)
                0: rs = 0;
                1: rs = 1 + {$random(seed)} % (4 * N);
                2: rs = {$random(seed)} % (MEM_SIZE / 4);
                default: rs = {$random(seed)};
            endcase
            if (op_i == 1) begin
                rr = 1 + {$random(seed)} % 24;
                rb = {$random(seed)} % (UB_ROWS - rr + 1);
                rl = 1 + {$random(seed)} % N;
                run(OP_HOST, rr, ra, rb, rl, rs, 0);
            end else if (op_i == 2) begin
                rr = 1 + {$random(seed)} % N;
                rl = 1 + {$random(seed)} % N;
                run(OP_WEIGHT, rr, ra, 0, rl, rs, {$random(seed)} % 6);
            end else begin
                rl = 4 * (1 + {$random(seed)} % N);
                run(OP_PARAMS, 3, ra, 0, rl, rs, 0);
            end
        end
        $display("%0d instructions checked", n_tests);
        $display("PASS");
        $finish;
    end
endmodule
