// tpu_fp.vh: the bf16/fp32 arithmetic of docs/isa.md "Floating point (bf16)", bit for bit, as
// Verilog functions for a module to include in its body. sim/fp.c is the golden model of the
// same rules.
//
// Every operation reads a subnormal input as a zero of its sign, never returns a subnormal, and
// returns the canonical quiet NaN for any NaN. Arguments and locals are named f_*, so that they
// hide nothing of the including module.
//
// Under Verilator an int8 cycle pays nothing for them when they are called from the branch of a
// clocked always block that needs them (a module computing them on its ports would be evaluated
// every cycle), and that branch holds more than one statement: the product into a local of a
// named block, then the sum, as in tests/bench/fp_array.v. Verilator turns
// `if (c) p <= f(x); else p <= g;` into `p <= c ? f(x) : g` before it expands f in line, ahead
// of the statement, where f would run every cycle. For the same reason the functions test for
// the common case (normal operands and result) first and handle the rest in plain expressions,
// not in calls to other functions.

localparam [31:0] FP32_QNAN = 32'h7fc0_0000;
localparam [15:0] BF16_QNAN = 16'h7fc0;

// An exponent field of a normal number: neither 0 (zero, subnormal) nor 255 (inf, NaN).
function fp_normal;
    input [7:0] f_e;
    fp_normal = f_e - 8'd1 < 8'd254;
endfunction

function fp32_is_nan;
    input [30:0] f_m;  // the magnitude
    fp32_is_nan = f_m > 31'h7f80_0000;
endfunction

// An fp32 input as the operations read it: a subnormal is a zero of its sign.
function [31:0] fp32_ftz;
    input [31:0] f_x;
    fp32_ftz = f_x[30:23] == 8'd0 ? {f_x[31], 31'd0} : f_x;
endfunction

// bf16 -> fp32: exact (the low 16 bits are zero).
function [31:0] bf16_to_fp32;
    input [15:0] f_a;
    bf16_to_fp32 = fp32_is_nan({f_a[14:0], 16'd0}) ? FP32_QNAN : fp32_ftz({f_a, 16'd0});
endfunction

