/* bind.c - binding of weights to the ENTRY parameters of an HLO module (tpuc.h): the tensors of a
 * safetensors file (io/safetensors.h) by its matching rules (tpuc_bind_safetensors), or arrays by
 * parameter number (tpuc_bind_arrays); either way a new array per bound parameter whose type and
 * dims must be the parameter's. */
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

/* A tensor to bind to a parameter: its name in messages ("" for an array, which its parameter
 * names), element type, dims and bytes. */
typedef struct {
    const char *name;
    hlo_shape shape; /* type, rank and dims */
    const void *data;
} bind_src;

/* Finds the tensor that binds to parameter p in ctx: true with *out filled, or false. */
typedef bool find_fn(const void *ctx, const hlo_instr *p, bind_src *out);

static hlo_type tensor_type(st_dtype d)
{
    static const hlo_type types[ST_DTYPE_COUNT_] = {
        [ST_F32] = HLO_F32,   [ST_I8] = HLO_S8,   [ST_I32] = HLO_S32, [ST_U8] = HLO_U8,
        [ST_BF16] = HLO_BF16, [ST_F16] = HLO_F16, [ST_F64] = HLO_F64, [ST_I16] = HLO_S16,
        [ST_I64] = HLO_S64,   [ST_U16] = HLO_U16, [ST_U32] = HLO_U32, [ST_U64] = HLO_U64,
        [ST_BOOL] = HLO_PRED};
    return types[d];
}

/* The safetensors rules of tpuc_bind_safetensors, in order. */
static bool find_tensor(const void *ctx, const hlo_instr *p, bind_src *out)
{
    const st_file *st = ctx;
    char num[24];
    snprintf(num, sizeof num, "%lld", (long long)p->parameter_number);
    for (int rule = 0; rule < 4; rule++)
        for (int i = 0; i < st->n_tensors; i++) {
            const st_tensor *t = &st->tensors[i];
            const char *meta;
            if ((rule == 0 && !strcmp(t->name, p->name)) ||
                (rule == 1 && same_base(t->name, p->name)) ||
                (rule == 2 && !strcmp(t->name, num)) ||
                (rule == 3 && (meta = st_meta(st, t->name)) && !strcmp(meta, num))) {
                *out = (bind_src){.name = t->name,
                                  .shape = {.type = tensor_type(t->dtype), .rank = t->rank},
                                  .data = t->data};
                memcpy(out->shape.dims, t->shape, sizeof(int64_t) * (size_t)t->rank);
                return true;
            }
        }
    return false;
}

/* tpuc_bind_arrays's: the array of the parameter's number. */
typedef struct {
    hlo_array *const *weights;
    int n_weights;
} arrays_ctx;

static bool find_array(const void *ctx, const hlo_instr *p, bind_src *out)
{
    const arrays_ctx *a = ctx;
    if (p->parameter_number >= a->n_weights || !a->weights[p->parameter_number])
        return false;
    const hlo_array *w = a->weights[p->parameter_number];
    *out = (bind_src){.name = "", .shape = w->shape, .data = w->data};
    return true;
}

/* "<file>: <what>" in *err; returns -1. */
static int fail_file(hlo_error *err, const char *file, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    hlo_vfail(err, file, -1, 0, NULL, fmt, ap);
    va_end(ap);
    return -1;
}

/* A new array for every parameter find binds, checked against the parameter's type and dims. */
static int bind(const hlo_module *m, const char *file, find_fn *find, const void *ctx,
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
        bind_src t;
        if (!find(ctx, in, &t))
            continue;
        char s1[160], s2[160];
        if (!hlo_shape_equal(&t.shape, &in->shape)) {
            if (*t.name)
                hlo_fail(err, file, in, "'%s' is %s but tensor '%s' is %s", in->name,
                         hlo_shape_str(&in->shape, s1, sizeof s1), t.name,
                         hlo_shape_str(&t.shape, s2, sizeof s2));
            else
                hlo_fail(err, file, in, "'%s' is %s but its weight is %s", in->name,
                         hlo_shape_str(&in->shape, s1, sizeof s1),
                         hlo_shape_str(&t.shape, s2, sizeof s2));
            goto error;
        }
        hlo_array *a = hlo_array_new(t.shape.type, t.shape.rank, t.shape.dims);
        if (!a) {
            hlo_fail(err, file, in, "out of memory");
            goto error;
        }
        /* little-endian host, as everywhere in tpusim */
        memcpy(a->data, t.data, (size_t)a->shape.elements * hlo_type_size(a->shape.type));
        if (a->shape.type == HLO_PRED) /* any nonzero byte is true; pred holds 0 or 1 */
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

int tpuc_bind_safetensors(const hlo_module *m, const char *file, const struct st_file *st,
                          hlo_array **params, int n_params, hlo_error *err)
{
    return bind(m, file, find_tensor, st, params, n_params, err);
}

int tpuc_bind_arrays(const hlo_module *m, const char *file, hlo_array *const *weights,
                     int n_weights, hlo_array **params, int n_params, hlo_error *err)
{
    for (int i = 0; i < n_params; i++)
        params[i] = NULL;
    if (n_weights > n_params)
        return fail_file(err, file, "%d weights but %d parameters", n_weights, n_params);
    const arrays_ctx ctx = {weights, n_weights};
    return bind(m, file, find_array, &ctx, params, n_params, err);
}
