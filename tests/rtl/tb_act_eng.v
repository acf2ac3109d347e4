`default_nettype none
// tpu_act_eng with a behavioural ACC (registered read) and a UB write monitor, against a
// reference of docs/isa.md's activation arithmetic. Random ACTIVATE commands (rows 1..40, random
// UB/ACC rows, UB row steps 0, 1, 2, 3, 255 and random ones (ISA 1.2: ACTIVATE's len), BIAS/RELU
// flags, parameters changed while idle), half of them with POOL (windows
// PH x PW up to 4 x 4 and sometimes 15 x 1 or 1 x 15, STEP 1..8, PITCH 0..20; garbage in the
// window field without POOL), some offered while the previous one runs, some after idle gaps,
// plus directed edge cases: identity requantization, shift 63, the 64-bit wrap of p + 2^62 when
// x = mult = -2^31, saturation both ways, bias wrap-around.
// Checked every cycle: cmd_ready is low exactly while a command is in flight, except in the cycle
// of its done (the next command is accepted then, and at least 10 must be); ACC reads go to
// b + i*STEP + k*PITCH + j for output row i, window row k, column j (j fastest; b, b+1, ...
// without POOL), one per cycle, starting the cycle after acceptance; row i is written to
// UB[a + i*step] (step 0 meaning 1), with and without POOL,
// exactly 4 cycles after its window's last read (one row per PH*PW cycles sustained) with the
// reference value, requant(max over the window of relu(acc + bias)); done pulses with the last
// write and never otherwise. A third of the commands are BF16 (mixed with int8 ones back to
// back), reading an fp32 ACC of tb_bf16.vh's edge values: each output row is written as a row
// pair (ub_pair) with the rule of docs/isa.md "Floating point (bf16)" (rtl/tpu_fp.vh): the fp32
// maximum over the window of relu(acc + bias), rounded to bf16.
module tb_act_eng;
    `include "tpu_fp.vh"
    `include "tb_bf16.vh"
    parameter N = 8;
    localparam ACC_ROWS = 128;
    localparam UB_ROWS = 1024;  // room for a few rows 255 apart
    localparam CMDS = 120;

    reg clk = 1'b0;
    reg rst = 1'b1;
    reg cmd_valid = 1'b0;
    wire cmd_ready;
    reg [15:0] cmd_rows = 16'd0;
    reg [19:0] cmd_ub_addr = 20'd0;
    reg [7:0] cmd_ub_step = 8'd0;
    reg [19:0] cmd_acc_addr = 20'd0;
    reg cmd_bias = 1'b0;
    reg cmd_relu = 1'b0;
    reg cmd_pool = 1'b0;
    reg cmd_bf16 = 1'b0;
    reg [31:0] cmd_window = 32'd0;
    wire done;
    wire acc_en;
    wire [19:0] acc_addr;
    reg [32*N-1:0] acc_data;
    wire ub_en;
    wire [19:0] ub_addr;
    wire ub_pair;
    wire [16*N-1:0] ub_data;
    reg [32*N-1:0] bias = {32 * N{1'b0}};
    reg [32*N-1:0] mult = {32 * N{1'b0}};
    reg [6*N-1:0] shift = {6 * N{1'b0}};

    tpu_act_eng #(
        .N(N)
    ) dut (
        .clk(clk),
        .rst(rst),
        .cmd_valid(cmd_valid),
        .cmd_ready(cmd_ready),
        .cmd_rows(cmd_rows),
        .cmd_ub_addr(cmd_ub_addr),
        .cmd_ub_step(cmd_ub_step),
        .cmd_acc_addr(cmd_acc_addr),
        .cmd_bias(cmd_bias),
        .cmd_relu(cmd_relu),
        .cmd_pool(cmd_pool),
        .cmd_bf16(cmd_bf16),
        .cmd_window(cmd_window),
        .done(done),
        .acc_en(acc_en),
        .acc_addr(acc_addr),
        .acc_data(acc_data),
        .ub_en(ub_en),
        .ub_addr(ub_addr),
        .ub_pair(ub_pair),
        .ub_data(ub_data),
        .bias(bias),
        .mult(mult),
        .shift(shift)
    );

    reg [32*N-1:0] accm[0:ACC_ROWS-1];
    reg [32*N-1:0] accf[0:ACC_ROWS-1];  // what a BF16 command reads: fp32
    reg c_bf16 = 1'b0;  // the command in flight is BF16

    always #5 clk = ~clk;
    always @(posedge clk) if (acc_en) acc_data <= c_bf16 ? accf[acc_addr] : accm[acc_addr];

    // docs/isa.md activation arithmetic, one column: x = relu(acc + bias), then int8.
    function [31:0] ref_x(input [31:0] acc, input [31:0] b, input fb, input fr);
        begin
            ref_x = acc + (fb ? b : 32'd0);
            if (fr && ref_x[31]) ref_x = 32'd0;
        end
    endfunction

    function [7:0] ref_q(input [31:0] x, input [31:0] m, input [5:0] s);
        reg signed [63:0] p;
        reg signed [63:0] q;
        reg signed [63:0] half;
        begin
            p = $signed(x) * $signed(m);
            if (s == 6'd0) begin
                q = p;
            end else begin
                half = 64'sd1 <<< (s - 6'd1);
                q = (p + (p < 0 ? half - 64'sd1 : half)) >>> s;
            end
            if (q > 127) ref_q = 8'h7f;
            else if (q < -128) ref_q = 8'h80;
            else ref_q = q[7:0];
        end
    endfunction

    function [31:0] edge_word(input integer pick);
        case (pick)
            0: edge_word = 32'h80000000;
            1: edge_word = 32'h7fffffff;
            2: edge_word = 32'hffffffff;
            3: edge_word = 32'd0;
            4: edge_word = 32'd1;
            default: edge_word = $urandom;
        endcase
    endfunction

    // Model state.
    integer        edges = 0;  // rising edges since time 0
    reg            active = 1'b0;  // a command is in flight
    integer        accept_edge;  // the edge at which it was accepted
    integer        reads;  // ACC rows it has read
    integer        writes;  // UB rows it has written
    reg     [15:0] c_rows;
    reg     [19:0] c_ub;
    integer        c_ustep;  // UB rows between output rows, 1..255
    integer        stepped = 0;  // commands done with a UB step > 1
    reg     [19:0] c_acc;
    reg            c_bias;
    reg            c_relu;
    reg            c_pool;
    integer c_ph, c_pw, c_step, c_pitch;  // the window (1, 1, 1, 0 without POOL)
    integer c_area;  // c_ph * c_pw: reads per output row
    integer o_ph, o_pw, o_step, o_pitch;  // the window of the command offered
    integer wi, wk, wj;
    reg     [    31:0] wx;
    reg     [    31:0] wmax;
    integer            pooled = 0;  // POOL commands done
    reg     [16*N-1:0] exp_row;
    integer            bf16_cmds = 0;  // BF16 commands done
    integer            cmds = 0;
    integer            rows_total = 0;
    integer            c;
    integer            r;
    integer            phase;
    integer            offered = 0;  // commands offered so far
    integer            overlapped = 0;  // commands accepted in the cycle the previous one finished
    reg                exp_done;
    reg                took = 1'b0;

    always @(posedge clk) edges <= edges + 1;

    task set_params(input integer mode);
        begin
            for (c = 0; c < N; c = c + 1) begin
                case (mode)
                    0: begin  // identity
                        bias[32*c+:32] = $urandom % 64 - 32;
                        mult[32*c+:32] = 32'd1;
                        shift[6*c+:6]  = 6'd0;
                    end
                    1: begin  // realistic requantization
                        bias[32*c+:32] = $urandom % 4096 - 2048;
                        mult[32*c+:32] = $urandom % 65536;
                        shift[6*c+:6]  = 14 + $urandom % 12;
                    end
                    2: begin  // extremes
                        bias[32*c+:32] = edge_word($urandom % 8);
                        mult[32*c+:32] = edge_word($urandom % 8);
                        shift[6*c+:6]  = ($urandom % 2) ? 6'd63 : $urandom;
                    end
                    default: begin  // x = mult = -2^31, s = 63: p + 2^62 wraps
                        bias[32*c+:32] = 32'd0;
                        mult[32*c+:32] = 32'h80000000;
                        shift[6*c+:6]  = 6'd63 - c % 3;
                    end
                endcase
            end
        end
    endtask

    initial begin
        for (r = 0; r < ACC_ROWS; r = r + 1)
        for (c = 0; c < N; c = c + 1) begin
            accm[r][32*c+:32] = r < 4 ?
                32'h80000000 : (r % 5 == 0 ? edge_word($urandom % 6) : $urandom % 200000 - 100000);
            accf[r][32*c+:32] = tb_fp32($urandom);
        end
    end

    // Everything is sampled and driven at the falling edge; a handshake seen here happens at the
    // next rising edge.
    always @(negedge clk) begin
        exp_done = 1'b0;
        if (!rst) begin
            if (acc_en !== (active && reads < c_rows * c_area)) begin
                $display("FAIL: act_eng edge %0d: acc_en expected %0d, actual %b", edges,
                         active && reads < c_rows * c_area, acc_en);
                $finish;
            end
            if (acc_en) begin
                wi = reads / c_area;
                wk = reads % c_area / c_pw;
                wj = reads % c_pw;
                if (acc_addr !== c_acc + wi * c_step + wk * c_pitch + wj || edges != accept_edge + reads) begin
                    $display(
                        "FAIL: act_eng edge %0d: ACC read %0d of command %0d: expected row %0d at edge %0d, actual row %0d",
                        edges, reads, cmds, c_acc + wi * c_step + wk * c_pitch + wj,
                        accept_edge + reads, acc_addr);
                    $finish;
                end
                reads = reads + 1;
            end
            if (ub_en) begin
                for (c = 0; c < N; c = c + 1) begin
                    for (wk = 0; wk < c_ph; wk = wk + 1)
                    for (wj = 0; wj < c_pw; wj = wj + 1) begin
                        r = c_acc + writes * c_step + wk * c_pitch + wj;
                        if (c_bf16) begin
                            wx = c_bias ? fp32_add(accf[r][32*c+:32], bias[32*c+:32]) :
                                accf[r][32*c+:32];
                            if (c_relu) wx = fp32_relu(wx);
                            wmax = wk == 0 && wj == 0 ? wx : fp32_max(wmax, wx);
                        end else begin
                            wx = ref_x(accm[r][32*c+:32], bias[32*c+:32], c_bias, c_relu);
                            if ((wk == 0 && wj == 0) || $signed(wx) > $signed(wmax)) wmax = wx;
                        end
                    end
                    if (c_bf16) exp_row[16*c+:16] = fp32_to_bf16(wmax);
                    else exp_row[8*c+:8] = ref_q(wmax, mult[32*c+:32], shift[6*c+:6]);
                end
                if (!active || ub_addr !== c_ub + writes * c_ustep || ub_pair !== c_bf16 ||
                    ub_data[8*N-1:0] !== exp_row[8*N-1:0] || (c_bf16 && ub_data !== exp_row)
                    || edges != accept_edge + 3 + (writes + 1) * c_area) begin
                    $display(
                        "FAIL: act_eng edge %0d: UB write %0d of command %0d (rows %0d UB step %0d bias %0d relu %0d pool %0d bf16 %0d window %0dx%0d step %0d pitch %0d): expected row %0d = %h at edge %0d, actual row %0d = %h (pair %b)",
                        edges, writes, cmds, c_rows, c_ustep, c_bias, c_relu, c_pool, c_bf16, c_ph,
                        c_pw, c_step, c_pitch, c_ub + writes * c_ustep, exp_row,
                        accept_edge + 3 + (writes + 1) * c_area, ub_addr, ub_data, ub_pair);
                    $finish;
                end
                writes   = writes + 1;
                exp_done = writes == c_rows;
            end
            if (done !== exp_done) begin
                $display(
                    "FAIL: act_eng edge %0d: done expected %0d, actual %b (command %0d, %0d of %0d rows written)",
                    edges, exp_done, done, cmds, writes, c_rows);
                $finish;
            end
            // The next command is accepted in the cycle the current one's last row is written.
            if (cmd_ready !== (!active || exp_done)) begin
                $display("FAIL: act_eng edge %0d: cmd_ready expected %0d, actual %b", edges,
                         !active || exp_done, cmd_ready);
                $finish;
            end
        end
        if (exp_done) begin
            active = 1'b0;
            cmds = cmds + 1;
            pooled = pooled + c_pool;
            bf16_cmds = bf16_cmds + c_bf16;
            if (c_ustep > 1) stepped = stepped + 1;
            rows_total = rows_total + c_rows;
            if (cmds == CMDS) begin
                if (overlapped < 10 || pooled < CMDS / 4 || stepped < CMDS / 4 ||
                    bf16_cmds < CMDS / 4) begin
                    $display(
                        "FAIL: act_eng: only %0d commands accepted back to back, %0d pooled, %0d with a UB step, %0d BF16",
                        overlapped, pooled, stepped, bf16_cmds);
                    $finish;
                end
                $display(
                    "act_eng: %0d commands (%0d with POOL, %0d with a UB step > 1, %0d BF16), %0d rows, %0d accepted in the previous one's done cycle",
                    cmds, pooled, stepped, bf16_cmds, rows_total, overlapped);
                $display("PASS");
                $finish;
            end
        end
        rst = edges < 2;
        if (took) cmd_valid = 1'b0;  // accepted at the last rising edge
        took  = 1'b0;
        // Offer the next command: back to back (while the current one runs) in even phases, after
        // idle gaps in odd ones.
        phase = (offered / 10) % 2;
        if (!rst && !cmd_valid && offered < CMDS && (phase == 0 ? 1 : (!active && ($urandom % 4) == 0))) begin
            cmd_rows = offered < 4 ? offered + 1 : 1 + $urandom % 40;
            // UB row step: 0 and 1 (consecutive), 2, 3, 255 and random, cycling through both
            // POOL and plain commands; rows halved until the output rows fit.
            case (offered % 6)
                0: cmd_ub_step = 8'd0;
                1: cmd_ub_step = 8'd1;
                2: cmd_ub_step = 8'd2;
                3: cmd_ub_step = 8'd3;
                4: cmd_ub_step = 8'd255;
                default: cmd_ub_step = $urandom;
            endcase
            while ((cmd_rows - 1) * (cmd_ub_step == 0 ? 1 : cmd_ub_step) + 1 + cmd_bf16 > UB_ROWS)
            cmd_rows = 1 + cmd_rows / 2;
            cmd_bias = $urandom;
            cmd_relu = $urandom;
            cmd_bf16 = $urandom % 3 == 0;
            // POOL in half the commands: a window whose footprint fits the accumulators.
            cmd_pool = offered >= 8 && $urandom % 2;
            cmd_window = $urandom;
            o_step = 1;
            o_pitch = 0;
            o_ph = 1;
            o_pw = 1;
            if (cmd_pool) begin
                case ($urandom % 8)
                    0: begin
                        o_ph = 15;
                        o_pw = 1;
                    end
                    1: begin
                        o_ph = 1;
                        o_pw = 15;
                    end
                    default: begin
                        o_ph = 1 + $urandom % 4;
                        o_pw = 1 + $urandom % 4;
                    end
                endcase
                o_step  = 1 + $urandom % 8;
                o_pitch = $urandom % 21;
                while ((cmd_rows - 1) * o_step + (o_ph - 1) * o_pitch + o_pw > ACC_ROWS) begin
                    cmd_rows = 1 + cmd_rows / 2;
                    o_pitch  = o_pitch / 2;
                end
                cmd_window = {o_pitch[15:0], o_step[7:0], o_pw[3:0], o_ph[3:0]};
            end
            cmd_ub_addr = $urandom % (UB_ROWS - (cmd_rows - 1) * (cmd_ub_step == 0 ? 1 : cmd_ub_step) - cmd_bf16);
            cmd_acc_addr = $urandom % (ACC_ROWS - ((cmd_rows - 1) * o_step + (o_ph - 1) * o_pitch + o_pw) + 1);
            // Parameters only change while nothing is in flight.
            if (!active) begin
                if (offered % 7 == 0) begin
                    cmd_acc_addr = 0;
                    cmd_bias = 1'b0;
                    cmd_relu = 1'b0;
                end
                set_params(offered % 7 == 0 ? 3 : $urandom % 3);
                // An fp32 bias for a BF16 command (the int8 ones' read as fp32 are tiny).
                if (cmd_bf16) for (c = 0; c < N; c = c + 1) bias[32*c+:32] = tb_fp32($urandom);
            end
            cmd_valid = 1'b1;
            offered   = offered + 1;
        end
        if (cmd_valid && cmd_ready) begin
            if (exp_done) overlapped = overlapped + 1;
            active = 1'b1;
            accept_edge = edges + 1;
            reads = 0;
            writes = 0;
            c_rows = cmd_rows;
            c_ub = cmd_ub_addr;
            c_ustep = cmd_ub_step == 0 ? 1 : cmd_ub_step;
            c_acc = cmd_acc_addr;
            c_bias = cmd_bias;
            c_relu = cmd_relu;
            c_pool = cmd_pool;
            c_bf16 = cmd_bf16;
            c_ph = cmd_pool ? cmd_window[3:0] : 1;
            c_pw = cmd_pool ? cmd_window[7:4] : 1;
            c_step = cmd_pool ? cmd_window[15:8] : 1;
            c_pitch = cmd_pool ? cmd_window[31:16] : 0;
            c_area = c_ph * c_pw;
            took = 1'b1;
        end
    end

    initial begin
        #2000000;
        $display("FAIL: act_eng timeout after %0d commands", cmds);
        $finish;
    end
endmodule
