/* conv.c - convolutions on the device: which ones the CONV2D command runs, their kernels in
 * (kh, kw, c) x cout order, and which max poolings fuse into them (docs/compiler.md).
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
#include <stdlib.h>

/* The device's limits on a window: strides and pads (u8 fields) and pooling windows. */
#define STRIDE_MAX 255
#define PAD_MAX 255
#define POOL_MAX 15
#define DIM_MAX 65535 /* h, w, c, cout: the core's row fields */

/* The one window dimension of a 1-D convolution's (or pooling's) height on the device. */
static const hlo_window_dim unit_window = {
    .size = 1, .stride = 1, .lhs_dilate = 1, .rhs_dilate = 1};

const char *tc_device_conv(tc_graph *g, int d, tc_op *op)
{
    const tc_node *nd = &g->nodes[d];
    const hlo_instr *in = nd->src;
    const tc_node *l = &g->nodes[nd->in[0]], *r = &g->nodes[nd->in[1]];
    if (r->role != TC_CONST)
        return "its kernel is computed at run time (the device's kernel is weights)";
    const char *why = tc_device_types(l, r, nd, &op->exact);
    if (why)
        return why;
    const hlo_conv_dims *dl = &in->dim_labels;
    if (dl->n_spatial != 1 && dl->n_spatial != 2)
        return "not a 1-D or 2-D convolution (the device convolves one or two spatial "
               "dimensions)";
    if (in->batch_group_count > 1)
        return "batch_group_count > 1 (the device convolves each image alone)";
    /* A 1-D convolution is a 2-D one of height 1 (its window a unit one in that dimension). */
    const bool one_d = dl->n_spatial == 1;
    const hlo_window_dim *wy = one_d ? &unit_window : &in->window.dims[0];
    const hlo_window_dim *wx = &in->window.dims[one_d ? 0 : 1];
    if (wy->lhs_dilate != 1 || wx->lhs_dilate != 1)
        return "a dilated input (lhs_dilate, a transposed convolution)";
    if (wy->stride > STRIDE_MAX || wx->stride > STRIDE_MAX)
        return "a stride beyond the device's 1..255";
    if (wy->pad_lo < 0 || wy->pad_hi < 0 || wx->pad_lo < 0 || wx->pad_hi < 0 ||
        wy->pad_lo > PAD_MAX || wy->pad_hi > PAD_MAX || wx->pad_lo > PAD_MAX ||
        wx->pad_hi > PAD_MAX)
        return "padding beyond the device's 0..255 on each side";
    const int64_t *ld = l->shape.dims, *kd = r->shape.dims;
    const int64_t b = ld[dl->input_batch_dim], c = ld[dl->input_feature_dim];
    const int64_t h = one_d ? 1 : ld[dl->input_spatial_dims[0]];
    const int64_t w = ld[dl->input_spatial_dims[one_d ? 0 : 1]];
    const int64_t cout = kd[dl->kernel_output_feature_dim];
    if (nd->shape.elements == 0 || l->shape.elements == 0 || r->shape.elements == 0)
        return "an empty operand or result";
    const int64_t kh = one_d ? 1 : (kd[dl->kernel_spatial_dims[0]] - 1) * wy->rhs_dilate + 1;
    const int64_t kw = (kd[dl->kernel_spatial_dims[one_d ? 0 : 1]] - 1) * wx->rhs_dilate + 1;
    if (h > DIM_MAX || w > DIM_MAX || c > DIM_MAX || cout > DIM_MAX || b > UINT32_MAX ||
        kh > DIM_MAX || kw > DIM_MAX)
        return "dimensions beyond the CONV2D command's (height, width, channels and kernel at "
               "most 65535)";
    if ((uint64_t)l->shape.elements > UINT32_MAX || (uint64_t)nd->shape.elements * 4 > UINT32_MAX)
        return "its input or result is beyond the device's 4 GiB of addresses";
    const bool bf16 = g->bf16 && !op->exact;
    if (bf16 && wx->stride > STRIDE_MAX / 2)
        return "a bf16 convolution's horizontal stride beyond the device's 1..127 (MATMUL steps "
               "over UB row pairs)";
    op->cv = (tpub_conv){
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
        .pad_top = (uint32_t)wy->pad_lo,
        .pad_bottom = (uint32_t)wy->pad_hi,
        .pad_left = (uint32_t)wx->pad_lo,
        .pad_right = (uint32_t)wx->pad_hi,
    };
    if (!tc_conv_fits(&op->cv, g->array_n))
        return "a row of its output does not fit the core's unified buffer and accumulators "
               "(docs/compiler.md)";
    op->conv_rank = dl->n_spatial + 2;
    op->in_nhwc[0] = dl->input_batch_dim;
    op->out_nhwc[0] = dl->output_batch_dim;
    for (int k = 0; k < dl->n_spatial; k++) {
        op->in_nhwc[1 + k] = dl->input_spatial_dims[k];
        op->out_nhwc[1 + k] = dl->output_spatial_dims[k];
    }
    op->in_nhwc[op->conv_rank - 1] = dl->input_feature_dim;
    op->out_nhwc[op->conv_rank - 1] = dl->output_feature_dim;
    op->groups = (uint32_t)in->feature_group_count;
    op->dil_h = (uint32_t)wy->rhs_dilate;
    op->dil_w = (uint32_t)wx->rhs_dilate;
    op->batch = 1;
    op->k = op->cv.kh * op->cv.kw * op->cv.c;
    op->n = (uint32_t)cout;
    return NULL;
}

