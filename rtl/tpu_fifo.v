`default_nettype none
// Synchronous FIFO with the head visible combinationally (the instruction queue).
// Push when full and pop when empty are ignored; push and pop in one cycle both happen.
// DEPTH need not be a power of two: the pointers wrap explicitly.
module tpu_fifo #(
    parameter W = 32,
    parameter DEPTH = 4
) (
    input wire clk,
    input wire rst,
    input wire push,
    input wire [W-1:0] din,
    output wire full,
    input wire pop,
    output wire [W-1:0] dout,
    output wire empty,
    output reg [$clog2(DEPTH+1)-1:0] count
);
    localparam PW = (DEPTH > 1) ? $clog2(DEPTH) : 1;
    localparam CW = $clog2(DEPTH + 1);
    localparam integer LAST_I = DEPTH - 1;
    localparam [PW-1:0] LAST = LAST_I[PW-1:0];
    localparam [PW-1:0] PTR_ONE = 1;
    localparam [CW-1:0] CNT_ONE = 1;
    localparam [CW-1:0] CNT_FULL = DEPTH[CW-1:0];

    reg [W-1:0] mem[0:DEPTH-1];
    reg [PW-1:0] head;
    reg [PW-1:0] tail;

    wire do_push = push && !full;
    wire do_pop = pop && !empty;

    assign full  = count == CNT_FULL;
    assign empty = count == {CW{1'b0}};
    assign dout  = mem[head];

    // Storage has no reset: only the pointers say which entries are valid.
    always @(posedge clk) begin
        if (do_push) mem[tail] <= din;
    end

    always @(posedge clk) begin
        if (rst) begin
            head  <= {PW{1'b0}};
            tail  <= {PW{1'b0}};
            count <= {CW{1'b0}};
        end else begin
            if (do_push) tail <= (tail == LAST) ? {PW{1'b0}} : tail + PTR_ONE;
            if (do_pop) head <= (head == LAST) ? {PW{1'b0}} : head + PTR_ONE;
            if (do_push && !do_pop) count <= count + CNT_ONE;
            else if (do_pop && !do_push) count <= count - CNT_ONE;
        end
    end
endmodule
