/* hlo_fuzz.c - libFuzzer target for the HLO text parser and shape checker: any input must be
 * parsed or rejected with a located one-line message, never crash or leak (ASan/UBSan); an
 * accepted module must satisfy the AST's invariants, checked here, and then pass the shape
 * checker or be rejected by it with a located message. Built with -DTPU_FUZZ=ON and clang. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hlo/hlo.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(bool ok)
{
    if (!ok)
        abort();
}

static void check_shape(const hlo_shape *s)
{
    check(s->type <= HLO_TUPLE && s->rank >= 0 && s->rank <= HLO_MAX_RANK);
    check(s->elements >= 0 && s->elements <= HLO_MAX_ELEMENTS);
    for (int i = 0; i < s->n_tuple; i++)
        check_shape(&s->tuple[i]);
}

/* An operand's dims in dim_labels: a permutation of its n + 2 dims. */
static void check_labels(int n, int a, int b, const int *spatial)
{
    bool seen[HLO_MAX_RANK] = {false};
    for (int i = 0; i < n + 2; i++) {
        int d = i == 0 ? a : i == 1 ? b : spatial[i - 2];
        check(d >= 0 && d < n + 2 && !seen[d]);
        seen[d] = true;
    }
}

static void check_conv_attrs(const hlo_instr *in)
{
    const hlo_window *w = &in->window;
    check(w->rank >= 0 && w->rank <= HLO_MAX_RANK && (w->present || w->rank == 0));
    for (int i = 0; i < w->rank; i++) {
        const hlo_window_dim *d = &w->dims[i];
        check(d->size >= 0 && d->stride >= 0 && d->lhs_dilate >= 0 && d->rhs_dilate >= 0);
        check(d->size <= HLO_MAX_ELEMENTS && d->stride <= HLO_MAX_ELEMENTS);
        check(d->lhs_dilate <= HLO_MAX_ELEMENTS && d->rhs_dilate <= HLO_MAX_ELEMENTS);
        check(d->pad_lo >= -HLO_MAX_ELEMENTS && d->pad_lo <= HLO_MAX_ELEMENTS);
        check(d->pad_hi >= -HLO_MAX_ELEMENTS && d->pad_hi <= HLO_MAX_ELEMENTS);
    }
    const hlo_conv_dims *l = &in->dim_labels;
    if (l->present) {
        check(l->n_spatial >= 0 && l->n_spatial <= HLO_MAX_RANK - 2);
        check_labels(l->n_spatial, l->input_batch_dim, l->input_feature_dim, l->input_spatial_dims);
        check_labels(l->n_spatial, l->kernel_input_feature_dim, l->kernel_output_feature_dim,
                     l->kernel_spatial_dims);
        check_labels(l->n_spatial, l->output_batch_dim, l->output_feature_dim,
                     l->output_spatial_dims);
    }
    check(in->feature_group_count >= 1 && in->feature_group_count <= HLO_MAX_ELEMENTS);
    check(in->batch_group_count >= 1 && in->batch_group_count <= HLO_MAX_ELEMENTS);
}

static void check_module(const hlo_module *m)
{
    check(m->name && m->n_comps > 0 && m->entry >= 0 && m->entry < m->n_comps);
    check(m->comps[m->entry].is_entry);
    for (int c = 0; c < m->n_comps; c++) {
        const hlo_computation *k = &m->comps[c];
        check(k->n_instrs > 0 && k->root >= 0 && k->root < k->n_instrs);
        check(hlo_find_computation(m, k->name) == c);
        for (int i = 0; i < k->n_instrs; i++) {
            const hlo_instr *in = &k->instrs[i];
            check(hlo_find_instr(k, in->name) == i && in->line >= 1 && in->col >= 1);
            check(strlen(in->name) <= HLO_MAX_NAME);
            check_shape(&in->shape);
            for (int o = 0; o < in->n_operands; o++) {
                check(in->operands[o].index >= 0 && in->operands[o].index < k->n_instrs);
                if (in->operands[o].has_shape)
                    check_shape(&in->operands[o].shape);
            }
            for (int j = 0, f; (f = hlo_callee(in, j)) >= 0; j++)
                check(f < m->n_comps);
            check(in->n_branches >= 0 && (!in->branch_pred || in->n_branches == 2));
            if (in->opcode == HLO_OP_CONSTANT && !in->literal_elided)
                check(in->n_literal == (size_t)in->shape.elements);
            check(in->slice_start.n == in->slice_limit.n &&
                  in->slice_start.n == in->slice_stride.n);
            check(in->pad_low.n == in->pad_high.n && in->pad_low.n == in->pad_interior.n);
            check_conv_attrs(in);
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    hlo_error err;
    hlo_module *m = hlo_parse((const char *)data, size, "fuzz.hlo", &err);
    if (!m) {
        check(strncmp(err.msg, "fuzz.hlo:", 9) == 0 && err.line >= 1 && err.col >= 1);
        check(!strchr(err.msg, '\n'));
        return 0;
    }
    check_module(m);
    if (hlo_check(m, "fuzz.hlo", &err))
        check(strncmp(err.msg, "fuzz.hlo:", 9) == 0 && !strchr(err.msg, '\n'));
    hlo_module_free(m);
    return 0;
}
