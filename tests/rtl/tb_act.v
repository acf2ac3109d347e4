`default_nettype none
// tpu_act against a reference written here with 128-bit integers: the exact product, the rounding
// offset added exactly and then wrapped to 64 bits (the ISA's 64-bit wrapping add), and a
// flooring division instead of a shift. The reference is itself checked against hand-computed
// values first: exact ties both signs, shift 0, 1, 62 and 63, x and mult at INT32_MIN/MAX
// (including the one case where the 64-bit add wraps), saturation both ways, bias wrap, ReLU.
// Each of those cases then runs through the DUT, followed by random batches: per column bias,
// mult and shift drawn from edge values and random ones (held while the batch is in flight, as
// the contract requires), rows with random lanes, BIAS and RELU flags and tags, and batches of
// exact ties. Rows come in pooling windows of 1 to 6 (in_first on the first, in_last on the
// last; stalls and idle cycles inside a window too), the maximum checked on hand-computed
// windows first (signed, after the bias wraps and ReLU). Every cycle stall, in_valid and the
// inputs are random (a stalled or invalid input must be ignored) and the outputs are compared
// with a model of a 3-stage pipeline that holds while stalled, whose first stage keeps the
// window's maximum and passes on only its last row: out_valid always, data and tag when valid.
// A reset (with stall high) must flush the pipeline.
// bf16 rows (in_bf16) against the rule of docs/isa.md "Floating point (bf16)" (rtl/tpu_fp.vh's
// functions): hand-computed cases first (cancellation to +0, inf - inf, the largest finite value
// rounding to inf, ties to even, subnormals, ReLU of -0 and NaN, the raw ACC bits without bias
// and ReLU, fp32 windows with -0/+0 and NaN), then a third of the random batches in fp32 with
// tb_bf16.vh's edge values, int8 and bf16 batches back to back.
module tb_act;
    `include "tpu_fp.vh"
    `include "tb_bf16.vh"
    parameter N = 8;
    localparam TAG_W = 21;
    localparam BATCHES = 500;
    localparam [31:0] MIN = 32'h80000000;
    localparam [31:0] MAX = 32'h7fffffff;

    reg clk = 1'b0;
    always #5 clk = ~clk;

    reg rst = 1'b1;
    reg stall = 1'b0;
    reg in_valid = 1'b0;
    reg in_first = 1'b0;
    reg in_last = 1'b0;
    reg [32*N-1:0] in_data = {32 * N{1'b0}};
    reg in_bias = 1'b0;
    reg in_relu = 1'b0;
    reg in_bf16 = 1'b0;
    reg [TAG_W-1:0] in_tag = {TAG_W{1'b0}};
    reg [32*N-1:0] bias = {32 * N{1'b0}};
    reg [32*N-1:0] mult = {32 * N{1'b0}};
    reg [6*N-1:0] shift = {6 * N{1'b0}};
    wire out_valid;
    wire [32*N-1:0] out_i32;
    wire [16*N-1:0] out_ub;
    wire out_bf16;
    wire [TAG_W-1:0] out_tag;

    tpu_act #(
        .N(N),
        .TAG_W(TAG_W)
    ) dut (
        .clk(clk),
        .rst(rst),
        .stall(stall),
        .in_valid(in_valid),
        .in_first(in_first),
        .in_last(in_last),
        .in_data(in_data),
        .in_bias(in_bias),
        .in_relu(in_relu),
        .in_bf16(in_bf16),
        .in_tag(in_tag),
        .bias(bias),
        .mult(mult),
        .shift(shift),
        .out_valid(out_valid),
        .out_i32(out_i32),
        .out_ub(out_ub),
        .out_bf16(out_bf16),
        .out_tag(out_tag)
    );

    // ------------------------------------------------------------------ reference --
    function [31:0] ref_x(input [31:0] acc, input [31:0] b, input use_bias, input relu);
        reg signed [63:0] sum;
        begin
            sum = $signed(acc) + (use_bias ? $signed(b) : 64'sd0);
            // 32-bit wrap: keep the low word, reinterpreted as signed.
            sum = $signed(sum[31:0]);
            if (relu && sum < 0) sum = 0;
            ref_x = sum[31:0];
        end
    endfunction

    function [7:0] ref_i8(input [31:0] x, input [31:0] m, input [5:0] s);
        reg signed [127:0] p;
        reg signed [127:0] t;
        reg signed [127:0] d;
        reg signed [127:0] q;
        begin
            p = $signed(x) * $signed(m);
            if (s == 0) begin
                q = p;
            end else begin
                d = 128'sd1 << s;
                t = p + (p < 0 ? d / 2 - 1 : d / 2);
                t = $signed(t[63:0]);
                q = t / d;
                if (t < 0 && q * d != t) q = q - 1;
            end
            if (q > 127) q = 127;
            if (q < -128) q = -128;
            ref_i8 = q[7:0];
        end
    endfunction

    // The fp32 x: without bias and ReLU, the ACC bits as they are.
    function [31:0] ref_x_fp(input [31:0] acc, input [31:0] b, input use_bias, input relu);
        reg [31:0] sum;
        begin
            sum = use_bias ? fp32_add(acc, b) : acc;
            ref_x_fp = relu ? fp32_relu(sum) : sum;
        end
    endfunction

    // ------------------------------------------------------- pipeline model, checks --
    reg m_valid[0:2];
    reg [32*N-1:0] m_i32[0:2];
    reg [16*N-1:0] m_ub[0:2];  // int8 rows: the low half
    reg m_bf16[0:2];
    reg [TAG_W-1:0] m_tag[0:2];
    reg [32*N-1:0] m_max;  // the window's maximum so far, per column
    reg [31:0] x;
    reg bf16 = 1'b0;  // the type of the rows step sends
    integer cycle = 0;
    integer accepted;

    // One clock cycle: at the falling edge compare the outputs with the model's last stage,
    // apply the inputs for the next rising edge and advance the model as the DUT will. fi and
    // la: the row is the first / last of its window.
    task step(input v, input [32*N-1:0] d, input ub, input ur, input [TAG_W-1:0] tag, input st,
              input rs, input fi, input la);
        integer c;
        integer i;
        begin
            @(negedge clk);
            if (!rst) begin
                if (out_valid !== m_valid[2]) begin
                    $display("FAIL: act cycle %0d: out_valid expected %b, actual %b", cycle,
                             m_valid[2], out_valid);
                    $finish;
                end
                if (m_valid[2] && (out_i32 !== m_i32[2] || out_tag !== m_tag[2] ||
                    out_bf16 !== m_bf16[2] || out_ub[8*N-1:0] !== m_ub[2][8*N-1:0] ||
                    (m_bf16[2] && out_ub !== m_ub[2]))) begin
                    $display(
                        "FAIL: act cycle %0d: out_i32/out_ub/out_bf16/out_tag expected %h/%h/%b/%h, actual %h/%h/%b/%h",
                        cycle, m_i32[2], m_ub[2], m_bf16[2], m_tag[2], out_i32, out_ub, out_bf16,
                        out_tag);
                    $finish;
                end
            end
            in_valid = v;
            in_first = fi;
            in_last = la;
            in_data = d;
            in_bias = ub;
            in_relu = ur;
            in_bf16 = bf16;
            in_tag = tag;
            stall = st;
            rst = rs;
            accepted = v && !st && !rs;
            if (rs) begin
                for (i = 0; i < 3; i = i + 1) m_valid[i] = 1'b0;
            end else if (!st) begin
                for (i = 2; i > 0; i = i - 1) begin
                    m_valid[i] = m_valid[i-1];
                    m_i32[i] = m_i32[i-1];
                    m_ub[i] = m_ub[i-1];
                    m_bf16[i] = m_bf16[i-1];
                    m_tag[i] = m_tag[i-1];
                end
                m_valid[0] = v && la;
                if (v) begin
                    m_tag[0]  = tag;
                    m_bf16[0] = bf16;
                end
                for (c = 0; c < N && v && bf16; c = c + 1) begin
                    x = ref_x_fp(d[32*c+:32], bias[32*c+:32], ub, ur);
                    m_max[32*c+:32] = fi ? x : fp32_max(m_max[32*c+:32], x);
                    m_i32[0][32*c+:32] = m_max[32*c+:32];
                    m_ub[0][16*c+:16] = fp32_to_bf16(m_max[32*c+:32]);
                end
                for (c = 0; c < N && v && !bf16; c = c + 1) begin
                    x = ref_x(d[32*c+:32], bias[32*c+:32], ub, ur);
                    if (fi || $signed(x) > $signed(m_max[32*c+:32])) m_max[32*c+:32] = x;
                    m_i32[0][32*c+:32] = m_max[32*c+:32];
                    m_ub[0][8*c+:8] = ref_i8(m_max[32*c+:32], mult[32*c+:32], shift[6*c+:6]);
                end
            end
            cycle = cycle + 1;
        end
    endtask

    // An idle cycle: in_valid low, garbage inputs, random stall.
    task idle;
        integer k;
        reg [32*N-1:0] garbage;
        begin
            for (k = 0; k < N; k = k + 1) garbage[32*k+:32] = $urandom;
            step(1'b0, garbage, $urandom % 2, $urandom % 2, $urandom, $urandom % 10 < 3, 1'b0,
                 $urandom % 2, $urandom % 2);
        end
    endtask

    // Offer a row of a window until it is accepted, with a random stall every cycle; returns
    // after the accepting cycle's inputs are applied.
    task send_w(input [32*N-1:0] d, input ub, input ur, input [TAG_W-1:0] tag, input fi, input la);
        begin
            accepted = 0;
            while (!accepted) step(1'b1, d, ub, ur, tag, $urandom % 10 < 3, 1'b0, fi, la);
        end
    endtask

    // A row that is its own window.
    task send(input [32*N-1:0] d, input ub, input ur, input [TAG_W-1:0] tag);
        send_w(d, ub, ur, tag, 1'b1, 1'b1);
    endtask

    task drain;
        while (m_valid[0] || m_valid[1] || m_valid[2]) idle;
    endtask

    integer i;

    // ------------------------------------------------------------- directed cases --
    integer directed_count = 0;

    task directed(input [31:0] acc, input [31:0] b, input ub, input ur, input [31:0] m,
                  input [5:0] s, input [31:0] exp_i32, input [7:0] exp_i8);
        reg [31:0] x;
        reg [7:0] q;
        reg [TAG_W-1:0] tag;
        begin
            x = ref_x(acc, b, ub, ur);
            q = ref_i8(x, m, s);
            if (x !== exp_i32 || q !== exp_i8) begin
                $display(
                    "FAIL: act reference, case %0d (acc %h bias %h use %b relu %b mult %h shift %0d): expected %h/%h, reference gives %h/%h",
                    directed_count, acc, b, ub, ur, m, s, exp_i32, exp_i8, x, q);
                $finish;
            end
            bias  = {N{b}};
            mult  = {N{m}};
            shift = {N{s}};
            tag   = directed_count;
            send({N{acc}}, ub, ur, tag);
            // The pipeline model checks the DUT; also compare with the hand-computed values
            // once the row has reached the outputs (just after the next rising edge).
            while (!(m_valid[2] && m_tag[2] == tag)) idle;
            @(posedge clk) #1;
            if (out_i32 !== {N{exp_i32}} || out_ub[8*N-1:0] !== {N{exp_i8}}) begin
                $display("FAIL: act case %0d: expected %h/%h in every column, actual %h/%h",
                         directed_count, exp_i32, exp_i8, out_i32, out_ub[8*N-1:0]);
                $finish;
            end
            drain;
            directed_count = directed_count + 1;
        end
    endtask

    // A window of three rows (each the same in every column) whose maximum after bias and ReLU
    // must be exp_max, the int8 result through mult 1, shift 0.
    task directed_window(input [31:0] a0, input [31:0] a1, input [31:0] a2, input [31:0] b,
                         input ub, input ur, input [31:0] exp_max);
        reg [TAG_W-1:0] tag;
        begin
            bias  = {N{b}};
            mult  = {N{32'd1}};
            shift = {N{6'd0}};
            tag   = directed_count;
            send_w({N{a0}}, ub, ur, tag, 1'b1, 1'b0);
            idle;
            send_w({N{a1}}, ub, ur, tag, 1'b0, 1'b0);
            send_w({N{a2}}, ub, ur, tag, 1'b0, 1'b1);
            while (!(m_valid[2] && m_tag[2] == tag)) idle;
            @(posedge clk) #1;
            if (out_i32 !== {N{exp_max}}) begin
                $display("FAIL: act window case %0d: expected maximum %h, actual %h",
                         directed_count, exp_max, out_i32);
                $finish;
            end
            drain;
            directed_count = directed_count + 1;
        end
    endtask

    // A bf16 row, the same in every column, through bias and ReLU: x (out_i32) and its bf16.
    task directed_fp(input [31:0] acc, input [31:0] b, input ub, input ur, input [31:0] exp_x,
                     input [15:0] exp_bf16);
        reg [TAG_W-1:0] tag;
        begin
            x = ref_x_fp(acc, b, ub, ur);
            if (x !== exp_x || fp32_to_bf16(x) !== exp_bf16) begin
                $display(
                    "FAIL: act fp32 reference, case %0d (acc %h bias %h use %b relu %b): expected %h/%h, reference gives %h/%h",
                    directed_count, acc, b, ub, ur, exp_x, exp_bf16, x, fp32_to_bf16(x));
                $finish;
            end
            bias = {N{b}};
            tag  = directed_count;
            bf16 = 1'b1;
            send({N{acc}}, ub, ur, tag);
            bf16 = 1'b0;
            while (!(m_valid[2] && m_tag[2] == tag)) idle;
            @(posedge clk) #1;
            if (out_i32 !== {N{exp_x}} || out_ub !== {N{exp_bf16}} || out_bf16 !== 1'b1) begin
                $display("FAIL: act fp32 case %0d: expected %h/%h in every column, actual %h/%h",
                         directed_count, exp_x, exp_bf16, out_i32, out_ub);
                $finish;
            end
            drain;
            directed_count = directed_count + 1;
        end
    endtask

    // A bf16 window of three rows: the fp32 maximum after bias and ReLU, and its bf16.
    task directed_window_fp(input [31:0] a0, input [31:0] a1, input [31:0] a2, input [31:0] b,
                            input ub, input ur, input [31:0] exp_max, input [15:0] exp_bf16);
        reg [TAG_W-1:0] tag;
        begin
            bias = {N{b}};
            tag  = directed_count;
            bf16 = 1'b1;
            send_w({N{a0}}, ub, ur, tag, 1'b1, 1'b0);
            send_w({N{a1}}, ub, ur, tag, 1'b0, 1'b0);
            idle;
            send_w({N{a2}}, ub, ur, tag, 1'b0, 1'b1);
            bf16 = 1'b0;
            while (!(m_valid[2] && m_tag[2] == tag)) idle;
            @(posedge clk) #1;
            if (out_i32 !== {N{exp_max}} || out_ub !== {N{exp_bf16}}) begin
                $display("FAIL: act fp32 window case %0d: expected %h/%h, actual %h/%h",
                         directed_count, exp_max, exp_bf16, out_i32, out_ub);
                $finish;
            end
            drain;
            directed_count = directed_count + 1;
        end
    endtask

    // ------------------------------------------------------------- random batches --
    function [31:0] pick_mult(input integer r);
        case (r % 9)
            0: pick_mult = 32'd0;
            1: pick_mult = 32'd1;
            2: pick_mult = 32'hffffffff;
            3: pick_mult = MIN;
            4: pick_mult = MAX;
            5: pick_mult = $urandom;
            6: pick_mult = 32'd1 << ($urandom % 31);
            default: pick_mult = $urandom % 2001 - 1000;
        endcase
    endfunction

    function [5:0] pick_shift(input integer r);
        case (r % 9)
            0: pick_shift = 6'd0;
            1: pick_shift = 6'd1;
            2: pick_shift = 6'd63;
            3: pick_shift = 6'd62;
            4: pick_shift = 6'd31;
            5: pick_shift = 6'd32;
            6: pick_shift = $urandom;
            default: pick_shift = 6'd1 + $urandom % 12;
        endcase
    endfunction

    function [31:0] pick_i32(input integer r);
        case (r % 8)
            0: pick_i32 = 32'd0;
            1: pick_i32 = MIN;
            2: pick_i32 = MAX;
            3: pick_i32 = 32'hffffffff;
            4: pick_i32 = 32'd1;
            5: pick_i32 = $urandom % 4001 - 2000;
            default: pick_i32 = $urandom;
        endcase
    endfunction

    integer batch;
    integer rows;
    integer r;
    integer c;
    integer ties;
    integer wleft;  // rows still to send in the current window
    reg wfirst, wlast;
    reg [5:0] sh;
    reg [32*N-1:0] d;

    initial begin
        for (i = 0; i < 3; i = i + 1) m_valid[i] = 1'b0;
        step(1'b0, 0, 0, 0, 0, 0, 1'b1, 1'b0, 1'b0);
        step(1'b0, 0, 0, 0, 0, 0, 1'b1, 1'b0, 1'b0);

        //        acc          bias   use relu mult         shift  int32        int8
        // Exact ties round away from zero.
        directed(32'd3, 0, 0, 0, 32'd1, 6'd1, 32'd3, 8'd2);
        directed(-32'd3, 0, 0, 0, 32'd1, 6'd1, -32'd3, -8'd2);
        directed(32'd1, 0, 0, 0, 32'd1, 6'd1, 32'd1, 8'd1);
        directed(-32'd1, 0, 0, 0, 32'd1, 6'd1, -32'd1, -8'd1);
        directed(32'd6, 0, 0, 0, 32'd1, 6'd2, 32'd6, 8'd2);
        directed(-32'd6, 0, 0, 0, 32'd1, 6'd2, -32'd6, -8'd2);
        directed(32'd3, 0, 0, 0, -32'd1, 6'd1, 32'd3, -8'd2);
        // Not ties: nearest.
        directed(32'd5, 0, 0, 0, 32'd1, 6'd2, 32'd5, 8'd1);
        directed(-32'd5, 0, 0, 0, 32'd1, 6'd2, -32'd5, -8'd1);
        directed(-32'd7, 0, 0, 0, 32'd1, 6'd2, -32'd7, -8'd2);
        // Shift 0 and saturation both ways (including by rounding: 127.5 -> 128 -> 127).
        directed(32'd100, 0, 0, 0, 32'd1, 6'd0, 32'd100, 8'd100);
        directed(32'd200, 0, 0, 0, 32'd1, 6'd0, 32'd200, 8'd127);
        directed(-32'd200, 0, 0, 0, 32'd1, 6'd0, -32'd200, -8'd128);
        directed(32'd255, 0, 0, 0, 32'd1, 6'd1, 32'd255, 8'd127);
        directed(-32'd255, 0, 0, 0, 32'd1, 6'd1, -32'd255, -8'd128);
        directed(-32'd257, 0, 0, 0, 32'd1, 6'd1, -32'd257, -8'd128);
        directed(32'd253, 0, 0, 0, 32'd1, 6'd1, 32'd253, 8'd127);
        directed(MIN, 0, 0, 0, MIN, 6'd0, MIN, 8'd127);
        directed(MIN, 0, 0, 0, MAX, 6'd0, MIN, -8'd128);
        directed(32'd5, 0, 0, 0, 32'd0, 6'd7, 32'd5, 8'd0);
        // Extremes with large shifts. 2^62 + 2^62 wraps to -2^63 in 64 bits: -1.
        directed(MIN, 0, 0, 0, MIN, 6'd63, MIN, -8'd1);
        directed(MIN, 0, 0, 0, MIN, 6'd62, MIN, 8'd1);
        directed(MAX, 0, 0, 0, MAX, 6'd63, MAX, 8'd0);
        directed(MAX, 0, 0, 0, MAX, 6'd62, MAX, 8'd1);
        directed(MIN, 0, 0, 0, MAX, 6'd62, MIN, -8'd1);
        directed(MIN, 0, 0, 0, MAX, 6'd63, MIN, 8'd0);
        directed(MIN, 0, 0, 0, 32'd1, 6'd63, MIN, 8'd0);
        directed(MIN, 0, 0, 0, 32'd1, 6'd31, MIN, -8'd1);
        directed(MIN, 0, 0, 0, 32'd1, 6'd32, MIN, -8'd1);
        directed(MIN, 0, 0, 0, 32'd1, 6'd33, MIN, 8'd0);
        directed(MAX, 0, 0, 0, 32'd1, 6'd24, MAX, 8'd127);
        directed(MAX, 0, 0, 0, 32'd1, 6'd25, MAX, 8'd64);
        // Bias: added only with the flag, wraps at 32 bits; ReLU clamps at zero.
        directed(32'd10, 32'd5, 0, 0, 32'd1, 6'd0, 32'd10, 8'd10);
        directed(32'd10, 32'd5, 1, 0, 32'd1, 6'd0, 32'd15, 8'd15);
        directed(MAX, 32'd1, 1, 0, 32'd1, 6'd0, MIN, -8'd128);
        directed(MAX, 32'd1, 1, 1, 32'd1, 6'd0, 32'd0, 8'd0);
        directed(MIN, -32'd1, 1, 1, 32'd1, 6'd0, MAX, 8'd127);
        directed(-32'd5, 0, 0, 1, 32'd1, 6'd0, 32'd0, 8'd0);
        directed(32'd5, -32'd9, 1, 1, 32'd1, 6'd0, 32'd0, 8'd0);
        directed(-32'd5, 32'd9, 1, 1, 32'd3, 6'd1, 32'd4, 8'd6);
        // Windows: a signed maximum, after the bias (which wraps) and ReLU, not before.
        directed_window(-32'd5, 32'd7, 32'd3, 0, 0, 0, 32'd7);
        directed_window(-32'd1, -32'd9, MIN, 0, 0, 0, -32'd1);
        directed_window(MAX, 32'd0, -32'd3, 32'd1, 1, 0, 32'd1);
        directed_window(MAX, -32'd2, -32'd3, 32'd1, 1, 1, 32'd0);
        directed_window(MIN, MIN, MIN, 0, 0, 0, MIN);
        //           acc            bias           use relu x              bf16
        // Cancellation, inf - inf, rounding to inf, ties to even (down and up).
        directed_fp(32'h3f800000, 32'hbf800000, 1, 0, 32'h00000000, 16'h0000);
        directed_fp(32'h7f800000, 32'hff800000, 1, 0, 32'h7fc00000, 16'h7fc0);
        directed_fp(32'h7f7fffff, 32'h00000000, 1, 0, 32'h7f7fffff, 16'h7f80);
        directed_fp(32'h7f7fffff, 32'h7f7fffff, 1, 0, 32'h7f800000, 16'h7f80);
        directed_fp(32'h3f808000, 32'h00000000, 0, 0, 32'h3f808000, 16'h3f80);
        directed_fp(32'h3f818000, 32'h00000000, 0, 0, 32'h3f818000, 16'h3f82);
        directed_fp(32'hbf808001, 32'h00000000, 0, 0, 32'hbf808001, 16'hbf81);
        // Subnormals: the raw bits without bias and ReLU, a zero of their sign once added.
        directed_fp(32'h80000001, 32'h00000000, 0, 0, 32'h80000001, 16'h8000);
        directed_fp(32'h80000001, 32'h80000000, 1, 0, 32'h80000000, 16'h8000);
        directed_fp(32'h00800000, 32'h80000001, 1, 0, 32'h00800000, 16'h0080);
        // ReLU: -0, a negative, NaN (canonical), +inf; the bias before it.
        directed_fp(32'h80000000, 32'h00000000, 0, 1, 32'h00000000, 16'h0000);
        directed_fp(32'hc0400000, 32'h00000000, 0, 1, 32'h00000000, 16'h0000);
        directed_fp(32'hff800a01, 32'h00000000, 0, 1, 32'h7fc00000, 16'h7fc0);
        directed_fp(32'h7f800000, 32'hff7fffff, 1, 1, 32'h7f800000, 16'h7f80);
        directed_fp(32'hc0000000, 32'h40400000, 1, 1, 32'h3f800000, 16'h3f80);
        // Windows: -0 < +0, a NaN anywhere, the maximum after bias and ReLU.
        directed_window_fp(32'h80000000, 32'h00000000, 32'hbf800000, 0, 0, 0, 32'h00000000,
                           16'h0000);
        directed_window_fp(32'h3f800000, 32'h7fc00000, 32'h40000000, 0, 0, 0, 32'h7fc00000,
                           16'h7fc0);
        directed_window_fp(32'hbf800000, 32'hc0000000, 32'hff800000, 32'h3f800000, 1, 0,
                           32'h00000000, 16'h0000);
        directed_window_fp(32'hbf800000, 32'hc0000000, 32'hff800000, 32'h0, 1, 1, 32'h00000000,
                           16'h0000);

        for (batch = 0; batch < BATCHES; batch = batch + 1) begin
            bf16 = batch % 3 == 1;
            ties = batch % 4 == 3 && !bf16;
            for (c = 0; c < N; c = c + 1) begin
                bias[32*c+:32] = bf16 ? tb_fp32($urandom) : pick_i32($urandom);
                if (ties) begin
                    mult[32*c+:32] = ($urandom % 2) ? 32'd1 : 32'hffffffff;
                    shift[6*c+:6]  = 6'd1 + $urandom % 10;
                end else begin
                    mult[32*c+:32] = pick_mult($urandom);
                    shift[6*c+:6]  = pick_shift($urandom);
                end
            end
            rows  = 1 + $urandom % 12;
            wleft = 0;
            for (r = 0; r < rows; r = r + 1) begin
                for (c = 0; c < N; c = c + 1) begin
                    sh = shift[6*c+:6];
                    // Tie rows: an odd multiple of 2^(s-1), either sign, magnitude around the
                    // int8 range so some saturate.
                    if (ties)
                        d[32*c +: 32] = (($urandom % 2) ? 32'd1 : 32'hffffffff) *
                                        (((2 * ($urandom % 160)) + 1) << (sh - 1));
                    else if (bf16) d[32*c+:32] = tb_fp32($urandom);
                    else d[32*c+:32] = pick_i32($urandom);
                end
                while ($urandom % 3 == 0) idle;
                // Windows of 1..6 rows in half the batches (the last cut at the batch's end).
                wfirst = wleft == 0;
                if (wfirst) wleft = (batch % 2) ? 1 + $urandom % 6 : 1;
                wlast = wleft == 1 || r == rows - 1;
                if (ties) send_w(d, 1'b0, 1'b0, $urandom, wfirst, wlast);
                else send_w(d, $urandom % 2, $urandom % 2, $urandom, wfirst, wlast);
                wleft = wlast ? 0 : wleft - 1;
            end
            // A reset with stall high in the middle of one batch, rows in flight.
            if (batch == BATCHES / 2) step(1'b1, d, 1'b0, 1'b0, $urandom, 1'b1, 1'b1, 1'b1, 1'b1);
            drain;
        end
        $display("PASS");
        $finish;
    end
endmodule
