/* conv.c - convolutions on the device: which ones the CONV2D command runs, their kernels in
 * (kh, kw, c) x cout order, which max poolings fuse into them, which run packed, and the sum
 * poolings (an average's, windowed or global as jnp.mean's reduce) that run as depthwise
 * convolutions of ones (docs/compiler.md).
 *
 * Packed: CONV2D's K tiles hold one kernel position's channels (or, packed runs, one kernel row:
 * kw * c), so a first layer of one channel fills 1 or kw of the array's N rows. When the input
 * comes from the host, its transfer can gather each output pixel's whole receptive field (kh *
 * kw * c elements, zeros for padding) as one pixel, and a 1x1 CONV2D over those channels fills
 * the rows: the same kernel rows in the same order, so the same sums, for kh * kw / (sh * sw)
 * times the input's bytes. The compiler packs when that takes fewer MXU slots.
 *
 * Grouped and dilated convolutions run as the dense convolution they equal: a kernel dilated by d
 * is a kernel (k - 1) * d + 1 wide with zeros between its taps, and G feature groups are one
 * convolution over all c input channels whose kernel is zero outside each output channel's group
 * (block-diagonal), as XLA's convolution group converter expands them ("filter expansion"). The
 * zeros cost MACs (G times, or the dilated window's area over the taps'), which the report shows.
 *
 * A pooling fuses when the device's requant(max over the window of relu(acc + bias)) is the
 * quantized HLO result: the maximum commutes with ReLU and with the requantization (both are
 * monotonic, mult > 0) and with adding a per-channel bias (constant over a spatial window), so
 * pooling before or after the bias or the ReLU gives the same values. An init value that could
 * exceed a window's maximum would change it: -inf (or the lowest float) fuses anywhere, and a
 * value <= 0 after a ReLU (the window's maximum is then >= 0). */
#include "compiler/tpuc_internal.h"

#include <float.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The device's limits on a window: strides and pads (u8 fields) and pooling windows. */
#define STRIDE_MAX 255
#define PAD_MAX 255
#define POOL_MAX 15
#define DIM_MAX 65535 /* h, w, c, cout: the core's row fields */

/* The one window dimension of a 1-D convolution's (or pooling's) height on the device. */
static const hlo_window_dim unit_window = {
    .size = 1, .stride = 1, .lhs_dilate = 1, .rhs_dilate = 1};

/* A window dimension's input of n pixels dilated by lhs_dilate, then padded: how many of the
 * dilated pixels negative padding drops at the start (*crop) and the size left (<= 0: none). */
static int64_t dilated(int64_t n, const hlo_window_dim *wd, uint32_t *crop)
{
    *crop = (uint32_t)(wd->pad_lo < 0 ? -wd->pad_lo : 0);
    return (n - 1) * wd->lhs_dilate + 1 - *crop - (wd->pad_hi < 0 ? -wd->pad_hi : 0);
}

