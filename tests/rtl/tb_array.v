// tb_array: N x N tpu_array driven the way the MXU drives it, with the skews applied here.
//   - bank 0 is loaded (all columns at once) with a -128/127 checkerboard tile;
//   - segment A streams int8 vectors on bank 0 while bank 1 is shifted in with the column skew
//     (a tile of bf16 cells);
//   - segment B streams bf16 vectors on bank 1 while bank 0 is reloaded, starting at the
//     earliest cycle the MXU's rule allows (ts = t_last + N), and B ends exactly when the new
//     tile becomes usable;
//   - segment C mixes both banks and both types per vector, with idle (zero) slots.
// Every column output is compared every cycle with sum_k a[k] * W[k][c] computed here (int8: the
// cells' low bytes; bf16: the column's fp32 sum from +0 in row order, rtl/tpu_fp.vh), or zero
// where no vector is in flight. bf, the float clock's enable, is high exactly while a bf16 vector
// is in the array, as the MXU raises it. Activations include int8 -128/127 and uint8 255 vectors and bf16
// edge values.
module tb_array;
    parameter N = 8;
    `include "tpu_fp.vh"
    `include "tb_bf16.vh"

    localparam LA = N + 3;  // vectors on bank 0 (the bank 1 shift starts at TS1 = 1)
    localparam TS1 = 1;
    localparam TS2 = LA - 1 + N;  // bank 0 reload: last bank-0 row entered at LA-1
    localparam LB = TS2 + N;  // first vector that may read the reloaded bank 0
    localparam NV = LB + 6 * N;
    localparam TEND = NV + 2 * N + 2;

    reg clk = 1'b0;
    always #5 clk = ~clk;
    reg            rst;

    reg [16*N-1:0] a_in;
    reg [   N-1:0] s_in;
    reg [   N-1:0] f_in;  // the type of the vector entering row r (the array takes row N-1's)
    reg            bf;
    reg [16*N-1:0] w_in;
    reg [N-1:0] w_en, w_sel;
    wire [32*N-1:0] p_out;

    tpu_array #(
        .N(N)
    ) dut (
        .clk  (clk),
        .rst  (rst),
        .a_in (a_in),
        .s_in (s_in),
        .f_in (f_in[N-1]),
        .bf   (bf),
        .w_in (w_in),
        .w_en (w_en),
        .w_sel(w_sel),
        .p_out(p_out)
    );

    reg [15:0] wt[0:3*N*N-1];  // three tiles: [set][k][c]
    reg [15:0] av[0:NV*N-1];  // vectors: [v][k]
    reg vs[0:NV-1];  // bank select of vector v
    reg vf[0:NV-1];  // vector v is bf16
    reg vval[0:NV-1];  // slot holds a vector
    integer vset[0:NV-1];  // tile the vector's bank holds when it passes

    integer errors = 0;
    integer seed = 3;
    integer t, v, r, c, k, j, x;

    function integer sx16(input [15:0] val);
        sx16 = val[15] ? val - 65536 : val;
    endfunction
    function integer sx8(input [7:0] val);
        sx8 = val[7] ? val - 256 : val;
    endfunction

    function [31:0] ref_out(input integer vi, input integer col);
        integer kk;
        begin
            ref_out = 0;
            for (kk = 0; kk < N; kk = kk + 1)
            if (vf[vi])
                ref_out = fp32_add(ref_out, bf16_mul(av[vi*N+kk], wt[(vset[vi]*N+kk)*N+col]));
            else ref_out = ref_out + sx16(av[vi*N+kk]) * sx8(wt[(vset[vi]*N+kk)*N+col][7:0]);
        end
    endfunction

    // column-skewed shift of tile `set` into bank `bank`, column 0 starting at ts
    task drive_shift(input integer ts, input integer set, input integer bank);
        begin
            for (c = 0; c < N; c = c + 1) begin
                j = t - c - ts;
                if (j >= 0 && j < N) begin
                    w_en[c] = 1'b1;
                    w_sel[c] = bank;
                    w_in[c*16+:16] = wt[(set*N+N-1-j)*N+c];
                end
            end
        end
    endtask

    initial begin
        // tiles: 0 = -128/127 checkerboard, 1 = bf16, 2 = random int8 with 127/-128 sprinkled in
        // (cells: int8 sign-extended)
        for (x = 0; x < N * N; x = x + 1) begin
            wt[x] = ((x / N + x % N) & 1) ? 16'h007f : 16'hff80;
            wt[N*N+x] = tb_bf16($random(seed));
            k = $random(seed);
            wt[2*N*N+x] = (k & 3) == 0 ? 16'h007f : (k & 3) == 1 ? 16'hff80 : {{8{k[15]}}, k[15:8]};
        end
        for (v = 0; v < NV; v = v + 1) begin
            vval[v] = (v < LB) || ($random(seed) & 7) != 0;
            vs[v] = (v < LA) ? 1'b0 : (v < LB) ? 1'b1 : $random(seed);
            vset[v] = (v < LA) ? 0 : vs[v] ? 1 : 2;
            vf[v] = (v < LA) ? 1'b0 : (v < LB) ? 1'b1 : $random(seed);
            k = $random(seed) & 7;
            for (r = 0; r < N; r = r + 1) begin
                x = $random(seed);
                if (vf[v]) av[v*N+r] = tb_bf16(x);
                else
                    case (k)
                        0: av[v*N+r] = 16'hff80;  // int8 -128
                        1: av[v*N+r] = 16'h007f;  // int8 127
                        2: av[v*N+r] = 16'h00ff;  // uint8 255
                        3: av[v*N+r] = {8'd0, x[7:0]};  // uint8
                        default: av[v*N+r] = {{8{x[7]}}, x[7:0]};  // int8
                    endcase
            end
        end

        rst   = 1'b1;
        a_in  = 0;
        s_in  = 0;
        f_in  = 0;
        bf    = 0;
        w_in  = 0;
        w_en  = 0;
        w_sel = 0;
        @(posedge clk);
        #1 rst = 1'b0;
        // bank 0 <= tile 0, all columns together
        for (j = 0; j < N; j = j + 1) begin
            w_en  = {N{1'b1}};
            w_sel = 0;
            for (c = 0; c < N; c = c + 1) w_in[c*16+:16] = wt[(N-1-j)*N+c];
            @(posedge clk);
            #1;
        end
        for (t = 0; t < TEND; t = t + 1) begin
            w_en  = 0;
            w_sel = 0;
            w_in  = 0;
            // vector v is in PE (r, c) at t = v + r + c
            bf    = 0;
            for (v = t - 2 * N + 2; v <= t; v = v + 1)
            if (v >= 0 && v < NV && vval[v] && vf[v]) bf = 1;
            drive_shift(TS1, 1, 1);
            drive_shift(TS2, 2, 0);
            for (r = 0; r < N; r = r + 1) begin
                v = t - r;
                if (v >= 0 && v < NV && vval[v]) begin
                    a_in[r*16+:16] = av[v*N+r];
                    s_in[r] = vs[v];
                    f_in[r] = vf[v];
                end else begin
                    a_in[r*16+:16] = 0;
                    s_in[r] = 0;
                    f_in[r] = 0;
                end
            end
            for (c = 0; c < N; c = c + 1) begin
                v = t - N - c;
                x = (v >= 0 && v < NV && vval[v]) ? ref_out(v, c) : 0;
                if (p_out[c*32+:32] !== x) begin
                    $display("FAIL: cycle %0d column %0d vector %0d expected %h actual %h", t, c,
                             v, x, p_out[c*32+:32]);
                    errors = errors + 1;
                    if (errors > 10) $finish;
                end
            end
            @(posedge clk);
            #1;
        end
        if (errors == 0) $display("PASS");
        $finish;
    end
endmodule
