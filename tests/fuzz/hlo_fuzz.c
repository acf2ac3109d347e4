/* hlo_fuzz.c - libFuzzer target for the HLO text parser and shape checker: any input must be
 * parsed or rejected with a located one-line message, never crash or leak (ASan/UBSan); an
 * accepted module must satisfy the AST's invariants, checked here, and then pass the shape
 * checker or be rejected by it with a located message. Built with -DTPU_FUZZ=ON and clang. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "compiler/hlo.h"

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
            check(in->to_apply >= -1 && in->to_apply < m->n_comps);
            check(in->calls >= -1 && in->calls < m->n_comps);
            if (in->opcode == HLO_OP_CONSTANT && !in->literal_elided)
                check(in->n_literal == (size_t)in->shape.elements);
            check(in->slice_start.n == in->slice_limit.n &&
                  in->slice_start.n == in->slice_stride.n);
            check(in->pad_low.n == in->pad_high.n && in->pad_low.n == in->pad_interior.n);
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
