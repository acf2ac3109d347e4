/* bind.c - binding of the tensors of a safetensors file (io/safetensors.h) to the ENTRY
 * parameters of an HLO module (tpuc_bind_safetensors, tpuc.h): the matching rules, and a new
 * array per bound parameter whose type and dims must be the parameter's. */
#include "compiler/tpuc.h"
#include "io/safetensors.h"

#include <stdio.h>
#include <string.h>

/* Length of name without a ".N" suffix (N decimal digits). */
static size_t base_len(const char *name)
{
    size_t n = strlen(name), i = n;
    while (i > 0 && name[i - 1] >= '0' && name[i - 1] <= '9')
        i--;
    return i > 1 && i < n && name[i - 1] == '.' ? i - 1 : n;
}

static bool same_base(const char *a, const char *b)
{
    size_t la = base_len(a), lb = base_len(b);
    return (la < strlen(a) && la == strlen(b) && !strncmp(a, b, la)) ||
           (lb < strlen(b) && lb == strlen(a) && !strncmp(a, b, lb));
}

static const st_tensor *bind_one(const st_file *st, const hlo_instr *p)
{
    char num[24];
    snprintf(num, sizeof num, "%lld", (long long)p->parameter_number);
    for (int rule = 0; rule < 4; rule++)
        for (int i = 0; i < st->n_tensors; i++) {
            const char *name = st->tensors[i].name, *meta;
            if ((rule == 0 && !strcmp(name, p->name)) || (rule == 1 && same_base(name, p->name)) ||
                (rule == 2 && !strcmp(name, num)) ||
                (rule == 3 && (meta = st_meta(st, name)) && !strcmp(meta, num)))
                return &st->tensors[i];
        }
    return NULL;
}

static hlo_type tensor_type(st_dtype d)
{
    static const hlo_type types[ST_DTYPE_COUNT_] = {
        [ST_F32] = HLO_F32,   [ST_I8] = HLO_S8,   [ST_I32] = HLO_S32, [ST_U8] = HLO_U8,
        [ST_BF16] = HLO_BF16, [ST_F16] = HLO_F16, [ST_F64] = HLO_F64, [ST_I16] = HLO_S16,
        [ST_I64] = HLO_S64,   [ST_U16] = HLO_U16, [ST_U32] = HLO_U32, [ST_U64] = HLO_U64,
        [ST_BOOL] = HLO_PRED};
    return types[d];
}

int tpuc_bind_safetensors(const hlo_module *m, const char *file, const struct st_file *st,
                          hlo_array **params, int n_params, hlo_error *err)
{
    const hlo_computation *c = hlo_entry(m);
    for (int i = 0; i < n_params; i++)
        params[i] = NULL;
    for (int i = 0; i < c->n_instrs; i++) {
        const hlo_instr *in = &c->instrs[i];
        if (in->opcode != HLO_OP_PARAMETER)
            continue;
        if (in->parameter_number >= n_params) {
            hlo_fail(err, file, in, "parameter number %lld but room for %d",
                     (long long)in->parameter_number, n_params);
            goto error;
        }
        const st_tensor *t = bind_one(st, in);
        if (!t)
            continue;
        hlo_type ty = tensor_type(t->dtype);
        hlo_shape ts = {.type = ty, .rank = t->rank};
        memcpy(ts.dims, t->shape, sizeof(int64_t) * (size_t)t->rank);
        char s1[160], s2[160];
        if (!hlo_shape_equal(&ts, &in->shape)) {
            hlo_fail(err, file, in, "'%s' is %s but tensor '%s' is %s", in->name,
                     hlo_shape_str(&in->shape, s1, sizeof s1), t->name,
                     hlo_shape_str(&ts, s2, sizeof s2));
            goto error;
        }
        hlo_array *a = hlo_array_new(ty, t->rank, t->shape);
        if (!a) {
            hlo_fail(err, file, in, "out of memory");
            goto error;
        }
        memcpy(a->data, t->data, t->size); /* little-endian host, as everywhere in tpusim */
        if (ty == HLO_PRED)                /* any nonzero byte is true; pred holds 0 or 1 */
            for (int64_t e = 0; e < a->shape.elements; e++)
                ((uint8_t *)a->data)[e] = ((uint8_t *)a->data)[e] != 0;
        params[in->parameter_number] = a;
    }
    return 0;
error:
    for (int i = 0; i < n_params; i++) {
        hlo_array_free(params[i]);
        params[i] = NULL;
    }
    return -1;
}