const char *tc_device_conv(tc_graph *g, int d, tc_op *op)
{
    const tc_node *nd = &g->nodes[d];
    const hlo_instr *in = nd->src;
    const tc_node *l = &g->nodes[nd->in[0]], *r = &g->nodes[nd->in[1]];
    const char *why = tc_device_types(l, r, nd, &op->exact);
    if (why)
        return why;
    const hlo_conv_dims *dl = &in->dim_labels;
    if (dl->n_spatial != 1 && dl->n_spatial != 2)
        return "not a 1-D or 2-D convolution (the device convolves one or two spatial "
               "dimensions)";
    /* A 1-D convolution is a 2-D one of height 1 (its window a unit one in that dimension). */
    const bool one_d = dl->n_spatial == 1;
    const hlo_window_dim *wy = one_d ? &unit_window : &in->window.dims[0];
    const hlo_window_dim *wx = &in->window.dims[one_d ? 0 : 1];
    if (wy->stride > STRIDE_MAX || wx->stride > STRIDE_MAX)
        return "a stride beyond the device's 1..255";
    if (wy->pad_lo > PAD_MAX || wy->pad_hi > PAD_MAX || wx->pad_lo > PAD_MAX ||
        wx->pad_hi > PAD_MAX)
        return "padding beyond the device's 255 on a side";
    const int64_t *ld = l->shape.dims, *kd = r->shape.dims;
    /* G batch groups are G feature groups of one group's batch: the device's channel g * c + ci
     * is channel ci of image g * b + n (input_at), as XLA's batch group converter regroups them. */
    const int64_t bg = in->batch_group_count;
    const int64_t b = ld[dl->input_batch_dim] / bg, c = ld[dl->input_feature_dim] * bg;
    /* The device convolves the input as dilated and cropped by its transfer (a gather). */
    const int64_t h = one_d ? 1 : dilated(ld[dl->input_spatial_dims[0]], wy, &op->crop_top);
    const int64_t w = dilated(ld[dl->input_spatial_dims[one_d ? 0 : 1]], wx, &op->crop_left);
    const int64_t cout = kd[dl->kernel_output_feature_dim];
    if (nd->shape.elements == 0 || l->shape.elements == 0 || r->shape.elements == 0 || h < 1 ||
        w < 1)
        return "an empty operand or result (or negative padding dropping the whole input)";
    const int64_t kh = one_d ? 1 : (kd[dl->kernel_spatial_dims[0]] - 1) * wy->rhs_dilate + 1;
    const int64_t kw = (kd[dl->kernel_spatial_dims[one_d ? 0 : 1]] - 1) * wx->rhs_dilate + 1;
    if (h > DIM_MAX || w > DIM_MAX || c > DIM_MAX || cout > DIM_MAX || b > UINT32_MAX ||
        kh > DIM_MAX || kw > DIM_MAX)
        return "dimensions beyond the CONV2D command's (height, width, channels and kernel at "
               "most 65535)";
    const uint64_t in_elements = (uint64_t)b * h * w * c;
    if (in_elements > UINT32_MAX || (uint64_t)nd->shape.elements * 4 > UINT32_MAX)
        return "its input or result is beyond the device's 4 GiB of addresses";
    op->lhs_h = (uint32_t)wy->lhs_dilate;
    op->lhs_w = (uint32_t)wx->lhs_dilate;
    op->in_gather = op->lhs_h > 1 || op->lhs_w > 1 || wy->pad_lo < 0 || wy->pad_hi < 0 ||
                    wx->pad_lo < 0 || wx->pad_hi < 0 || bg > 1;
    if (op->in_gather && in_elements > TC_GATHER_MAX)
        return "its input, dilated (lhs_dilate) or cropped (negative padding) by a gathering "
               "transfer, is larger than TC_GATHER_MAX elements";
    const bool bf16 = g->bf16 && !op->exact;
    if (bf16 && wx->stride > STRIDE_MAX / 2)
        return "a bf16 convolution's horizontal stride beyond the device's 1..127 (MATMUL steps "
               "over UB row pairs)";
    op->own = (tpub_conv){
        /* the UB rows an int8 (bf16) result needs: placed conservatively */
        .flags = bf16 ? TPUB_GEMM_BF16 | TPUB_GEMM_OUT_BF16 : TPUB_GEMM_OUT_INT8,
        .batch = (uint32_t)b,
        .h = (uint32_t)h,
        .w = (uint32_t)w,
        .c = (uint32_t)c,
        .kh = (uint32_t)kh,
        .kw = (uint32_t)kw,
        .cout = (uint32_t)cout,
        .stride_h = (uint32_t)wy->stride,
        .stride_w = (uint32_t)wx->stride,
        .pad_top = (uint32_t)(wy->pad_lo > 0 ? wy->pad_lo : 0),
        .pad_bottom = (uint32_t)(wy->pad_hi > 0 ? wy->pad_hi : 0),
        .pad_left = (uint32_t)(wx->pad_lo > 0 ? wx->pad_lo : 0),
        .pad_right = (uint32_t)(wx->pad_hi > 0 ? wx->pad_hi : 0),
    };
    if (!tc_conv_fits(&op->own, g->array_n))
        return "a row of its output does not fit the core's unified buffer and accumulators "
               "(docs/compiler.md)";
    const uint32_t N = g->array_n;
    if (r->role != TC_CONST &&
        tpub_conv_k_tiles(&op->own, N) * ((op->own.cout + N - 1) / N) * N * N > TC_GATHER_MAX)
        return "its kernel is computed at run time and, in tile order, larger than "
               "TC_GATHER_MAX elements (its transfer gathers it)";
    op->w = r->role == TC_CONST ? -1 : nd->in[1];
    op->conv_rank = dl->n_spatial + 2;
    op->in_nhwc[0] = dl->input_batch_dim;
    op->out_nhwc[0] = dl->output_batch_dim;
    for (int k = 0; k < dl->n_spatial; k++) {
        op->in_nhwc[1 + k] = dl->input_spatial_dims[k];
        op->out_nhwc[1 + k] = dl->output_spatial_dims[k];
    }
    op->in_nhwc[op->conv_rank - 1] = dl->input_feature_dim;
    op->out_nhwc[op->conv_rank - 1] = dl->output_feature_dim;
    op->groups = (uint32_t)(in->feature_group_count * bg); /* one of them is 1 */
    op->batch_groups = (uint32_t)bg;
    op->dil_h = (uint32_t)wy->rhs_dilate;
    op->dil_w = (uint32_t)wx->rhs_dilate;
    op->batch = 1;
    op->k = op->own.kh * op->own.kw * op->own.c;
    op->n = (uint32_t)cout;
    for (int k = 0; k < r->shape.rank; k++)
        op->kdim[k] = k;
    return NULL;
}

