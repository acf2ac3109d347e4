/* firmware.h - the device firmware's public interface (freestanding C11).
 *
 * The firmware runs on the device's control processor. It reads a command stream from device
 * memory (format: docs/command-stream.md), validates all of it, then expands each command into
 * core instructions (docs/isa.md) pushed into the core's instruction queue. It reaches the core
 * and the memory only through an fw_hal; it uses no libc beyond <stdint.h>/<stddef.h>/<stdbool.h>
 * and no memory but its own fixed-size locals. */
#ifndef TPU_FIRMWARE_FIRMWARE_H
#define TPU_FIRMWARE_FIRMWARE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The control processor's view of the core. */
typedef struct fw_hal {
    void *ctx;
    /* Offer one 128-bit instruction to the instruction queue; costs one clock cycle.
       Returns 1 if accepted, 0 if the queue was full (the firmware retries). */
    int (*iq_push)(void *ctx, const uint32_t insn[4]);
    uint32_t (*reg_read)(void *ctx, uint32_t offset); /* CSR read, no cycle */
    /* Control-processor load from device memory; returns 0, or -1 if outside memory. */
    int (*mem_read)(void *ctx, uint32_t addr, void *dst, uint32_t n);
    /* Spend n cycles of control-processor time (the modelled cost of firmware work). */
    void (*spend)(void *ctx, uint32_t cycles);
} fw_hal;

/* ------------------------------------------------------ command stream -- */
/* All multi-byte fields are little-endian; the byte offsets below are from the start of the
 * structure they belong to. */

#define FW_STREAM_MAGIC 0x53555054u /* the bytes "TPUS" */
/* Version 2 added CONV2D, version 3 the BF16 and OUT_BF16 flags, version 4 REDUCE; versions 1
 * (GEMM only) to 3 are still accepted. */
#define FW_STREAM_VERSION 4u
#define FW_STREAM_VERSION_MIN 1u

/* Header: FW_HEADER_BYTES bytes at the start of the stream, all u32. */
enum fw_header_field {
    FW_HDR_MAGIC = 0,     /* FW_STREAM_MAGIC */
    FW_HDR_VERSION = 4,   /* FW_STREAM_VERSION */
    FW_HDR_BYTES = 8,     /* total stream length, header included */
    FW_HDR_BUFFERS = 12,  /* entries in the buffer table */
    FW_HDR_COMMANDS = 16, /* commands after the buffer table */
    FW_HDR_RESERVED = 20, /* must be zero */
    FW_HEADER_BYTES = 24
};

/* Buffer table: right after the header, one entry per buffer, all u32. Commands name buffers by
 * index; an entry must lie inside device memory (MEM_SIZE). Buffers may overlap each other. */
enum fw_buffer_field {
    FW_BUF_ADDR = 0, /* device byte address */
    FW_BUF_SIZE = 4, /* bytes, >= 1 */
    FW_BUFFER_BYTES = 8
};

/* Commands: after the buffer table, back to back. Every command starts with u16 op, u16 bytes
 * (the command's length, header included, a multiple of 4). */
enum fw_command_op { FW_CMD_GEMM = 1, FW_CMD_CONV2D = 2, FW_CMD_REDUCE = 3 };
enum fw_command_field { FW_CMD_OP = 0, FW_CMD_BYTES = 2 };

/* GEMM: C[m x n] = act(A[m x k] . B[k x n] (+ bias)), all row-major with a leading dimension
 * (row pitch in elements), or B in tile order with FW_GEMM_B_TILED. A is int8 (uint8 with
 * FW_GEMM_A_UNSIGNED), B int8, C int32 or, with FW_GEMM_OUT_INT8, int8 requantized per column.
 * Operands are (buffer index, byte offset). The params operand (used with BIAS or OUT_INT8, else
 * its fields must be zero) is int32 bias[n], mult[n], shift[n] back to back (shift: bits 5:0);
 * see docs/isa.md for the arithmetic.
 * With FW_GEMM_BF16 (stream version 3) A and B are bf16 (2-byte little-endian elements; the
 * leading dimensions stay in elements), the products are summed in fp32 (docs/isa.md "Floating
 * point (bf16)"), the params operand (with BIAS) is fp32 bias[n] alone, and C is fp32, or bf16
 * with FW_GEMM_OUT_BF16. A_UNSIGNED and OUT_INT8 are invalid with BF16, OUT_BF16 without it.
 * All u32. */
