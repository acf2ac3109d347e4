`default_nettype none
// tpu_wfifo against a model of a queue of tiles, for (N, TILES = 4, WR_ROWS = 4) and (N - 1,
// TILES = 3, WR_ROWS = 3), the second covering sizes that are not powers of two. The producer
// cuts each tile into runs of 1..WR_ROWS consecutive rows (every length, the last one capped by
// the tile) and writes the runs in a random order, one per cycle through the wide write port with
// junk on the lanes beyond the run (which must not be written); half the tiles are int8 (each
// byte stored sign-extended to a 16-bit cell), half bf16 (runs of 1..WR_ROWS/2 rows of N 16-bit
// cells). It writes only while a slot is free (when
// full, the tail slot is the head's), and pushes either together with the last run or some
// cycles later; the consumer pops at random when not
// empty. Phases alternate fill (runs to full), drain (runs to empty) and mixed traffic, which
// pushes and pops in the same cycle; a reset in the middle must empty the FIFO. Every cycle
// checks count, full and empty, and reads back every row of the head tile in order.
module tb_wfifo;
    parameter N = 8;
    localparam CYCLES = 4000;
    localparam RESET_AT = 1400;

    reg clk = 1'b0;
    reg rst = 1'b1;
    integer cycle = 0;
    integer done = 0;

    always #5 clk = ~clk;

    genvar g;
    generate
        for (g = 0; g < 2; g = g + 1) begin : cfg
            localparam NN = N - g;
            localparam TILES = 4 - g;
            localparam WR = 4 - g;
            localparam CW = $clog2(WR + 1);

            reg wr_en = 1'b0;
            reg [8:0] wr_row = 9'd0;
            reg [CW-1:0] wr_rows = {CW{1'b0}};
            reg wr_bf16 = 1'b0;
            reg [8*NN*WR-1:0] wr_data = {8 * NN * WR{1'b0}};
            reg push = 1'b0;
            reg pop = 1'b0;
            reg [8:0] rd_row = 9'd0;
            wire full;
            wire empty;
            wire [8:0] count;
            wire [16*NN-1:0] rd_data;

            tpu_wfifo #(
                .N(NN),
                .TILES(TILES),
                .WR_ROWS(WR)
            ) dut (
                .clk(clk),
                .rst(rst),
                .wr_en(wr_en),
                .wr_row(wr_row),
                .wr_rows(wr_rows),
                .wr_bf16(wr_bf16),
                .wr_data(wr_data),
                .push(push),
                .full(full),
                .empty(empty),
                .count(count),
                .rd_row(rd_row),
                .rd_data(rd_data),
                .pop(pop)
            );

            // Model: slot s, row r at model[s * NN + r]; head slot and tile count.
            reg [16*NN-1:0] model[0:TILES*NN-1];
            integer head = 0;
            integer n = 0;
            // Producer: the current tile's runs (first row, rows) in the order they are written,
            // n_runs of them, next the runs written so far (NN: no tile started).
            integer run_at[0:NN-1];
            integer run_len[0:NN-1];
            integer n_runs = 0;
            integer next = NN;
            integer seen_len[1:WR];
            integer seen_bf16[1:WR];
            integer bf16 = 0;  // the current tile's type
            integer i;
            integer j;
            integer t;
            integer tail;
            integer pct_wr;
            integer pm_pop;
            integer seen_full = 0;
            integer seen_push_pop = 0;
            integer seen_push_last = 0;

            always @(negedge clk) begin
                if (!rst) begin
                    if (count !== n || full !== (n == TILES) || empty !== (n == 0)) begin
                        $display(
                            "FAIL: wfifo N=%0d TILES=%0d cycle %0d: count/full/empty expected %0d/%0d/%0d, actual %0d/%b/%b",
                            NN, TILES, cycle, n, n == TILES, n == 0, count, full, empty);
                        $finish;
                    end
                    for (i = 0; i < NN && n > 0; i = i + 1) begin
                        rd_row = i;
                        #0.1;
                        if (rd_data !== model[head*NN+i]) begin
                            $display(
                                "FAIL: wfifo N=%0d TILES=%0d cycle %0d: head tile row %0d expected %h, actual %h",
                                NN, TILES, cycle, i, model[head*NN+i], rd_data);
                            $finish;
                        end
                    end
                end
                // Pop rates in per mille, scaled by NN against the producer's one tile per
                // NN writes: fill outpaces the consumer, drain the reverse, mixed about even.
                case ((cycle / (10 * NN)) % 3)
                    0: begin
                        pct_wr = 90;
                        pm_pop = 200 / NN;
                    end
                    1: begin
                        pct_wr = 10;
                        pm_pop = 500;
                    end
                    default: begin
                        pct_wr = 80;
                        pm_pop = 800 / NN;
                    end
                endcase
                wr_en = 1'b0;
                push  = 1'b0;
                pop   = n > 0 && ($urandom % 1000) < pm_pop;
                if (next == NN && n < TILES) begin
                    // Start a tile of either type: cut it into runs of 1..WR rows (bf16:
                    // WR/2), then shuffle the runs (Fisher-Yates).
                    bf16   = $urandom % 2;
                    n_runs = 0;
                    for (i = 0; i < NN; i = i + run_len[n_runs-1]) begin
                        run_at[n_runs]  = i;
                        run_len[n_runs] = 1 + $urandom % (bf16 ? WR / 2 : WR);
                        if (i + run_len[n_runs] > NN) run_len[n_runs] = NN - i;
                        n_runs = n_runs + 1;
                    end
                    for (i = n_runs - 1; i > 0; i = i - 1) begin
                        j = $urandom % (i + 1);
                        t = run_at[i];
                        run_at[i] = run_at[j];
                        run_at[j] = t;
                        t = run_len[i];
                        run_len[i] = run_len[j];
                        run_len[j] = t;
                    end
                    next = 0;
                end
                if (next < n_runs && ($urandom % 100) < pct_wr) begin
                    wr_en   = 1'b1;
                    wr_row  = run_at[next];
                    wr_rows = run_len[next];
                    wr_bf16 = bf16;
                    if (bf16) seen_bf16[run_len[next]] = seen_bf16[run_len[next]] + 1;
                    else seen_len[run_len[next]] = seen_len[run_len[next]] + 1;
                    for (i = 0; i < NN * WR; i = i + 1) wr_data[8*i+:8] = $urandom;
                    next = next + 1;
                    if (next == n_runs) next = NN;
                    push = next == NN && $urandom % 2;
                    if (push) seen_push_last = seen_push_last + 1;
                end else if (next == NN && n < TILES) begin
                    // The tile is complete but still unpushed: push it now or later.
                    push = $urandom % 2;
                end
                // Mixed traffic: make pushes often coincide with a pop.
                if ((cycle / (10 * NN)) % 3 == 2 && push && n > 0 && $urandom % 2) pop = 1'b1;
                // The model follows the inputs the DUT sees at the next rising edge.
                if (rst) begin
                    head = 0;
                    n = 0;
                    next = NN;
                end else begin
                    if (n == TILES) seen_full = seen_full + 1;
                    if (push && pop) seen_push_pop = seen_push_pop + 1;
                    tail = (head + n) % TILES;
                    if (wr_en)
                        for (i = 0; i < wr_rows; i = i + 1)
                        if (wr_bf16) model[tail*NN+wr_row+i] = wr_data[16*NN*i+:16*NN];
                        else
                            for (j = 0; j < NN; j = j + 1)
                            model[tail*NN+wr_row+i][16*j+:16] = {
                                {8{wr_data[8*NN*i+8*j+7]}}, wr_data[8*NN*i+8*j+:8]
                            };
                    if (push) next = NN;
                    if (pop) head = (head + 1) % TILES;
                    n = n + push - pop;
                end
            end

            initial begin
                for (i = 1; i <= WR; i = i + 1) begin
                    seen_len[i]  = 0;
                    seen_bf16[i] = 0;
                end
                wait (done);
                for (i = 1; i <= WR; i = i + 1)
                if ((seen_len[i] == 0 && i <= NN) || (seen_bf16[i] == 0 && i <= WR / 2)) begin
                    $display("FAIL: wfifo N=%0d TILES=%0d: no %s run of %0d rows written", NN,
                             TILES, seen_len[i] == 0 ? "int8" : "bf16", i);
                    $finish;
                end
                if (seen_full == 0 || seen_push_pop == 0 || seen_push_last == 0) begin
                    $display(
                        "FAIL: wfifo N=%0d TILES=%0d: traffic never reached full (%0d), push+pop together (%0d) or push with the last row (%0d)",
                        NN, TILES, seen_full, seen_push_pop, seen_push_last);
                    $finish;
                end
            end
        end
    endgenerate

    // rst changes just after a rising edge, so the checkers (on the falling edge) and the DUT
    // (on the next rising edge) both see it.
    initial begin
        repeat (2) @(posedge clk);
        #1 rst = 1'b0;
        while (cycle < CYCLES) begin
            @(posedge clk);
            #1 cycle = cycle + 1;
            rst = cycle == RESET_AT;
        end
        done = 1;
        #1;
        $display("PASS");
        $finish;
    end
endmodule