/* Where kernel element idx (of the convolution's kernel operand) goes in the (kh, kw, c) x cout
 * weights, row-major: output channel o reads its group's input channels g * cg.. with g = o /
 * (cout / groups), and tap (dy, dx) its dilated place. */
static size_t kernel_at(const tc_op *op, const hlo_conv_dims *dl, const int64_t *idx)
{
    const size_t cg = op->own.c / op->groups, og = op->n / op->groups;
    const bool one_d = dl->n_spatial == 1;
    const size_t o = (size_t)idx[dl->kernel_output_feature_dim];
    const size_t dy = one_d ? 0 : (size_t)idx[dl->kernel_spatial_dims[0]];
    const size_t dx = (size_t)idx[dl->kernel_spatial_dims[one_d ? 0 : 1]];
    const size_t row = (dy * op->dil_h * op->own.kw + dx * op->dil_w) * op->own.c + o / og * cg +
                       (size_t)idx[dl->kernel_input_feature_dim];
    return row * op->n + o;
}

static void next_index(int64_t *idx, const hlo_shape *s)
{
    for (int d = s->rank - 1; d >= 0 && ++idx[d] == s->dims[d]; d--)
        idx[d] = 0;
}

int tc_take_kernel(tc_graph *g, tc_op *op)
{
    const tc_node *nd = &g->nodes[op->dot];
    const hlo_array *k = g->nodes[nd->in[1]].value;
    const size_t count = (size_t)op->k * op->n;
    if (op->exact ? !(op->wq = calloc(count, 1)) : !(op->wf = calloc(count, sizeof(float))))
        return tc_oom(g, op->dot, "the kernel", count * (op->exact ? 1 : sizeof(float)));
    int64_t idx[HLO_MAX_RANK] = {0};
    for (int64_t e = 0; e < k->shape.elements; e++, next_index(idx, &k->shape)) {
        const size_t at = kernel_at(op, &nd->src->dim_labels, idx);
        if (op->exact)
            op->wq[at] = ((const int8_t *)k->data)[e];
        else
            op->wf[at] = (float)hlo_array_get(k, e);
    }
    return 0;
}