enum fw_gemm_field {
    FW_GEMM_FLAGS = 4,
    FW_GEMM_M = 8,
    FW_GEMM_K = 12,
    FW_GEMM_N = 16,
    FW_GEMM_A_BUF = 20,
    FW_GEMM_A_OFF = 24,
    FW_GEMM_LDA = 28,
    FW_GEMM_B_BUF = 32,
    FW_GEMM_B_OFF = 36,
    FW_GEMM_LDB = 40,
    FW_GEMM_C_BUF = 44,
    FW_GEMM_C_OFF = 48,
    FW_GEMM_LDC = 52,
    FW_GEMM_P_BUF = 56,
    FW_GEMM_P_OFF = 60,
    FW_GEMM_BYTES = 64
};

enum fw_gemm_flag {
    FW_GEMM_BIAS = 1u << 0,       /* add bias[j] to column j */
    FW_GEMM_RELU = 1u << 1,       /* clamp at zero (after bias, before requantization) */
    FW_GEMM_OUT_INT8 = 1u << 2,   /* C is int8: requantize with mult[j], shift[j] */
    FW_GEMM_A_UNSIGNED = 1u << 3, /* A is uint8 */
    /* B in tile order for the core's array size N (ARRAY_N), ldb 0: with KT = ceil(k/N) and
     * NT = ceil(n/N), tile (kt, nt) is N rows of N bytes (B rows kt*N.., columns nt*N..),
     * zero-padded past k and n, at byte offset (nt*KT + kt) * N * N; KT*NT*N*N bytes in all.
     * With BF16 the elements are 2 bytes: a tile is N rows of 2N bytes, at (nt*KT + kt) * 2*N*N. */
    FW_GEMM_B_TILED = 1u << 4,
    /* Bit 5 is CONV2D's POOLING. */
    FW_GEMM_BF16 = 1u << 6,     /* A and B bf16, fp32 sums and bias, C fp32 (version 3) */
    FW_GEMM_OUT_BF16 = 1u << 7, /* with BF16: C is bf16, rounded to nearest even */
    FW_GEMM_FLAGS_ALL = FW_GEMM_BIAS | FW_GEMM_RELU | FW_GEMM_OUT_INT8 | FW_GEMM_A_UNSIGNED |
                        FW_GEMM_B_TILED | FW_GEMM_BF16 | FW_GEMM_OUT_BF16
};
/* The flags a stream of version 3 added. */
#define FW_FLAGS_V3 (FW_GEMM_BF16 | FW_GEMM_OUT_BF16)

/* CONV2D (stream version 2): a 2-D convolution of an NHWC int8 (or uint8) input with a kernel
 * in tile order, then bias, ReLU, int8 requantization and max pooling as flagged (with BF16,
 * version 3: input and kernel bf16, summed in fp32 in the kernel's K order, fp32 bias, out fp32
 * or with OUT_BF16 bf16, the flag rules and the parameters of GEMM's BF16; a kernel tile is N
 * rows of 2N bytes, at (nt * KT + kt) * 2*N*N; always pixel by pixel):
 *   out[b][y][x][o] = pool over the window (ph x pw, step psh/psw) of
 *                     act(sum over dy, dx, c of in[b][y*sh + dy - pt][x*sw + dx - pl][c] * k)
 * with zeros outside the input (the padding costs no memory reads), act as GEMM's (bias[o],
 * ReLU, requant with mult[o], shift[o]). out is NHWC: int8 with OUT_INT8 (required by POOL),
 * else int32 (act without requantization). Output rows OH = (h + pt + pb - kh) / sh + 1 and
 * OW likewise; pooled, (OH - ph) / psh + 1 by (OW - pw) / psw + 1 (fw_conv_out_dim).
 * The kernel is in N x N tiles, tile (kt, nt) at byte (nt * KT + kt) * N * N: column j of it is
 * output channel nt * N + j, and its rows are K indices that depend on the layout the firmware
 * streams the input in (docs/command-stream.md "CONV2D"):
 *   - packed runs, when pl = pr = 0 and c is not a multiple of N (never with BF16): per kernel
 *     row dy, the kw * c bytes (dx, channel) of a window row cut in T = ceil(kw * c / N) pieces;
 *     kt = dy * T + t, tile row r is byte t * N + r of the run, i.e. dx = (t * N + r) / c,
 *     channel (...) % c;
 *   - otherwise pixel by pixel: kt = (dy * kw + dx) * CC + cc with CC = ceil(c / N), tile row r
 *     is channel cc * N + r.
 * Rows past the kernel's K (and columns past cout) are zero. fw_conv_tiles gives KT. */
