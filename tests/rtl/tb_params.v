`default_nettype none
// tpu_params against a model: random writes of all four selects (3 must be ignored), with
// random, all-ones and all-zero data, idle cycles, and a reset in the middle. After every edge
// bias, mult and shift must equal the model (zero after each reset; shift = low 6 bits of each
// int32 lane).
module tb_params;
    parameter N = 8;
    localparam CYCLES = 3000;
    localparam RESET_AT = 1400;

    reg clk = 1'b0;
    reg rst = 1'b1;
    reg prm_en = 1'b0;
    reg [1:0] prm_sel = 2'd0;
    reg [32*N-1:0] prm_data = {32 * N{1'b0}};
    wire [32*N-1:0] bias;
    wire [32*N-1:0] mult;
    wire [6*N-1:0] shift;

    tpu_params #(
        .N(N)
    ) dut (
        .clk(clk),
        .rst(rst),
        .prm_en(prm_en),
        .prm_sel(prm_sel),
        .prm_data(prm_data),
        .bias(bias),
        .mult(mult),
        .shift(shift)
    );

    reg [32*N-1:0] m_bias;
    reg [32*N-1:0] m_mult;
    reg [6*N-1:0] m_shift;
    integer cycle;
    integer c;
    integer kind;
    integer writes[0:3];

    always #5 clk = ~clk;

    initial begin
        m_bias = {32 * N{1'b0}};
        m_mult = {32 * N{1'b0}};
        m_shift = {6 * N{1'b0}};
        writes[0] = 0;
        writes[1] = 0;
        writes[2] = 0;
        writes[3] = 0;
        for (cycle = 0; cycle < CYCLES; cycle = cycle + 1) begin
            @(negedge clk);
            if (bias !== m_bias || mult !== m_mult || shift !== m_shift) begin
                $display(
                    "FAIL: params cycle %0d: expected bias %h mult %h shift %h, actual bias %h mult %h shift %h",
                    cycle, m_bias, m_mult, m_shift, bias, mult, shift);
                $finish;
            end
            rst = cycle < 2 || cycle == RESET_AT;
            prm_en = ($urandom % 3) != 0;
            prm_sel = $urandom;
            kind = $urandom % 8;
            for (c = 0; c < N; c = c + 1)
            prm_data[32*c+:32] = kind == 0 ? 32'hffffffff : (kind == 1 ? 32'd0 : $urandom);
            // The model follows what the DUT sees at the next rising edge.
            if (rst) begin
                m_bias  = {32 * N{1'b0}};
                m_mult  = {32 * N{1'b0}};
                m_shift = {6 * N{1'b0}};
            end else if (prm_en) begin
                writes[prm_sel] = writes[prm_sel] + 1;
                if (prm_sel == 2'd0) m_bias = prm_data;
                if (prm_sel == 2'd1) m_mult = prm_data;
                if (prm_sel == 2'd2)
                    for (c = 0; c < N; c = c + 1) m_shift[6*c+:6] = prm_data[32*c+:6];
            end
        end
        if (writes[0] < 100 || writes[1] < 100 || writes[2] < 100 || writes[3] < 100) begin
            $display("FAIL: params: too few writes per select: %0d %0d %0d %0d", writes[0],
                     writes[1], writes[2], writes[3]);
            $finish;
        end
        $display("PASS");
        $finish;
    end
endmodule