void tc_kernel_source(tc_graph *g, tc_op *op)
{
    for (tc_node *nd = &g->nodes[op->w];
         nd->role == TC_HOST && nd->n_in == 1 && tc_only_user(g, op->w) >= 0 &&
         (nd->src->opcode == HLO_OP_REVERSE || nd->src->opcode == HLO_OP_TRANSPOSE ||
          nd->src->opcode == HLO_OP_COPY);
         nd = &g->nodes[op->w]) {
        /* Kernel index idx reads this node at [kdim[d]] = idx[d] (reversed with krev[d]). A
         * reverse reads its operand at the same index, reversed in its dimensions; a transpose
         * reads dim dimensions[i] of its operand at its own dim i. */
        const hlo_ints *dims = &nd->src->dimensions;
        for (int d = 0; d < g->nodes[op->dot].src->dim_labels.n_spatial + 2; d++)
            if (nd->src->opcode == HLO_OP_TRANSPOSE)
                op->kdim[d] = (int)dims->v[op->kdim[d]];
            else
                for (int i = 0; nd->src->opcode == HLO_OP_REVERSE && i < dims->n; i++)
                    op->krev[d] ^= dims->v[i] == op->kdim[d];
        nd->role = TC_VIEW;
        op->w = nd->in[0];
    }
}

int64_t tc_conv_tile_row(const tpub_conv *v, uint32_t n, uint32_t t, uint32_t r)
{
    const uint32_t runs = (v->kw * v->c + n - 1) / n, cc = (v->c + n - 1) / n;
    uint32_t dy, dx, ci;
    if (tpub_conv_packed(v, n)) { /* byte t % runs * n + r of kernel row t / runs */
        const uint32_t byte = t % runs * n + r;
        if (byte >= v->kw * v->c)
            return -1;
        dy = t / runs;
        dx = byte / v->c;
        ci = byte % v->c;
    } else { /* channel cc * n + r of one (dy, dx) */
        dy = t / cc / v->kw;
        dx = t / cc % v->kw;
        ci = t % cc * n + r;
        if (ci >= v->c)
            return -1;
    }
    return ((int64_t)dy * v->kw + dx) * v->c + ci;
}

/* Row-major index into dims of index idx. */
static uint64_t flat(const int64_t *idx, const hlo_shape *s)
{
    uint64_t at = 0;
    for (int d = 0; d < s->rank; d++)
        at = at * (uint64_t)s->dims[d] + (uint64_t)idx[d];
    return at;
}

/* The kernel's gather: each weight's host element through kernel_at and kdim/krev, then the
 * tile order's rows (tile (kt, nt) at (nt * KT + kt) * N * N, column j output channel nt * N +
 * j). */
static uint32_t *kernel_gather(const tc_graph *g, const tc_op *op, uint64_t *count)
{
    const tc_node *nd = &g->nodes[op->dot];
    const hlo_shape *ks = &g->nodes[nd->in[1]].shape, *src = &g->nodes[op->w].shape;
    const uint32_t N = g->array_n, KT = (uint32_t)tpub_conv_k_tiles(&op->cv, N);
    const uint32_t NT = (op->n + N - 1) / N;
    *count = (uint64_t)KT * NT * N * N;
    uint32_t *of = malloc((size_t)op->k * op->n * sizeof *of);
    uint32_t *gather = malloc((size_t)*count * sizeof *gather);
    if (!of || !gather) {
        free(of);
        free(gather);
        return NULL;
    }
    for (size_t i = 0; i < (size_t)op->k * op->n; i++)
        of[i] = TPUB_GATHER_ZERO;
    for (uint64_t i = 0; i < *count; i++)
        gather[i] = TPUB_GATHER_ZERO;
    int64_t idx[HLO_MAX_RANK] = {0}, at[HLO_MAX_RANK];
    for (int64_t e = 0; e < ks->elements; e++, next_index(idx, ks)) {
        for (int d = 0; d < ks->rank; d++)
            at[op->kdim[d]] = op->krev[d] ? src->dims[op->kdim[d]] - 1 - idx[d] : idx[d];
        of[kernel_at(op, &nd->src->dim_labels, idx)] = (uint32_t)flat(at, src);
    }
    for (uint32_t t = 0; t < KT; t++)
        for (uint32_t r = 0; r < N; r++) {
            const int64_t row = tc_conv_tile_row(&op->cv, N, t, r);
            for (uint32_t o = 0; row >= 0 && o < op->n; o++)
                gather[((uint64_t)(o / N) * KT + t) * N * N + r * N + o % N] =
                    of[(size_t)row * op->n + o];
        }
    free(of);
    return gather;
}

