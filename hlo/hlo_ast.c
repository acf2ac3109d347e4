/* hlo_ast.c - the AST of hlo.h beyond parsing: lookups (the ENTRY, computations and
 * instructions by name, callees, the computation holding an instruction), a fresh instruction,
 * and the names of element types and opcodes (the op list, HLO_OPS, expanded). */
#include "hlo/hlo.h"

#include <string.h>

static const char *const type_names[] = {
    [HLO_PRED] = "pred", [HLO_S8] = "s8",       [HLO_S16] = "s16",       [HLO_S32] = "s32",
    [HLO_S64] = "s64",   [HLO_U8] = "u8",       [HLO_U16] = "u16",       [HLO_U32] = "u32",
    [HLO_U64] = "u64",   [HLO_F16] = "f16",     [HLO_BF16] = "bf16",     [HLO_F32] = "f32",
    [HLO_F64] = "f64",   [HLO_TOKEN] = "token", [HLO_TUPLE] = "(tuple)",
};

#define OPCODE_NAME(name, hlo, stablehlo, operands, rule) [HLO_OP_##name] = hlo,
static const char *const opcode_names[HLO_OP_COUNT_] = {[HLO_OP_OTHER] = "", HLO_OPS(OPCODE_NAME)};
#undef OPCODE_NAME

const hlo_computation *hlo_entry(const hlo_module *m) { return &m->comps[m->entry]; }

int hlo_find_computation(const hlo_module *m, const char *name)
{
    for (int i = 0; i < m->n_comps; i++)
        if (!strcmp(m->comps[i].name, name))
            return i;
    return -1;
}

int hlo_find_instr(const hlo_computation *c, const char *name)
{
    for (int i = 0; i < c->n_instrs; i++)
        if (!strcmp(c->instrs[i].name, name))
            return i;
    return -1;
}

void hlo_instr_init(hlo_instr *in)
{
    *in = (hlo_instr){.parameter_number = -1,
                      .iota_dimension = -1,
                      .feature_index = -1,
                      .to_apply = -1,
                      .select = -1,
                      .calls = -1,
                      .condition = -1,
                      .body = -1,
                      .feature_group_count = 1,
                      .batch_group_count = 1};
    in->gather.index_vector_dim = -1;
}

bool hlo_tuple_result(hlo_opcode op)
{
    return op == HLO_OP_REDUCE || op == HLO_OP_REDUCE_WINDOW || op == HLO_OP_SORT ||
           op == HLO_OP_WHILE || op == HLO_OP_CONDITIONAL || op == HLO_OP_BATCH_NORM_TRAINING ||
           op == HLO_OP_ALL_REDUCE;
}

int hlo_callee(const hlo_instr *in, int k)
{
    /* Hand-built instructions may leave select 0: only select-and-scatter's counts. */
    const int select = in->opcode == HLO_OP_SELECT_AND_SCATTER ? in->select : -1;
    const int fixed[5] = {in->to_apply, in->calls, in->condition, in->body, select};
    for (int i = 0; i < 5 + in->n_branches; i++) {
        const int c = i < 5 ? fixed[i] : in->branches[i - 5];
        if (c >= 0 && k-- == 0)
            return c;
    }
    return -1;
}

uint64_t hlo_macs(const hlo_computation *c, const hlo_instr *in)
{
    uint64_t per = 1;
    if (in->opcode == HLO_OP_DOT) {
        const hlo_shape *l = &c->instrs[in->operands[0].index].shape;
        for (int i = 0; i < in->lhs_contracting_dims.n; i++)
            per *= (uint64_t)l->dims[in->lhs_contracting_dims.v[i]];
    } else if (in->opcode == HLO_OP_CONVOLUTION) {
        const hlo_shape *k = &c->instrs[in->operands[1].index].shape;
        const hlo_conv_dims *dl = &in->dim_labels;
        per = (uint64_t)k->dims[dl->kernel_input_feature_dim];
        for (int i = 0; i < dl->n_spatial; i++)
            per *= (uint64_t)k->dims[dl->kernel_spatial_dims[i]];
    } else {
        return 0;
    }
    return per * (uint64_t)in->shape.elements;
}

int64_t hlo_devices(const hlo_module *m) { return m->replica_count * m->num_partitions; }

int64_t hlo_all_reduce_group_size(const hlo_module *m, const hlo_instr *in)
{
    return in->n_replica_groups ? in->replica_groups[0].n : hlo_devices(m);
}

/* Addresses compare as integers: in may point anywhere. */
const hlo_computation *hlo_instr_owner(const hlo_module *m, const hlo_instr *in)
{
    uintptr_t a = (uintptr_t)in;
    for (int k = 0; k < m->n_comps; k++) {
        const hlo_computation *c = &m->comps[k];
        uintptr_t lo = (uintptr_t)c->instrs, hi = (uintptr_t)(c->instrs + c->n_instrs);
        if (a >= lo && a < hi && (a - lo) % sizeof *in == 0)
            return c;
    }
    return NULL;
}

const char *hlo_type_name(hlo_type t) { return (unsigned)t <= HLO_TUPLE ? type_names[t] : "?"; }

hlo_opcode hlo_opcode_of(const char *name)
{
    for (int i = 1; i < HLO_OP_COUNT_; i++)
        if (!strcmp(name, opcode_names[i]))
            return (hlo_opcode)i;
    return HLO_OP_OTHER;
}

const char *hlo_opcode_name(hlo_opcode op)
{
    return (unsigned)op < HLO_OP_COUNT_ ? opcode_names[op] : "";
}