int tc_take_kernel(tc_graph *g, tc_op *op)
{
    const tc_node *nd = &g->nodes[op->dot];
    const hlo_conv_dims *dl = &nd->src->dim_labels;
    const hlo_array *k = g->nodes[nd->in[1]].value;
    const size_t count = (size_t)op->k * op->n;
    if (op->exact ? !(op->wq = calloc(count, 1)) : !(op->wf = calloc(count, sizeof(float))))
        return tc_oom(g, op->dot, "the kernel", count * (op->exact ? 1 : sizeof(float)));
    /* Output channel o reads its group's input channels: g * cg.. with g = o / (cout / groups). */
    const size_t cg = op->cv.c / op->groups, og = op->n / op->groups;
    const bool one_d = dl->n_spatial == 1;
    int64_t idx[HLO_MAX_RANK] = {0};
    for (int64_t e = 0; e < k->shape.elements; e++) {
        const size_t o = (size_t)idx[dl->kernel_output_feature_dim];
        const size_t dy = one_d ? 0 : (size_t)idx[dl->kernel_spatial_dims[0]];
        const size_t dx = (size_t)idx[dl->kernel_spatial_dims[one_d ? 0 : 1]];
        const size_t row = (dy * op->dil_h * op->cv.kw + dx * op->dil_w) * op->cv.c + o / og * cg +
                           (size_t)idx[dl->kernel_input_feature_dim];
        const size_t at = row * op->n + o;
        if (op->exact)
            op->wq[at] = ((const int8_t *)k->data)[e];
        else
            op->wf[at] = (float)hlo_array_get(k, e);
        for (int d = k->shape.rank - 1; d >= 0 && ++idx[d] == k->shape.dims[d]; d--)
            idx[d] = 0;
    }
    return 0;
}

/* Computation comp returns the maximum of its two parameters. */
static bool max_reducer(const hlo_module *m, int comp)
{
    if (comp < 0)
        return false;
    const hlo_computation *c = &m->comps[comp];
    const hlo_instr *r = &c->instrs[c->root];
    if (r->opcode != HLO_OP_MAXIMUM || r->n_operands != 2)
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
    /* op->cv.flags has BF16 for a bf16 convolution (tc_device_conv), whose pooling writes bf16 */
    if (!max_reducer(g->m, in->to_apply))
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
    tpub_conv cv = op->cv;
    cv.flags |=
        TPUB_CONV_POOL | (cv.flags & TPUB_GEMM_BF16 ? TPUB_GEMM_OUT_BF16 : TPUB_GEMM_OUT_INT8);
    cv.pool_h = (uint32_t)py->size;
    cv.pool_w = (uint32_t)px->size;
    cv.pool_stride_h = (uint32_t)py->stride;
    cv.pool_stride_w = (uint32_t)px->stride;
    if (!tc_conv_fits(&cv, g->array_n))
        return "the pooled convolution's output rows do not fit the core's unified buffer and "
               "accumulators";
    op->cv = cv;
    return NULL;
}