/* The host element of channel ci at pixel (y, x) of image b of op's input as the convolution
 * reads it (dilated and cropped: host pixel ((y + crop_top) / lhs_h, (x + crop_left) / lhs_w);
 * with batch groups, channel ci % cg of image ci / cg * batch + b), or a zero where those do not
 * divide and outside the input (padding). */
static uint32_t input_at(const tc_op *op, const hlo_shape *s, uint32_t b, int64_t y, int64_t x,
                         uint32_t ci)
{
    const int r = op->conv_rank;
    const int64_t yy = y + op->crop_top, xx = x + op->crop_left;
    if (y < 0 || x < 0 || y >= op->own.h || x >= op->own.w || yy % op->lhs_h || xx % op->lhs_w)
        return TPUB_GATHER_ZERO;
    const uint32_t cg = op->own.c / op->batch_groups;
    int64_t at[HLO_MAX_RANK] = {0};
    at[op->in_nhwc[0]] = (int64_t)(ci / cg) * op->own.batch + b;
    if (r == 4)
        at[op->in_nhwc[1]] = yy / op->lhs_h;
    at[op->in_nhwc[r - 2]] = xx / op->lhs_w;
    at[op->in_nhwc[r - 1]] = ci % cg;
    return (uint32_t)flat(at, s);
}

/* The input's gather: the device's NHWC input is the convolution's (input_at), or packed, its
 * output pixel (y, x)'s receptive field: channel (dy * kw + dx) * c + ci is input pixel (y * sh +
 * dy - pad_top, x * sw + dx - pad_left)'s ci. */
static uint32_t *input_gather(const tc_graph *g, const tc_op *op, uint64_t *count)
{
    const tpub_conv *v = &op->cv, *o = &op->own;
    const hlo_shape *s = &g->nodes[op->x].shape;
    *count = (uint64_t)v->batch * v->h * v->w * v->c;
    uint32_t *gather = malloc((size_t)*count * sizeof *gather);
    if (!gather)
        return NULL;
    uint64_t i = 0;
    for (uint32_t b = 0; b < v->batch; b++)
        for (uint32_t y = 0; y < v->h; y++)
            for (uint32_t x = 0; x < v->w; x++)
                for (uint32_t c = 0; c < v->c; c++, i++) {
                    const uint32_t tap = c / o->c;
                    gather[i] = !op->packed
                                    ? input_at(op, s, b, y, x, c)
                                    : input_at(op, s, b,
                                               (int64_t)y * o->stride_h + tap / o->kw - o->pad_top,
                                               (int64_t)x * o->stride_w + tap % o->kw - o->pad_left,
                                               c % o->c);
                }
    return gather;
}

uint32_t *tc_conv_gather(const tc_graph *g, const tc_op *op, bool kernel, uint64_t *count)
{
    return kernel ? kernel_gather(g, op, count) : input_gather(g, op, count);
}