enum fw_conv_field {
    FW_CONV_FLAGS = 4,
    FW_CONV_BATCH = 8,
    FW_CONV_H = 12, /* input height, width, channels */
    FW_CONV_W = 16,
    FW_CONV_C = 20,
    FW_CONV_KH = 24, /* kernel height and width */
    FW_CONV_KW = 28,
    FW_CONV_COUT = 32,   /* output channels */
    FW_CONV_STRIDE = 36, /* u16 sh, u16 sw */
    FW_CONV_PAD = 40,    /* u8 top, bottom, left, right */
    FW_CONV_POOL = 44,   /* u8 ph, pw, psh, psw with FW_CONV_POOLING, else 0 */
    FW_CONV_IN_BUF = 48,
    FW_CONV_IN_OFF = 52,
    FW_CONV_K_BUF = 56,
    FW_CONV_K_OFF = 60,
    FW_CONV_OUT_BUF = 64,
    FW_CONV_OUT_OFF = 68,
    FW_CONV_P_BUF = 72,
    FW_CONV_P_OFF = 76,
    FW_CONV_BYTES = 80
};

enum fw_conv_flag {
    FW_CONV_BIAS = FW_GEMM_BIAS, /* the flags GEMM has, the same bits */
    FW_CONV_RELU = FW_GEMM_RELU,
    FW_CONV_OUT_INT8 = FW_GEMM_OUT_INT8,
    FW_CONV_A_UNSIGNED = FW_GEMM_A_UNSIGNED,
    FW_CONV_POOLING = 1u << 5,   /* max pooling after the activation (needs OUT_INT8, or with
                                    BF16 OUT_BF16: the pool runs in ACTIVATE, which writes the UB) */
    FW_CONV_BF16 = FW_GEMM_BF16, /* input and kernel bf16, fp32 sums and bias, out fp32 */
    FW_CONV_OUT_BF16 = FW_GEMM_OUT_BF16, /* with BF16: out bf16 */
    FW_CONV_FLAGS_ALL = FW_CONV_BIAS | FW_CONV_RELU | FW_CONV_OUT_INT8 | FW_CONV_A_UNSIGNED |
                        FW_CONV_POOLING | FW_CONV_BF16 | FW_CONV_OUT_BF16
};

/* The core's limits on a convolution's geometry (the hardware's field widths). */
#define FW_CONV_STRIDE_MAX 255u /* MATMUL's UB row stride */
#define FW_CONV_POOL_MAX 15u    /* ACTIVATE.POOL's window */

/* One dimension of CONV2D's output (above): (in + pad_lo + pad_hi - k) / stride + 1, and with
 * pooling of that (that - window) / window_stride + 1; 0 when the kernel or the window does not
 * fit or a stride is 0. */
static inline uint64_t fw_conv_out_dim(uint32_t in, uint32_t pad_lo, uint32_t pad_hi, uint32_t k,
                                       uint32_t stride, int pooling, uint32_t window,
                                       uint32_t window_stride)
{
    const uint64_t padded = (uint64_t)in + pad_lo + pad_hi;
    if (!k || !stride || k > padded)
        return 0;
    const uint64_t out = (padded - k) / stride + 1;
    if (!pooling)
        return out;
    if (!window || !window_stride || window > out)
        return 0;
    return (out - window) / window_stride + 1;
}

/* Whether CONV2D streams the input in packed runs (see above; never with BF16), and K tiles of
 * its kernel. */
static inline int fw_conv_packed(uint32_t flags, uint32_t c, uint32_t pad_left, uint32_t pad_right,
                                 uint32_t n)
{
    return !(flags & FW_CONV_BF16) && pad_left == 0 && pad_right == 0 && c % n != 0;
}
static inline uint64_t fw_conv_tiles(uint32_t kh, uint32_t kw, uint32_t c, int packed, uint32_t n)
{
    /* In 64 bits: a package reader sizes kernels of fields not yet validated with it. */
    const uint64_t h = kh, w = kw, ch = c;
    return packed ? h * ((w * ch + n - 1) / n) : h * w * ((ch + n - 1) / n);
}