// fp32(a * w) of two bf16: the 8 x 8-bit significand product has at most 16 bits, so it is exact
// in fp32 unless it overflows (inf) or falls below the smallest normal (a zero). Work values are
// 32 bits wide where that is free: Verilator then needs no masks for them.
function [31:0] bf16_mul;
    input [15:0] f_a, f_w;
    reg [15:0] f_p;  // significand product, 1.0 <= f_p / 2^14 < 4.0
    reg [31:0] f_e;  // biased exponent of the product, two's complement
    begin
        f_p = {1'b1, f_a[6:0]} * {1'b1, f_w[6:0]};
        f_e = {24'd0, f_a[14:7]} + {24'd0, f_w[14:7]} + {31'd0, f_p[15]} - 32'd127;
        if (fp_normal(f_a[14:7]) && fp_normal(f_w[14:7]) && f_e - 32'd1 < 32'd254)
            bf16_mul = {
                f_a[15] ^ f_w[15], f_e[7:0], f_p[15] ? {f_p[14:0], 8'd0} : {f_p[13:0], 9'd0}
            };
        else if ((&f_a[14:7] && (|f_a[6:0] || f_w[14:7] == 8'd0)) ||
                 (&f_w[14:7] && (|f_w[6:0] || f_a[14:7] == 8'd0)))
            bf16_mul = FP32_QNAN;  // a NaN, or inf * 0
        else if (f_a[14:7] != 8'd0 && f_w[14:7] != 8'd0 && !f_e[31] && f_e != 32'd0)
            bf16_mul = {f_a[15] ^ f_w[15], 8'hff, 23'd0};  // an inf, or the product at least 2^128
        else bf16_mul = {f_a[15] ^ f_w[15], 31'd0};
    end
endfunction

// rne32(x + y) of two fp32. Two normals are added exactly in 64 bits: the larger magnitude's
// significand at bits 62:39, the smaller's shifted right by the exponent difference d (all its
// bits stay while d <= 26; farther apart it can only round the sum, and a 1 at bit 0 rounds it
// the same). The sum is rounded once, to nearest even, at the bit its leading one makes the last
// (39, or 40 after a carry, or 38 after one bit cancelled); adding the rounded significand, its
// hidden bit included, to the exponent field below it carries a rounding overflow into the
// exponent, up to inf. When two or more leading bits cancel, the exponents were at most one
// apart and the sum is exact, as is a sum below the smallest normal (both operands are multiples
// of 2^-149), which is flushed.
function [31:0] fp32_add;
    input [31:0] f_x, f_y;
    reg [31:0] f_b, f_s;  // larger and smaller magnitude
    reg [31:0] f_d;  // exponent difference
    reg [63:0] f_r;  // the sum; then the rounded significand
    reg [31:0] f_e;  // biased exponent of the result, two's complement
    reg [31:0] f_m;  // the result's exponent and fraction
    if (fp_normal(f_x[30:23]) && fp_normal(f_y[30:23])) begin
        f_b = f_y[30:0] > f_x[30:0] ? f_y : f_x;
        f_s = f_y[30:0] > f_x[30:0] ? f_x : f_y;
        f_d = {24'd0, f_b[30:23] - f_s[30:23]};
        f_r = f_d > 32'd26 ? 64'd1 : {2'b01, f_s[22:0], 39'd0} >> f_d;
        f_r = {2'b01, f_b[22:0], 39'd0} + (f_b[31] == f_s[31] ? f_r : -f_r);
        f_e = {24'd0, f_b[30:23]};
        if (f_r[63:61] != 3'd0) begin
            // The leading one to bit 62 (bits shifted out kept as a sticky bit 0), then rounded
            // at bit 39.
            if (f_r[63]) begin
                f_r = {1'b0, f_r[63:2], |f_r[1:0]};
                f_e = f_e + 32'd1;
            end else if (!f_r[62]) begin
                f_r = f_r << 1;
                f_e = f_e - 32'd1;
            end
            f_r = (f_r + 64'h3f_ffff_ffff + {63'd0, f_r[39]}) >> 39;
            f_m = (f_e - 32'd1 << 23) + f_r[31:0];
            if (f_e == 32'd0) fp32_add = {f_b[31], 31'd0};  // exact: the exponents were equal
            else if (f_m >= 32'h7f80_0000) fp32_add = {f_b[31], 8'hff, 23'd0};
            else fp32_add = {f_b[31], f_m[30:0]};
        end else begin
            // Normalize in halving steps, the leading one to bit 60 (from bit 38 at the lowest).
            if (f_r[60:45] == 16'd0) begin
                f_r = f_r << 16;
                f_e = f_e - 32'd16;
            end
            if (f_r[60:53] == 8'd0) begin
                f_r = f_r << 8;
                f_e = f_e - 32'd8;
            end
            if (f_r[60:57] == 4'd0) begin
                f_r = f_r << 4;
                f_e = f_e - 32'd4;
            end
            if (f_r[60:59] == 2'd0) begin
                f_r = f_r << 2;
                f_e = f_e - 32'd2;
            end
            if (!f_r[60]) begin
                f_r = f_r << 1;
                f_e = f_e - 32'd1;
            end
            if (!f_r[60]) fp32_add = 32'd0;  // x + (-x) = +0
            else if (f_e[31] || f_e <= 32'd2) fp32_add = {f_b[31], 31'd0};
            else fp32_add = {f_b[31], f_e[7:0] - 8'd2, f_r[59:37]};
        end
    end else if (f_x[30:0] > 31'h7f80_0000 || f_y[30:0] > 31'h7f80_0000 ||
                 (&f_x[30:23] && &f_y[30:23] && f_x[31] != f_y[31]))
        fp32_add = FP32_QNAN;  // a NaN, or inf - inf
    else if (&f_x[30:23]) fp32_add = f_x;
    else if (&f_y[30:23]) fp32_add = f_y;
    else if (f_x[30:23] == 8'd0 && f_y[30:23] == 8'd0) fp32_add = {f_x[31] & f_y[31], 31'd0};
    else if (f_y[30:23] == 8'd0) fp32_add = f_x;
    else fp32_add = f_y;
endfunction

// fp32 -> bf16, round to nearest even: an fp32 normal rounds to a bf16 normal or, carrying out
// of the largest finite value, to inf.
function [15:0] fp32_to_bf16;
    input [31:0] f_x;
    if (fp32_is_nan(f_x[30:0])) fp32_to_bf16 = BF16_QNAN;
    else if (&f_x[30:23]) fp32_to_bf16 = f_x[31:16];
    else if (f_x[30:23] == 8'd0) fp32_to_bf16 = {f_x[31], 15'd0};
    else fp32_to_bf16 = f_x[31:16] + {15'd0, f_x[15] && (f_x[16] || |f_x[14:0])};
endfunction

// max(x, y) with -0 < +0: the larger of the two as read (subnormals as zeros of their sign).
function [31:0] fp32_max;
    input [31:0] f_x, f_y;
    reg [31:0] f_xz, f_yz;
    begin
        f_xz = fp32_ftz(f_x);
        f_yz = fp32_ftz(f_y);
        if (fp32_is_nan(f_x[30:0]) || fp32_is_nan(f_y[30:0])) fp32_max = FP32_QNAN;
        else if (f_xz[31] != f_yz[31]) fp32_max = f_xz[31] ? f_yz : f_xz;
        else if ((f_xz[30:0] > f_yz[30:0]) != f_xz[31]) fp32_max = f_xz;
        else fp32_max = f_yz;
    end
endfunction

// ReLU = max(x, +0): every x <= 0, -0 included, is +0.
function [31:0] fp32_relu;
    input [31:0] f_x;
    if (fp32_is_nan(f_x[30:0])) fp32_relu = FP32_QNAN;
    else if (f_x[31] || f_x[30:23] == 8'd0) fp32_relu = 32'd0;
    else fp32_relu = f_x;
endfunction
