// tb_pe: a column of N tpu_pe chained as in the array (both psums and weights flow down, each PE
// gets its own activation), its float clock from a tpu_icg as in the array. A cycle model of the
// column checks every output every cycle: MAC with both banks, bank select, the weight shift
// chain (w_out combinational), shifting one bank while computing with the other, 32-bit psum wrap
// at the top, int8/uint8 extremes, and the fp32 sum (rtl/tpu_fp.vh's rule, checked against the
// golden model by tb_fp) with bf16 edge values, PE by PE int8 or bf16 data in the same cycle, an
// int8 product using the cell's low byte, the fp32 sums holding while the float clock is gated
// and ticking again at once when it is not.
module tb_pe;
    parameter N = 8;
    `include "tpu_fp.vh"
    `include "tb_bf16.vh"

    reg clk = 1'b0;
    always #5 clk = ~clk;
    reg            rst;

    reg [16*N-1:0] a;
    reg [   N-1:0] s;
    reg [   N-1:0] f;  // PE k's activation is bf16 (else int8)
    reg            fen;  // the float clock's enable
    reg [    31:0] p_top;
    reg [    31:0] q_top;
    reg [    15:0] w_top;
    reg w_en, w_sel;
    wire [16*N-1:0] a_o;
    wire [   N-1:0] s_o;
    wire [32*N-1:0] p_o;
    wire [32*N-1:0] q_o;
    wire [16*N-1:0] w_o;

    wire fclk;
    tpu_icg u_icg (
        .clk (clk),
        .en  (fen | rst),
        .gclk(fclk)
    );

    genvar g;
    generate
        for (g = 0; g < N; g = g + 1) begin : col
            wire [31:0] p_i, q_i;
            wire [15:0] w_i;
            if (g == 0) begin : top
                assign p_i = p_top;
                assign q_i = q_top;
                assign w_i = w_top;
            end else begin : below
                assign p_i = p_o[(g-1)*32+:32];
                assign q_i = q_o[(g-1)*32+:32];
                assign w_i = w_o[(g-1)*16+:16];
            end
            tpu_pe u (
                .clk  (clk),
                .fclk (fclk),
                .rst  (rst),
                .a_in (a[g*16+:16]),
                .s_in (s[g]),
                .p_in (p_i),
                .q_in (q_i),
                .w_in (w_i),
                .w_en (w_en),
                .w_sel(w_sel),
                .a_out(a_o[g*16+:16]),
                .s_out(s_o[g]),
                .p_out(p_o[g*32+:32]),
                .q_out(q_o[g*32+:32]),
                .w_out(w_o[g*16+:16])
            );
        end
    endgenerate

    // model state
    reg [15:0] m_w0[0:N-1], m_w1[0:N-1];
    reg [31:0] m_p[0:N-1], m_q[0:N-1];
    reg [15:0] m_a[0:N-1];
    reg m_s[0:N-1];
    reg [15:0] n_w0[0:N-1], n_w1[0:N-1];
    reg [31:0] n_p[0:N-1], n_q[0:N-1];

    integer errors = 0;
    integer cyc = 0;
    integer k;
    integer seed = 1;

    function integer sx16(input [15:0] v);
        sx16 = v[15] ? v - 65536 : v;
    endfunction
    function integer sx8(input [7:0] v);
        sx8 = v[7] ? v - 256 : v;
    endfunction

    // activations the MXU can produce: int8 or uint8 extended to 16 bits, half of them
    // extremes, or bf16
    function [15:0] rand_a(input integer r, input bf16);
        if (bf16) rand_a = tb_bf16(r);
        else
            case (r & 7)
                0: rand_a = 16'hff80;  // -128
                1: rand_a = 16'h007f;  // 127
                2: rand_a = 16'h00ff;  // uint8 255
                3: rand_a = 16'hffff;  // -1
                default: rand_a = (r & 8) ? {8'd0, r[15:8]} : {{8{r[15]}}, r[15:8]};
            endcase
    endfunction
    // weight cells: int8 sign-extended (extremes often) or bf16
    function [15:0] rand_w(input integer r);
        case (r & 7)
            0: rand_w = 16'hff80;
            1: rand_w = 16'h007f;
            2, 3, 4: rand_w = tb_bf16(r);
            default: rand_w = {{8{r[15]}}, r[15:8]};
        endcase
    endfunction

    task fail(input [8*16-1:0] what, input integer idx, input [31:0] exp, input [31:0] act);
        begin
            $display("FAIL: cycle %0d %0s PE %0d expected %0d (0x%h) actual %0d (0x%h)", cyc, what,
                     idx, $signed(exp), exp, $signed(act), act);
            errors = errors + 1;
            if (errors > 10) $finish;
        end
    endtask

    task check_regs;
        begin
            for (k = 0; k < N; k = k + 1) begin
                if (p_o[k*32+:32] !== m_p[k]) fail("p_out", k, m_p[k], p_o[k*32+:32]);
                if (q_o[k*32+:32] !== m_q[k]) fail("q_out", k, m_q[k], q_o[k*32+:32]);
                if (a_o[k*16+:16] !== m_a[k]) fail("a_out", k, m_a[k], a_o[k*16+:16]);
                if (s_o[k] !== m_s[k]) fail("s_out", k, m_s[k], s_o[k]);
            end
        end
    endtask

    // One clock with the inputs already set: check w_out, advance the model, check registers.
    task step;
        begin
            #1;
            for (k = 0; k < N; k = k + 1)
            if (w_o[k*16+:16] !== (w_sel ? m_w1[k] : m_w0[k]))
                fail("w_out", k, w_sel ? m_w1[k] : m_w0[k], w_o[k*16+:16]);
            for (k = 0; k < N; k = k + 1) begin
                n_q[k] = !fen ? m_q[k] : fp32_add(k == 0 ? q_top : m_q[k-1],
                                                  bf16_mul(a[k*16+:16], s[k] ? m_w1[k] : m_w0[k]));
                n_p[k] = (k == 0 ? p_top : m_p[k-1]) +
                    sx16(a[k*16+:16]) * (s[k] ? sx8(m_w1[k][7:0]) : sx8(m_w0[k][7:0]));
                n_w0[k] = (w_en && !w_sel) ? (k == 0 ? w_top : m_w0[k-1]) : m_w0[k];
                n_w1[k] = (w_en && w_sel) ? (k == 0 ? w_top : m_w1[k-1]) : m_w1[k];
            end
            @(posedge clk);
            #1;
            cyc = cyc + 1;
            for (k = 0; k < N; k = k + 1) begin
                m_p[k]  = n_p[k];
                m_q[k]  = n_q[k];
                m_w0[k] = n_w0[k];
                m_w1[k] = n_w1[k];
                m_a[k]  = a[k*16+:16];
                m_s[k]  = s[k];
            end
            check_regs;
        end
    endtask

    // sel_mode 0: bank 0, 1: bank 1, 2: random; bf_mode 0: int8, 1: bf16, 2: random per PE
    task rand_act(input integer sel_mode, input integer bf_mode);
        begin
            for (k = 0; k < N; k = k + 1) begin
                f[k] = (bf_mode == 2) ? $random(seed) : bf_mode;
                a[k*16+:16] = rand_a($random(seed), f[k]);
                s[k] = (sel_mode == 2) ? $random(seed) : sel_mode;
            end
            // the fp32 sum enters as +0, or as another column's fp32 sum; the float clock runs
            // while a PE has bf16 data (as the array's does), and sometimes without
            p_top = $random(seed);
            q_top = $random(seed) & 1 ? {tb_bf16($random(seed)), 16'd0} : 32'd0;
            fen   = |f || ($random(seed) & 3) == 0;
        end
    endtask

    integer i, phase;
    initial begin
        rst = 1'b1;
        a = 0;
        s = 0;
        f = 0;
        fen = 0;
        p_top = 0;
        q_top = 0;
        w_top = 0;
        w_en = 0;
        w_sel = 0;
        @(posedge clk);
        #1 rst = 1'b0;
        for (k = 0; k < N; k = k + 1) begin
            m_w0[k] = 0;
            m_w1[k] = 0;
            m_p[k]  = 0;
            m_q[k]  = 0;
            m_a[k]  = 0;
            m_s[k]  = 0;
        end
        check_regs;
        // zero banks after reset: products are zero, the psum chain just passes p_top down
        for (i = 0; i < N + 2; i = i + 1) begin
            rand_act(2, 0);
            step;
        end
        // shift bank 0 (then bank 1) while computing with the other bank, then swap
        for (phase = 0; phase < 2; phase = phase + 1) begin
            for (i = 0; i < N; i = i + 1) begin
                w_en  = 1;
                w_sel = phase;
                w_top = rand_w($random(seed));
                rand_act(1 - phase, 0);
                step;
            end
            w_en = 0;
            for (i = 0; i < N + 2; i = i + 1) begin
                w_sel = $random(seed);  // w_out follows w_sel
                rand_act(phase, 0);
                step;
            end
        end
        // extremes by hand: every PE -128 * -128, then -128 * 127, then uint8 255 * -128
        for (phase = 0; phase < 3; phase = phase + 1) begin
            for (i = 0; i < N; i = i + 1) begin
                w_en  = 1;
                w_sel = 0;
                w_top = (phase == 1) ? 16'h007f : 16'hff80;
                rand_act(1, 0);
                step;
            end
            w_en = 0;
            for (k = 0; k < N; k = k + 1) begin
                a[k*16+:16] = (phase == 2) ? 16'h00ff : 16'hff80;
                s[k] = 0;
                f[k] = 0;
            end
            p_top = 32'h7fff_ffff;  // forces a wrap in PE 0 for positive products
            step;
            step;
        end
        // everything random, including shift enable/select, int8; then bf16 (with the largest
        // finite values against each other: overflow to inf, inf - inf); then both mixed
        for (phase = 0; phase < 3; phase = phase + 1)
        for (i = 0; i < 20 * N; i = i + 1) begin
            w_en  = $random(seed);
            w_sel = $random(seed);
            w_top = rand_w($random(seed));
            rand_act(2, phase);
            step;
        end
        // synchronous reset clears state
        rst = 1'b1;
        @(posedge clk);
        #1 rst = 1'b0;
        for (k = 0; k < N; k = k + 1) begin
            m_w0[k] = 0;
            m_w1[k] = 0;
            m_p[k]  = 0;
            m_q[k]  = 0;
            m_a[k]  = 0;
            m_s[k]  = 0;
        end
        check_regs;
        w_sel = 0;
        #1;
        for (k = 0; k < N; k = k + 1)
        if (w_o[k*16+:16] !== 16'd0) fail("w_out/rst", k, 0, w_o[k*16+:16]);
        w_sel = 1;
        #1;
        for (k = 0; k < N; k = k + 1)
        if (w_o[k*16+:16] !== 16'd0) fail("w_out/rst", k, 0, w_o[k*16+:16]);
        if (errors == 0) $display("PASS");
        $finish;
    end
endmodule