void tc_conv_pack(tc_graph *g, tc_op *op)
{
    const uint32_t N = g->array_n;
    const tpub_conv *v = &op->own;
    op->cv = *v;
    if (op->via >= 0) /* read in place: no transfer to gather it */
        return;
    tpub_conv unpooled = *v;
    unpooled.flags &= ~(uint32_t)TPUB_CONV_POOL;
    uint32_t oh, ow;
    tpub_conv_out_size(&unpooled, &oh, &ow);
    tpub_conv p = *v;
    p.h = oh;
    p.w = ow;
    p.c = op->k;
    p.kh = p.kw = p.stride_h = p.stride_w = 1;
    p.pad_top = p.pad_bottom = p.pad_left = p.pad_right = 0;
    const uint64_t pixels = (uint64_t)v->batch * oh * ow, nt = (v->cout + N - 1) / N;
    op->slots[0] = tpub_conv_k_tiles(v, N) * nt * pixels;
    op->slots[1] = tpub_conv_k_tiles(&p, N) * nt * pixels;
    if (g->no_conv_packing || op->slots[1] >= op->slots[0] || op->k > DIM_MAX ||
        pixels * op->k > TC_GATHER_MAX || !tc_conv_fits(&p, N))
        return;
    op->cv = p;
    op->packed = true;
}

/* Computation comp returns op (maximum, add) of its two parameters. */
static bool reducer_is(const hlo_module *m, int comp, hlo_opcode op)
{
    if (comp < 0)
        return false;
    const hlo_computation *c = &m->comps[comp];
    const hlo_instr *r = &c->instrs[c->root];
    if (r->opcode != op || r->n_operands != 2)
        return false;
    const hlo_instr *a = &c->instrs[r->operands[0].index], *b = &c->instrs[r->operands[1].index];
    return a->opcode == HLO_OP_PARAMETER && b->opcode == HLO_OP_PARAMETER &&
           a->parameter_number != b->parameter_number;
}

const char *tc_device_pool(tc_graph *g, tc_op *op, int u)
{
    const tc_node *nd = &g->nodes[u];
    const hlo_instr *in = nd->src;
    if (nd->elem >= 0 || nd->n_in != 2 || nd->in[0] != op->out || nd->in[1] == op->out)
        return "a variadic reduce-window does not fuse into a convolution";
    if (op->exact)
        return "max pooling on the device requantizes to int8: an integer convolution's exact "
               "s32 result is pooled on the host";
    /* op->own.flags has BF16 for a bf16 convolution (tc_device_conv), whose pooling writes bf16 */
    if (!reducer_is(g->m, in->to_apply, HLO_OP_MAXIMUM))
        return "only max pooling fuses into a convolution (its reducer is not maximum)";
    const tc_node *init = &g->nodes[nd->in[1]];
    if (init->role != TC_CONST)
        return "its initial value is computed at run time";
    const double v = hlo_array_get(init->value, 0);
    if (!(v <= -FLT_MAX || (v <= 0 && op->relu >= 0)))
        return "its initial value could exceed a window's maximum (-inf fuses, or <= 0 after a "
               "ReLU)";
    const int *o = op->out_nhwc, r = op->conv_rank;
    for (int d = 0; d < r; d++) {
        const hlo_window_dim *wd = &in->window.dims[d];
        if (wd->pad_lo || wd->pad_hi)
            return "padded pooling (the device pools inside the convolution's result)";
        if (wd->lhs_dilate != 1 || wd->rhs_dilate != 1)
            return "dilated pooling";
        if ((d == o[0] || d == o[r - 1]) && (wd->size != 1 || wd->stride != 1))
            return "pooling across images or channels (the device pools the spatial "
                   "dimensions)";
    }
    const hlo_window_dim *py = r == 3 ? &unit_window : &in->window.dims[o[1]];
    const hlo_window_dim *px = &in->window.dims[o[r - 2]];
    if (py->size > POOL_MAX || px->size > POOL_MAX || py->stride > STRIDE_MAX ||
        px->stride > STRIDE_MAX)
        return "a pooling window beyond the device's 1..15 (steps 1..255)";
    tpub_conv cv = op->own;
    cv.flags |=
        TPUB_CONV_POOL | (cv.flags & TPUB_GEMM_BF16 ? TPUB_GEMM_OUT_BF16 : TPUB_GEMM_OUT_INT8);
    cv.pool_h = (uint32_t)py->size;
    cv.pool_w = (uint32_t)px->size;
    cv.pool_stride_h = (uint32_t)py->stride;
    cv.pool_stride_w = (uint32_t)px->stride;
    if (!tc_conv_fits(&cv, g->array_n))
        return "the pooled convolution's output rows do not fit the core's unified buffer and "
               "accumulators";
    op->own = cv;
    return NULL;
}

