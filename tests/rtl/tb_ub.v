`default_nettype none
// tpu_ub against a memory model under random traffic on all five ports, for ROWS = 4N and
// ROWS = 3N + 5. Every cycle each port is enabled at random with a random row, within the
// contract: the load port w0 writes 1..W0_ROWS consecutive rows (any alignment, up to the last
// row), the other lanes of its data random; the activate port w1 and the MXU port r0 move a row
// pair half the time (bf16; any alignment, up to the last row), r0's high half holding the last
// pair's otherwise; the writes and the zero port never share a row and no read shares a row with
// a write or the zero port (two reads may). Reads often target a row written the cycle before.
// Checked every cycle: each read port shows the rows it read on the previous enabled cycle and
// holds them while not enabled; at the end, that w0 wrote every count of rows at every alignment
// mod W0_ROWS, and runs ending on the last row, and that w1 and r0 moved pairs from even and odd
// rows and onto the last row.
module tb_ub;
    parameter N = 8;
    localparam CYCLES = 3000;
    localparam W0_ROWS = 4;
    localparam CW = $clog2(W0_ROWS + 1);

    reg clk = 1'b0;
    integer cycle = 0;

    always #5 clk = ~clk;

    genvar g;
    generate
        for (g = 0; g < 2; g = g + 1) begin : cfg
            localparam ROWS = (g == 0) ? 4 * N : 3 * N + 5;

            reg w0_en = 1'b0;
            reg w1_en = 1'b0;
            reg w1_pair = 1'b0;
            reg r0_en = 1'b0;
            reg r0_pair = 1'b0;
            reg r1_en = 1'b0;
            reg z_en = 1'b0;
            reg [19:0] z_addr = 20'd0;
            reg [19:0] w0_addr = 20'd0;
            reg [CW-1:0] w0_rows = 1;
            reg [19:0] w1_addr = 20'd0;
            reg [19:0] r0_addr = 20'd0;
            reg [19:0] r1_addr = 20'd0;
            reg [8*N*W0_ROWS-1:0] w0_data = {8 * N * W0_ROWS{1'b0}};
            reg [16*N-1:0] w1_data = {16 * N{1'b0}};
            wire [16*N-1:0] r0_data;
            wire [8*N-1:0] r1_data;

            tpu_ub #(
                .N(N),
                .ROWS(ROWS),
                .W0_ROWS(W0_ROWS)
            ) dut (
                .clk(clk),
                .w0_en(w0_en),
                .w0_addr(w0_addr),
                .w0_rows(w0_rows),
                .w0_data(w0_data),
                .w1_en(w1_en),
                .w1_addr(w1_addr),
                .w1_pair(w1_pair),
                .w1_data(w1_data),
                .z_en(z_en),
                .z_addr(z_addr),
                .r0_en(r0_en),
                .r0_addr(r0_addr),
                .r0_pair(r0_pair),
                .r0_data(r0_data),
                .r1_en(r1_en),
                .r1_addr(r1_addr),
                .r1_data(r1_data)
            );

            reg [8*N-1:0] model[0:ROWS-1];
            reg [16*N-1:0] exp_r0;
            reg [8*N-1:0] exp_r1;
            integer valid_r0 = 0;
            integer valid_r1 = 0;
            integer last_w = 0;
            integer k;
            integer row;
            integer filled = 0;
            // w0 writes seen, per row count and first row mod W0_ROWS; those ending on the last row
            integer cov[1:W0_ROWS][0:W0_ROWS-1];
            integer cov_last[1:W0_ROWS];
            // pairs written (w1) and read (r0): from an even row, an odd one, onto the last row
            integer cov_pair[0:1][0:2];

            // Row r is written or zeroed this cycle.
            function written(input integer r);
                written = (w0_en && r >= w0_addr && r < w0_addr + w0_rows) ||
                    (w1_en && (r == w1_addr || (w1_pair && r == w1_addr + 1))) ||
                    (z_en && r == z_addr);
            endfunction

            // A row for a port moving one row, or with pair two, a quarter of the pairs onto the
            // last row.
            function integer pick(input pair);
                pick = !pair ? $urandom % ROWS : $urandom % 4 == 0 ? ROWS - 2 : $urandom % (ROWS - 1);
            endfunction

            task count_pair(input integer port, input integer r);
                begin
                    cov_pair[port][r%2] = cov_pair[port][r%2] + 1;
                    if (r == ROWS - 2) cov_pair[port][2] = cov_pair[port][2] + 1;
                end
            endtask

            // Rows start unknown: fill them all through w0, W0_ROWS at a time (fewer at the end),
            // so every read is meaningful.
            initial begin
                for (row = 1; row <= W0_ROWS; row = row + 1) begin
                    cov_last[row] = 0;
                    for (k = 0; k < W0_ROWS; k = k + 1) cov[row][k] = 0;
                end
                for (k = 0; k < 3; k = k + 1) begin
                    cov_pair[0][k] = 0;
                    cov_pair[1][k] = 0;
                end
                for (row = 0; row < ROWS; row = row + W0_ROWS) begin
                    @(negedge clk);
                    w0_en   = 1'b1;
                    w0_addr = row;
                    w0_rows = ROWS - row < W0_ROWS ? ROWS - row : W0_ROWS;
                    for (k = 0; k < N * W0_ROWS; k = k + 1) w0_data[8*k+:8] = $urandom;
                    for (k = 0; k < w0_rows; k = k + 1) model[row+k] = w0_data[8*N*k+:8*N];
                end
                @(posedge clk);
                #1 w0_en = 1'b0;
                filled = 1;
            end

            always @(negedge clk)
                if (filled) begin
                    if (valid_r0 && r0_data !== exp_r0) begin
                        $display("FAIL: ub ROWS=%0d cycle %0d: r0_data expected %h, actual %h",
                                 ROWS, cycle, exp_r0, r0_data);
                        $finish;
                    end
                    if (valid_r1 && r1_data !== exp_r1) begin
                        $display("FAIL: ub ROWS=%0d cycle %0d: r1_data expected %h, actual %h",
                                 ROWS, cycle, exp_r1, r1_data);
                        $finish;
                    end
                    w0_en = $urandom % 2;
                    w1_en = $urandom % 2;
                    w1_pair = $urandom % 2;
                    r0_en = $urandom % 2;
                    r0_pair = $urandom % 2;
                    r1_en = $urandom % 2;
                    z_en = $urandom % 3 == 0;
                    // Each count of rows equally often; a quarter of the runs end on the last row.
                    w0_rows = 1 + $urandom % W0_ROWS;
                    w0_addr = ($urandom % 4 == 0) ? ROWS - w0_rows : $urandom % (ROWS - w0_rows + 1);
                    // w1 and the zero port never on w0's rows, nor on each other's.
                    w1_addr = pick(w1_pair);
                    while (w1_addr + w1_pair >= w0_addr && w1_addr < w0_addr + w0_rows)
                    w1_addr = pick(w1_pair);
                    z_addr = $urandom % ROWS;
                    while ((z_addr >= w0_addr && z_addr < w0_addr + w0_rows) ||
                           (z_addr >= w1_addr && z_addr <= w1_addr + w1_pair))
                    z_addr = $urandom % ROWS;
                    for (k = 0; k < N * W0_ROWS; k = k + 1) w0_data[8*k+:8] = $urandom;
                    for (k = 0; k < 2 * N; k = k + 1) w1_data[8*k+:8] = $urandom;
                    r0_addr = ($urandom % 3 == 0 && last_w + r0_pair < ROWS) ? last_w :
                        pick(r0_pair);
                    while (written(
                        r0_addr
                    ) || (r0_pair && written(
                        r0_addr + 1
                    )))
                    r0_addr = pick(r0_pair);
                    r1_addr = ($urandom % 3 == 0) ? r0_addr : $urandom % ROWS;
                    while (written(r1_addr)) r1_addr = $urandom % ROWS;
                    // The model follows the inputs the DUT sees at the next rising edge.
                    if (r0_en) begin
                        exp_r0[8*N-1:0] = model[r0_addr];
                        if (r0_pair) begin
                            exp_r0[16*N-1:8*N] = model[r0_addr+1];
                            count_pair(1, r0_addr);
                        end
                        valid_r0 = 1;
                    end
                    if (r1_en) begin
                        exp_r1   = model[r1_addr];
                        valid_r1 = 1;
                    end
                    if (w0_en) begin
                        for (k = 0; k < w0_rows; k = k + 1) model[w0_addr+k] = w0_data[8*N*k+:8*N];
                        last_w = w0_addr + $urandom % w0_rows;
                        cov[w0_rows][w0_addr%W0_ROWS] = cov[w0_rows][w0_addr%W0_ROWS] + 1;
                        if (w0_addr + w0_rows == ROWS) cov_last[w0_rows] = cov_last[w0_rows] + 1;
                    end
                    if (w1_en) begin
                        model[w1_addr] = w1_data[8*N-1:0];
                        if (w1_pair) begin
                            model[w1_addr+1] = w1_data[16*N-1:8*N];
                            count_pair(0, w1_addr);
                        end
                        last_w = w1_addr + w1_pair;
                    end
                    if (z_en) begin
                        model[z_addr] = {8 * N{1'b0}};
                        last_w = z_addr;
                    end
                end
        end
    endgenerate

    integer r;
    integer a;
    initial begin
        wait (cfg[0].filled && cfg[1].filled);
        while (cycle < CYCLES) begin
            @(posedge clk);
            cycle = cycle + 1;
        end
        for (r = 0; r < 6; r = r + 1)
        if (cfg[0].cov_pair[r/3][r%3] == 0 || cfg[1].cov_pair[r/3][r%3] == 0) begin
            $display(
                "FAIL: ub: no %s pair %s", r / 3 ? "r0" : "w1",
                r % 3 == 0 ? "from an even row" : r % 3 == 1 ? "from an odd row" : "onto the last row");
            $finish;
        end
        for (r = 1; r <= W0_ROWS; r = r + 1) begin
            if (cfg[0].cov_last[r] == 0 || cfg[1].cov_last[r] == 0) begin
                $display("FAIL: ub: no w0 write of %0d rows ending on the last row", r);
                $finish;
            end
            for (a = 0; a < W0_ROWS; a = a + 1)
            if (cfg[0].cov[r][a] == 0 || cfg[1].cov[r][a] == 0) begin
                $display("FAIL: ub: no w0 write of %0d rows from a row = %0d mod %0d", r, a,
                         W0_ROWS);
                $finish;
            end
        end
        $display("PASS");
        $finish;
    end
endmodule
