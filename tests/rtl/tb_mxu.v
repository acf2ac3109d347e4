// tb_mxu: tpu_mxu against models of its neighbours and a reference matmul.
//   UB: rows of N bytes, read two at a time (rows ub_addr and ub_addr + 1), data the cycle
//       after ub_en (random garbage otherwise, so zero filling of idle slots is exercised).
//       Weight FIFO: a queue of tiles of 16-bit cells (int8 sign-extended, or bf16),
//       combinational row read, pop (popping an empty FIFO fails). ACC: int32 or fp32 rows with
//       the read-modify-write rule (acc_bf16: fp32_add).
// The reference executes each command at instruction level (docs/isa.md MATMUL, with BF16 the
// rule of "Floating point (bf16)", rtl/tpu_fp.vh) as it is defined. Every cycle the monitor
// checks: the UB address sequence, each ACC write's address, accumulate and bf16 bits and done
// flag against the expected row sequence, the UB-read-to-ACC-write
// latency (exactly 2N+2), zero acc_data between writes (idle slots carry zero activations),
// row_fire (2 cycles after ub_en), weight_stall (a command is waiting and no row issues) and
// busy (commands accepted and not yet done). After each phase the whole ACC is compared with
// the reference.
// Phases: commands after reset without LOAD (zero weights); a LOAD with the FIFO empty (tile
// arrives 3N cycles later); random commands with and without LOAD/ACC/UNSIGNED/BF16 (int8 and
// bf16 back to back, on tiles of either type), rows 1 .. 4N,
// UB row strides 0 (consecutive), 1 .. N and a few large ones up to 255, back-to-back or with
// gaps, tiles arriving at random times; throughput: back-to-back LOAD commands of 2N-1 rows must
// keep row_fire high without a break, and so must a convolution's stream (one LOAD, then short
// commands of stride 2 on the same tile); an interlock stress of short LOAD commands.
module tb_mxu;
    parameter N = 8;
    `include "tpu_fp.vh"
    `include "tb_bf16.vh"

    parameter QD = 2;  // MXU command queue depth
    localparam UBR = 256;
    localparam ACCR = 256;
    localparam MAXT = 96;  // tiles
    localparam MAXC = 128;  // commands
    localparam MAXW = 8192;  // rows
    localparam LAT = 2 * N + 2;

    reg clk = 1'b0;
    always #5 clk = ~clk;
    reg rst;

    reg cmd_valid = 1'b0;
    reg [19:0] cmd_ub_addr = 0, cmd_acc_addr = 0;
    reg [15:0] cmd_rows = 0;
    reg [ 7:0] cmd_ub_stride = 0;
    reg cmd_acc = 0, cmd_load = 0, cmd_unsigned = 0, cmd_bf16 = 0;
    wire cmd_ready, done;
    wire wf_empty;
    wire [8:0] wf_row;
    wire [16*N-1:0] wf_rdata;
    wire wf_pop;
    wire ub_en;
    wire [19:0] ub_addr;
    reg [16*N-1:0] ub_data;
    wire acc_en;
    wire [19:0] acc_addr;
    wire acc_accumulate, acc_bf16;
    wire [32*N-1:0] acc_data;
    wire row_fire, weight_stall, busy;

    tpu_mxu #(
        .N (N),
        .QD(QD)
    ) dut (
        .clk(clk),
        .rst(rst),
        .cmd_valid(cmd_valid),
        .cmd_ready(cmd_ready),
        .cmd_ub_addr(cmd_ub_addr),
        .cmd_acc_addr(cmd_acc_addr),
        .cmd_rows(cmd_rows),
        .cmd_ub_stride(cmd_ub_stride),
        .cmd_acc(cmd_acc),
        .cmd_load(cmd_load),
        .cmd_unsigned(cmd_unsigned),
        .cmd_bf16(cmd_bf16),
        .done(done),
        .wf_empty(wf_empty),
        .wf_row(wf_row),
        .wf_rdata(wf_rdata),
        .wf_pop(wf_pop),
        .ub_en(ub_en),
        .ub_addr(ub_addr),
        .ub_data(ub_data),
        .acc_en(acc_en),
        .acc_addr(acc_addr),
        .acc_accumulate(acc_accumulate),
        .acc_bf16(acc_bf16),
        .acc_data(acc_data),
        .row_fire(row_fire),
        .weight_stall(weight_stall),
        .busy(busy)
    );

    integer errors = 0;
    integer seed = 11;
    integer gseed = 5;
    integer cyc = 0;
    always @(posedge clk) cyc <= cyc + 1;

    task fail_msg;
        begin
            errors = errors + 1;
            if (errors > 10) $finish;
        end
    endtask

    function [8*N-1:0] garbage(input integer dummy);
        garbage = {
            $random(gseed),
            $random(gseed),
            $random(gseed),
            $random(gseed),
            $random(gseed),
            $random(gseed),
            $random(gseed),
            $random(gseed)
        };
    endfunction

    // ---------------------------------------------------------------- neighbour models --
    reg [8*N-1:0] ub_mem[0:UBR-1];
    always @(posedge clk)
        ub_data <= ub_en ? {ub_mem[(ub_addr+1)%UBR], ub_mem[ub_addr]} : {garbage(
            0
        ), garbage(
            1
        )};

    reg [16*N-1:0] tiles[0:MAXT*N-1];  // tile j row k at j*N+k
    integer wf_head = 0, wf_tail = 0;  // tiles [wf_head, wf_tail) are in the FIFO
    assign wf_empty = wf_head == wf_tail;
    assign wf_rdata = wf_empty ? {16 * N{1'bx}} : tiles[wf_head*N+wf_row];
    always @(posedge clk)
        if (wf_pop) begin
            if (wf_empty) begin
                $display("FAIL: cycle %0d wf_pop with the weight FIFO empty", cyc);
                fail_msg;
            end
            wf_head <= wf_head + 1;
        end

    reg [32*N-1:0] acc_mem[0:ACCR-1];
    reg [32*N-1:0] acc_tmp;
    integer l;
    always @(posedge clk)
        if (acc_en) begin
            acc_tmp = acc_mem[acc_addr];
            for (l = 0; l < N; l = l + 1)
            if (acc_bf16)
                acc_tmp[l*32+:32] = acc_accumulate ? fp32_add(
                    acc_tmp[l*32+:32], acc_data[l*32+:32]
                ) : acc_data[l*32+:32];
            else
                acc_tmp[l*32+:32] = (acc_accumulate ? acc_tmp[l*32+:32] : 32'd0) + acc_data[l*32+:32];
            acc_mem[acc_addr] <= acc_tmp;
        end

    // ---------------------------------------------------------- commands and reference --
    reg [19:0] c_ub[0:MAXC-1], c_acc[0:MAXC-1];
    reg [15:0] c_rows  [0:MAXC-1];
    reg [ 7:0] c_stride[0:MAXC-1];
    reg c_accf[0:MAXC-1], c_load[0:MAXC-1], c_uns[0:MAXC-1], c_bf[0:MAXC-1];
    integer c_gap[0:MAXC-1];
    integer n_cmds = 0;  // commands defined
    integer n_loads = 0;  // LOAD commands defined (= tiles they consume)
    reg [32*N-1:0] ref_acc[0:ACCR-1];

    reg [19:0] e_ub[0:MAXW-1], e_acc[0:MAXW-1];
    reg e_accum[0:MAXW-1], e_last[0:MAXW-1], e_bf[0:MAXW-1];
    integer e_cyc[0:MAXW-1];  // cycle of each row's UB read
    integer n_rows = 0;  // rows defined

    function integer sx8(input [7:0] val);
        sx8 = val[7] ? val - 256 : val;
    endfunction

    reg     [15:0] cur_w[0:N*N-1];  // reference cells of the current bank, [k][c]
    integer        act  [  0:N-1];
    reg     [15:0] bact [  0:N-1];

    // An int8 command.
    task add_cmd(input integer ub, input integer acc, input integer rows, input integer accf,
                 input integer load, input integer uns, input integer stride, input integer gap);
        add_cmd_t(ub, acc, rows, accf, load, uns, stride, gap, 0);
    endtask

    // stride: UB rows between the command's rows, 0 meaning 1; bf: BF16 (each row a UB row pair).
    task add_cmd_t(input integer ub, input integer acc, input integer rows, input integer accf,
                   input integer load, input integer uns, input integer stride, input integer gap,
                   input integer bf);
        integer i, c, kk, sum, step;
        reg [32*N-1:0] row;
        reg [7:0] ab;
        reg [16*N-1:0] pair;
        reg [31:0] fsum;
        begin
            c_ub[n_cmds] = ub;
            c_acc[n_cmds] = acc;
            c_rows[n_cmds] = rows;
            c_stride[n_cmds] = stride;
            step = stride == 0 ? 1 : stride;
            c_accf[n_cmds] = accf;
            c_load[n_cmds] = load;
            c_uns[n_cmds] = uns;
            c_bf[n_cmds] = bf;
            c_gap[n_cmds] = gap;
            n_cmds = n_cmds + 1;
            if (load) begin
                for (kk = 0; kk < N; kk = kk + 1)
                for (c = 0; c < N; c = c + 1) cur_w[kk*N+c] = tiles[n_loads*N+kk][c*16+:16];
                n_loads = n_loads + 1;
            end
            for (i = 0; i < rows; i = i + 1) begin
                pair = {ub_mem[ub+i*step+1], ub_mem[ub+i*step]};
                for (kk = 0; kk < N; kk = kk + 1) begin
                    ab = pair[kk*8+:8];
                    act[kk] = uns ? ab : sx8(ab);
                    bact[kk] = pair[kk*16+:16];
                end
                row = accf ? ref_acc[acc+i] : {32 * N{1'b0}};
                for (c = 0; c < N; c = c + 1)
                if (bf) begin
                    fsum = 32'd0;
                    for (kk = 0; kk < N; kk = kk + 1)
                    fsum = fp32_add(fsum, bf16_mul(bact[kk], cur_w[kk*N+c]));
                    row[c*32+:32] = accf ? fp32_add(row[c*32+:32], fsum) : fsum;
                end else begin
                    sum = 0;
                    for (kk = 0; kk < N; kk = kk + 1) sum = sum + act[kk] * sx8(cur_w[kk*N+c][7:0]);
                    row[c*32+:32] = row[c*32+:32] + sum;
                end
                ref_acc[acc+i] = row;
                e_ub[n_rows] = ub + i * step;
                e_acc[n_rows] = acc + i;
                e_accum[n_rows] = accf;
                e_bf[n_rows] = bf;
                e_last[n_rows] = (i == rows - 1);
                n_rows = n_rows + 1;
            end
        end
    endtask

    // ------------------------------------------------------------------------ monitor --
    integer n_acc_cmds = 0;  // commands accepted
    integer n_issued = 0;  // rows read from UB
    integer n_full = 0;  // commands whose last row has been read
    integer n_written = 0;  // rows written to ACC
    integer n_done = 0;
    integer n_fire = 0, run = 0, max_run = 0, n_wstall = 0;
    reg ub_en_d1 = 1'b0, ub_en_d2 = 1'b0;

    always @(posedge clk)
        if (!rst) begin
            if (busy !== (n_acc_cmds != n_done)) begin
                $display("FAIL: cycle %0d busy expected %0d actual %b", cyc, n_acc_cmds != n_done,
                         busy);
                fail_msg;
            end
            if (weight_stall !== (n_acc_cmds > n_full && !ub_en)) begin
                $display("FAIL: cycle %0d weight_stall expected %0d actual %b", cyc,
                         n_acc_cmds > n_full && !ub_en, weight_stall);
                fail_msg;
            end
            if (row_fire !== ub_en_d2) begin
                $display("FAIL: cycle %0d row_fire expected %b actual %b", cyc, ub_en_d2, row_fire);
                fail_msg;
            end
            ub_en_d2 <= ub_en_d1;
            ub_en_d1 <= ub_en;
            if (cmd_valid && cmd_ready) n_acc_cmds = n_acc_cmds + 1;
            if (weight_stall) n_wstall = n_wstall + 1;
            if (row_fire) begin
                n_fire = n_fire + 1;
                run = run + 1;
                if (run > max_run) max_run = run;
            end else run = 0;
            if (ub_en) begin
                if (n_issued >= n_rows || ub_addr !== e_ub[n_issued]) begin
                    $display("FAIL: cycle %0d UB read %0d expected address %0d actual %0d", cyc,
                             n_issued, n_issued < n_rows ? e_ub[n_issued] : -1, ub_addr);
                    fail_msg;
                end
                e_cyc[n_issued] = cyc;
                if (e_last[n_issued]) n_full = n_full + 1;
                n_issued = n_issued + 1;
            end
            if (done && !acc_en) begin
                $display("FAIL: cycle %0d done without acc_en", cyc);
                fail_msg;
            end
            if (!acc_en && acc_data !== {32 * N{1'b0}}) begin
                $display("FAIL: cycle %0d acc_data %h without acc_en (idle slots must carry zeros)",
                         cyc, acc_data);
                fail_msg;
            end
            if (acc_en) begin
                if (n_written >= n_issued) begin
                    $display("FAIL: cycle %0d ACC write %0d before its UB read", cyc, n_written);
                    fail_msg;
                end else if (acc_addr !== e_acc[n_written] || acc_accumulate !== e_accum[n_written] ||
                     acc_bf16 !== e_bf[n_written] || done !== e_last[n_written] ||
                     cyc - e_cyc[n_written] != LAT) begin
                    $write(
                        "FAIL: cycle %0d ACC write %0d expected addr %0d acc %b done %b latency %0d,",
                        cyc, n_written, e_acc[n_written], e_accum[n_written], e_last[n_written],
                        LAT);
                    $display(" actual addr %0d acc %b done %b latency %0d", acc_addr,
                             acc_accumulate, done, cyc - e_cyc[n_written]);
                    fail_msg;
                end
                n_written = n_written + 1;
            end
            if (done) n_done = n_done + 1;
        end

    // ------------------------------------------------------------------------- driving --
    // Commands are presented at the falling edge; cmd_ready sampled there decides whether the
    // next rising edge takes the command, so the handshake does not depend on event ordering.
    integer n_driven = 0;
    task drive_cmds;
        begin
            @(negedge clk);
            while (n_driven < n_cmds) begin
                repeat (c_gap[n_driven]) @(negedge clk);
                cmd_valid = 1'b1;
                cmd_ub_addr = c_ub[n_driven];
                cmd_acc_addr = c_acc[n_driven];
                cmd_rows = c_rows[n_driven];
                cmd_ub_stride = c_stride[n_driven];
                cmd_acc = c_accf[n_driven];
                cmd_load = c_load[n_driven];
                cmd_unsigned = c_uns[n_driven];
                cmd_bf16 = c_bf[n_driven];
                while (!cmd_ready) @(negedge clk);
                @(negedge clk);
                cmd_valid = 1'b0;
                n_driven  = n_driven + 1;
            end
        end
    endtask

    // push tiles up to `upto`, waiting 0..maxgap cycles before each
    task push_tiles(input integer upto, input integer maxgap);
        integer g;
        begin
            while (wf_tail < upto) begin
                g = maxgap > 0 ? ({$random(seed)} % (maxgap + 1)) : 0;
                repeat (g) @(posedge clk);
                wf_tail <= wf_tail + 1;
                @(posedge clk);
            end
        end
    endtask

    task wait_idle_and_compare(input [8*24-1:0] phase);
        integer a, t;
        begin
            t = 0;
            while ((n_done < n_cmds || busy) && t < 200000) begin
                @(posedge clk);
                t = t + 1;
            end
            @(posedge clk);
            if (t >= 200000) begin
                $display("FAIL: %0s: timeout, %0d of %0d commands done", phase, n_done, n_cmds);
                $finish;
            end
            for (a = 0; a < ACCR; a = a + 1)
            if (acc_mem[a] !== ref_acc[a]) begin
                $display("FAIL: %0s: ACC row %0d expected %h actual %h", phase, a, ref_acc[a],
                         acc_mem[a]);
                fail_msg;
            end
            if (wf_head != n_loads) begin
                $display("FAIL: %0s: %0d tiles popped, expected %0d", phase, wf_head, n_loads);
                fail_msg;
            end
        end
    endtask

    task clear_stats;
        begin
            n_fire = 0;
            max_run = 0;
            run = 0;
            n_wstall = 0;
        end
    endtask

    function integer pick_rows(input integer r);
        case ({r} % 9)
            0: pick_rows = 1;
            1: pick_rows = 2;
            2: pick_rows = N - 1;
            3: pick_rows = N;
            4: pick_rows = N + 1;
            5: pick_rows = 2 * N - 1;
            6: pick_rows = 2 * N;
            7: pick_rows = 3 * N + {$random(seed)} % N;
            default: pick_rows = 1 + {$random(seed)} % (4 * N);
        endcase
    endfunction

    // UB row strides: mostly 0 (consecutive), 1 and small ones, sometimes up to 255.
    function integer pick_stride(input integer r);
        case ({r} % 8)
            0, 1, 2: pick_stride = 0;
            3: pick_stride = 1;
            4: pick_stride = 2;
            5: pick_stride = 128 + {$random(seed)} % 128;
            default: pick_stride = 1 + {$random(seed)} % N;
        endcase
    endfunction

    // throughput: `cnt` back-to-back LOAD commands of `rows` rows, tiles already in the FIFO
    task throughput(input integer cnt, input integer rows, input [8*24-1:0] name);
        integer i, t0;
        begin
            for (i = 0; i < cnt; i = i + 1)
            add_cmd(({$random(seed)} % (UBR - rows)), ({$random(seed)} % (ACCR - rows)), rows,
                    i & 1, 1, $random(seed) & 1, 0, 0);
            wf_tail <= n_loads;
            @(posedge clk);
            clear_stats;
            t0 = cyc;
            drive_cmds;
            wait_idle_and_compare(name);
            $write("INFO: N=%0d %0d LOAD commands x %0d rows: %0d row_fire cycles, ", N, cnt, rows,
                   n_fire);
            $display("longest run %0d, %0d cycles from first command to idle", max_run, cyc - t0);
        end
    endtask

    integer i, r, k, x, ty, rows, st;
    initial begin
        // UB rows: random, plus all -128 (128 unsigned), all 127, all -1 (255 unsigned); bf16
        for (i = 0; i < UBR; i = i + 1) begin
            ty = $random(seed) & 7;
            for (k = 0; k < N; k = k + 1) begin
                x = $random(seed);
                ub_mem[i][k*8+:8] = ty == 0 ? 8'h80 : ty == 1 ? 8'h7f : ty == 2 ? 8'hff : x[7:0];
            end
            if (ty >= 5)
                for (k = 0; k < N / 2; k = k + 1) ub_mem[i][k*16+:16] = tb_bf16($random(seed));
        end
        // tiles: random, plus all -128, all 127, checkerboard -128/127 (int8 cells: sign-extended);
        // bf16 ones
        for (i = 0; i < MAXT; i = i + 1) begin
            ty = $random(seed) & 7;
            for (r = 0; r < N; r = r + 1)
            for (k = 0; k < N; k = k + 1) begin
                x = $random(seed);
                tiles[i*N+r][k*16+:16] = ty == 0 ? 16'hff80 : ty == 1 ? 16'h007f :
                    ty == 2 ? (((r + k) & 1) ? 16'hff80 : 16'h007f) :
                    ty >= 5 ? tb_bf16(x) : {{8{x[7]}}, x[7:0]};
            end
        end
        for (i = 0; i < N * N; i = i + 1) cur_w[i] = 0;  // both banks are zero after reset
        for (i = 0; i < ACCR; i = i + 1) begin
            for (k = 0; k < N; k = k + 1) acc_mem[i][k*32+:32] = $random(seed);
            ref_acc[i] = acc_mem[i];
        end

        rst = 1'b1;
        repeat (2) @(posedge clk);
        rst <= 1'b0;
        @(posedge clk);

        // after reset both banks are zero: a plain MATMUL writes zeros (or leaves ACC unchanged)
        add_cmd(3, 10, N, 0, 0, 0, 0, 0);
        add_cmd(40, 30, 2, 1, 0, 1, 3, 0);
        drive_cmds;
        wait_idle_and_compare("after reset");

        // LOAD with the FIFO empty: the command waits (weight_stall) until the tile arrives
        clear_stats;
        add_cmd(100, 0, N, 0, 1, 0, 0, 0);
        add_cmd(7, 50, 1, 1, 0, 0, 0, 0);
        drive_cmds;
        repeat (3 * N) @(posedge clk);
        wf_tail <= wf_tail + 1;
        wait_idle_and_compare("empty FIFO");
        if (n_wstall < 3 * N) begin
            $display("FAIL: empty FIFO: weight_stall high for %0d cycles, expected at least %0d",
                     n_wstall, 3 * N);
            fail_msg;
        end
        $display(
            "INFO: N=%0d LOAD with the tile arriving %0d cycles late: weight_stall for %0d cycles",
            N, 3 * N, n_wstall);

        // random commands, tiles arriving at random times, random UB row strides, int8 or bf16
        // (a bf16 one reads UB row pairs: (rows - 1) * step + 2 rows)
        for (i = 0; i < 40; i = i + 1) begin
            rows = pick_rows($random(seed));
            st   = pick_stride($random(seed));
            ty   = ($random(seed) & 1);
            while ((rows - 1) * (st == 0 ? 1 : st) + 1 + ty > UBR) rows = 1 + rows / 2;
            add_cmd_t({$random(seed)} % (UBR - (rows - 1) * (st == 0 ? 1 : st) - ty), {$random(seed
                      )} % (ACCR - rows + 1), rows, $random(seed) & 1, ($random(seed) & 3) != 0,
                      !ty && ($random(seed) % 3) == 0, st, ($random(seed) & 3) == 0 ? 1 + {$random(
                      seed)} % 6 : 0, ty);
        end
        fork
            drive_cmds;
            push_tiles(n_loads, 2 * N);
        join
        wait_idle_and_compare("random");

        // back-to-back LOAD commands of 2N-1 rows stream without a bubble
        throughput(2, 2 * N - 1, "2 x (2N-1)");
        if (max_run != 2 * (2 * N - 1) || n_fire != max_run) begin
            $display("FAIL: 2 x (2N-1): longest row_fire run %0d of %0d, expected %0d", max_run,
                     n_fire, 2 * (2 * N - 1));
            fail_msg;
        end
        throughput(6, 2 * N - 1, "6 x (2N-1)");
        if (max_run != 6 * (2 * N - 1) || n_fire != max_run) begin
            $display("FAIL: 6 x (2N-1): longest row_fire run %0d of %0d, expected %0d", max_run,
                     n_fire, 6 * (2 * N - 1));
            fail_msg;
        end
        // int8 and bf16 commands alternating stream without a bubble too
        for (i = 0; i < 6; i = i + 1)
        add_cmd_t(({$random(seed)} % (UBR - 2 * (2 * N - 1) - 1)), ({$random(seed
                  )} % (ACCR - 2 * N)), 2 * N - 1, i & 1, 1, 0, 2, 0, i & 1);
        wf_tail <= n_loads;
        @(posedge clk);
        clear_stats;
        drive_cmds;
        wait_idle_and_compare("int8/bf16 alternating");
        if (max_run != 6 * (2 * N - 1) || n_fire != max_run) begin
            $display("FAIL: int8/bf16 alternating: longest row_fire run %0d of %0d, expected %0d",
                     max_run, n_fire, 6 * (2 * N - 1));
            fail_msg;
        end
        // shorter commands must wait for the weight shift (and still be right)
        throughput(6, 2 * N - 2, "6 x (2N-2)");
        throughput(6, N, "6 x N");

        // a convolution's stream: one LOAD, then commands of 5 rows, UB stride 2, on its tile
        for (i = 0; i < 12; i = i + 1) add_cmd(11 + 3 * i, 7 * i, 5, i > 0, i == 0, 0, 2, 0);
        wf_tail <= n_loads;
        @(posedge clk);
        clear_stats;
        drive_cmds;
        wait_idle_and_compare("stride 2 stream");
        if (max_run != 12 * 5 || n_fire != max_run) begin
            $display("FAIL: stride 2 stream: longest row_fire run %0d of %0d, expected %0d",
                     max_run, n_fire, 12 * 5);
            fail_msg;
        end

        // interlock stress: back-to-back short commands, mostly LOAD, tiles ready
        for (i = 0; i < 24; i = i + 1) begin
            rows = ({$random(seed)} % 3 == 0) ? 1 + {$random(seed)} % 2 : pick_rows($random(seed));
            add_cmd({$random(seed)} % (UBR - rows + 1), {$random(seed)} % (ACCR - rows + 1), rows,
                    $random(seed) & 1, ($random(seed) % 5) != 0, $random(seed) & 1, 0, 0);
        end
        wf_tail <= n_loads;
        drive_cmds;
        wait_idle_and_compare("short commands");

        if (n_done != n_cmds || n_written != n_rows || n_issued != n_rows) begin
            $display(
                "FAIL: totals: done %0d of %0d commands, %0d UB reads, %0d ACC writes, %0d rows",
                n_done, n_cmds, n_issued, n_written, n_rows);
            fail_msg;
        end
        if (errors == 0) $display("PASS");
        $finish;
    end
endmodule