/* The window dimension of reduce-window in that leaves its operand's dim d as it is. */
static bool trivial_window(const hlo_instr *in, int d)
{
    const hlo_window_dim *wd = &in->window.dims[d];
    return wd->size == 1 && wd->stride == 1 && !wd->pad_lo && !wd->pad_hi && wd->lhs_dilate == 1 &&
           wd->rhs_dilate == 1;
}

/* The channel dim of reduce in over an operand of rank r, when it reduces the operand's dims
 * but 0 and that one: a global sum pooling (jnp.mean's sum over H and W, NHWC or NCHW); else
 * -1. */
static int global_sum_channels(const hlo_instr *in, int r)
{
    const hlo_ints *d = &in->dimensions;
    if (in->opcode != HLO_OP_REDUCE || r != 4 || d->n != 2)
        return -1;
    const int lo = (int)(d->v[0] < d->v[1] ? d->v[0] : d->v[1]),
              hi = (int)(d->v[0] < d->v[1] ? d->v[1] : d->v[0]);
    return lo == 1 && hi == 2 ? 3 : lo == 2 && hi == 3 ? 1 : -1;
}

int tc_sum_pool(tc_graph *g, const hlo_instr *in, const int *ops, int *node)
{
    *node = -1;
    const tc_node *x = &g->nodes[ops[0]];
    const tc_node *iv = &g->nodes[ops[1]];
    while (iv->src->opcode == HLO_OP_BROADCAST && iv->n_in == 1) /* of a scalar: StableHLO's */
        iv = &g->nodes[iv->in[0]];
    const hlo_instr *init = iv->src;
    const int r = x->shape.rank, ns = r - 2;
    /* One image dim (0) and one channel dim (the last, or 1) the window leaves alone; the others
     * are the convolution's spatial dims, in order. A reduce's window is the whole plane. */
    if (in->n_operands != 2 || (r != 3 && r != 4))
        return 0;
    const int global = global_sum_channels(in, r);
    const int fd = in->opcode == HLO_OP_REDUCE ? global : trivial_window(in, r - 1) ? r - 1 : 1;
    if (fd < 0 || !hlo_is_float(x->shape.type) || !reducer_is(g->m, in->to_apply, HLO_OP_ADD) ||
        init->opcode != HLO_OP_CONSTANT || init->n_literal != 1 || init->literal[0] != 0 ||
        (global < 0 && (!trivial_window(in, 0) || !trivial_window(in, fd))))
        return 0;
    hlo_instr *conv = calloc(1, sizeof *conv), *kern = calloc(1, sizeof *kern),
              *flat = global >= 0 ? calloc(1, sizeof *flat) : NULL;
    hlo_instr **made = realloc(g->made, ((size_t)g->n_made + 3) * sizeof *made);
    hlo_window_dim *wd = calloc((size_t)ns, sizeof *wd);
    hlo_array *ones = NULL;
    if (made)
        g->made = made;
    if (!conv || !kern || (global >= 0 && !flat) || !made || !wd) {
        free(conv);
        free(kern);
        free(flat);
        free(wd);
        return tc_fail(g, in, "out of memory");
    }
    g->made[g->n_made++] = conv;
    g->made[g->n_made++] = kern;
    if (flat)
        g->made[g->n_made++] = flat;
    /* A convolution of feature_group_count = c (depthwise) with a kernel of ones, b01f_01io ->
     * b01f in the operand's own dim order: its zero padding is the init value 0's. A global
     * one's result has its spatial dims of size 1: flat, a reshape to the reduce's shape, is the
     * reduce's value. */
    const int64_t c = x->shape.dims[fd];
    int64_t kd[HLO_MAX_RANK];
    *conv = *in;
    conv->opcode = HLO_OP_CONVOLUTION;
    conv->to_apply = -1;
    conv->feature_group_count = c;
    conv->batch_group_count = 1;
    conv->window = (hlo_window){.present = true, .rank = ns, .dims = wd};
    if (global >= 0) {
        conv->shape = x->shape;
        for (int d = 1; d < r; d++)
            conv->shape.dims[d] = d == fd ? c : 1;
        conv->shape.elements = x->shape.dims[0] * c;
        hlo_instr_init(flat);
        flat->opcode = HLO_OP_RESHAPE;
        flat->opcode_name = "reshape";
        flat->name = in->name;
        flat->shape = in->shape;
    }
    hlo_conv_dims *dl = &conv->dim_labels;
    *dl = (hlo_conv_dims){.present = true,
                          .n_spatial = ns,
                          .kernel_input_feature_dim = ns,
                          .kernel_output_feature_dim = ns + 1};
    dl->input_batch_dim = dl->output_batch_dim = 0;
    dl->input_feature_dim = dl->output_feature_dim = fd;
    for (int d = 1, k = 0; d < r; d++) {
        if (d == fd)
            continue;
        wd[k] = global >= 0 ? (hlo_window_dim){.size = x->shape.dims[d],
                                               .stride = 1,
                                               .lhs_dilate = 1,
                                               .rhs_dilate = 1}
                            : in->window.dims[d];
        kd[k] = wd[k].size;
        dl->input_spatial_dims[k] = dl->output_spatial_dims[k] = d;
        dl->kernel_spatial_dims[k] = k;
        k++;
    }
    kd[ns] = 1;
    kd[ns + 1] = c;
    if (!(ones = hlo_array_new(x->shape.type, r, kd)))
        return tc_fail(g, in, "out of memory");
    for (int64_t e = 0; e < ones->shape.elements; e++)
        hlo_array_set(ones, e, 1);
    const size_t len = strlen(in->name) + sizeof ".ones";
    *kern = *in;
    kern->window = (hlo_window){0};
    if (!(kern->name = malloc(len))) {
        hlo_array_free(ones);
        return tc_fail(g, in, "out of memory");
    }
    snprintf(kern->name, len, "%s.ones", in->name);
    kern->opcode = HLO_OP_CONSTANT;
    kern->n_operands = 0;
    kern->shape = ones->shape;
    const int k = tc_add_node(g, kern, 0, NULL);
    const int in3[3] = {ops[0], k, ops[1]};
    const int d = k < 0 ? -1 : tc_add_node(g, conv, 3, in3);
    if (d < 0) {
        hlo_array_free(ones);
        return tc_fail(g, in, "out of memory");
    }
    g->nodes[k].role = TC_CONST;
    g->nodes[k].value = ones;
    g->nodes[d].sum_of = in;
    tc_op op = {0};
    if (!tc_device_conv(g, d, &op)) {
        *node = global >= 0 ? tc_add_node(g, flat, 1, &d) : d;
        return *node < 0 ? tc_fail(g, in, "out of memory") : 0;
    }
    /* The host sums it as written. */
    for (int i = k; i <= d; i++) {
        free(g->nodes[i].in);
        hlo_array_free(g->nodes[i].value);
    }
    g->n_nodes = k;
    return 0;
}