/* REDUCE (stream version 4): the element-wise sum of `sources` buffers of `elements` 32-bit
 * elements, added in source order, written to each of `destinations` buffers:
 *   dst_d[e] = ((src_0[e] + src_1[e]) + src_2[e]) + ... for e < elements, every d
 * in int32 (wrapping), or with FW_REDUCE_F32 in fp32 (each add docs/isa.md's fp32_add: rounded
 * to nearest even, subnormals read and returned as zeros, NaN the canonical one; one source is
 * copied bit for bit). The operands, (buffer index, byte offset) pairs, follow the fixed fields:
 * the sources, then the destinations; the command is FW_REDUCE_BYTES(sources, destinations)
 * bytes. Each operand is 4-byte aligned. A destination is either one of the sources (the same
 * address: in place) or apart from all of them, and apart from the other destinations. The
 * all-reduce of data-parallel replicas: each core sums its slice of every replica's buffer and
 * writes the sum into the first replica's, in place, which all of them read. All u32. */
enum fw_reduce_field {
    FW_REDUCE_FLAGS = 4,
    FW_REDUCE_ELEMENTS = 8,
    FW_REDUCE_SOURCES = 12,
    FW_REDUCE_DESTINATIONS = 16,
    FW_REDUCE_OPERANDS = 20, /* u32 buf, u32 off per operand */
    FW_REDUCE_OPERAND_BYTES = 8
};
#define FW_REDUCE_MAX 8u /* sources, and destinations, at most */
#define FW_REDUCE_BYTES(sources, destinations) \
    (FW_REDUCE_OPERANDS + FW_REDUCE_OPERAND_BYTES * ((sources) + (destinations)))
enum fw_reduce_flag { FW_REDUCE_F32 = 1u << 0, FW_REDUCE_FLAGS_ALL = FW_REDUCE_F32 };

/* ------------------------------------------------------------ cost model -- */
/* Control-processor cycles (hal->spend): once per stream for reading the ID registers, header
 * and buffer table, then once per command for decoding and validating it. Each instruction push
 * costs one more cycle (the push itself, retries included). */
#define FW_CYCLES_STREAM 64u
#define FW_CYCLES_COMMAND 128u

/* ---------------------------------------------------------------- result -- */

enum fw_error {
    FW_OK = 0,
    FW_ERR_HW = 1,      /* the core's ID registers: not a supported core (field: register) */
    FW_ERR_HEADER = 2,  /* the stream header or the stream's extent (field: header field) */
    FW_ERR_BUFFER = 3,  /* a buffer-table entry (buf: its index; field: "addr" or "size") */
    FW_ERR_COMMAND = 4, /* a command (cmd: its index; field: see docs/command-stream.md) */
    FW_ERR_MEM = 5,     /* hal->mem_read refused a read inside MEM_SIZE (field: "stream") */
    FW_ERR_CORE = 6,    /* the core is stopped with an error (found at start, or when a push
                           is refused); cmd: command being expanded, FW_NO_INDEX before the
                           first or at the final HALT; core_error: ERROR_CODE; field: "STATUS" */
};

#define FW_NO_INDEX 0xffffffffu

typedef struct fw_result {
    int code;            /* enum fw_error */
    uint32_t cmd;        /* command index for FW_ERR_COMMAND and FW_ERR_CORE, else FW_NO_INDEX */
    uint32_t buf;        /* buffer index for FW_ERR_BUFFER, else FW_NO_INDEX */
    const char *field;   /* static string naming the failing field; "" on success */
    const char *why;     /* static string: what is wrong with it ("zero", "not a buffer-table
                            index", ...; docs/command-stream.md "Validation"); "" on success */
    uint32_t core_error; /* the core's ERROR_CODE for FW_ERR_CORE, else 0 */
    uint64_t insns;      /* instructions pushed */
} fw_result;

/* Validate the whole stream of stream_bytes bytes at device address stream_addr; if it is valid,
 * expand every command (each followed by SYNC) and push HALT. Nothing is pushed unless the
 * whole stream is valid. Returns res->code. The caller runs the core to the HALT. */
int fw_run(const fw_hal *hal, uint32_t stream_addr, uint32_t stream_bytes, fw_result *res);

#ifdef __cplusplus
}
#endif
#endif
