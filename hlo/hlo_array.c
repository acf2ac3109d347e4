/* hlo_array.c - the dense arrays the evaluator, the runtime and the compiler pass around
 * (hlo.h, hlo_eval.c section). */
#include "hlo/hlo_eval_internal.h"

#include <stdlib.h>

size_t hlo_type_size(hlo_type t)
{
    switch (t) {
    case HLO_F64:
    case HLO_S64:
    case HLO_U64: return 8;
    case HLO_F32:
    case HLO_S32:
    case HLO_U32: return 4;
    case HLO_F16:
    case HLO_BF16:
    case HLO_S16:
    case HLO_U16: return 2;
    case HLO_S8:
    case HLO_U8:
    case HLO_PRED: return 1;
    default: return 0;
    }
}

bool hlo_is_float(hlo_type t) { return t >= HLO_F16 && t <= HLO_F64; }

hlo_array *hlo_array_new(hlo_type t, int rank, const int64_t *dims)
{
    size_t size = hlo_type_size(t);
    if (!size || rank < 0 || rank > HLO_MAX_RANK)
        return NULL;
    int64_t n = 1;
    for (int i = 0; i < rank; i++) {
        if (dims[i] < 0 || (dims[i] && n > HLO_MAX_ELEMENTS / dims[i]))
            return NULL;
        n *= dims[i];
    }
    hlo_array *a = calloc(1, sizeof *a);
    if (!a)
        return NULL;
    a->shape.type = t;
    a->shape.rank = rank;
    for (int i = 0; i < rank; i++)
        a->shape.dims[i] = dims[i];
    a->shape.elements = n;
    a->data = calloc(n ? (size_t)n : 1, size);
    if (!a->data) {
        free(a);
        return NULL;
    }
    return a;
}

void hlo_array_free(hlo_array *a)
{
    if (a) {
        free(a->data);
        free(a);
    }
}

void hlo_arrays_free(hlo_array **arrays, int n)
{
    if (!arrays)
        return;
    for (int i = 0; i < n; i++)
        hlo_array_free(arrays[i]);
    free(arrays);
}

void he_strides(const hlo_shape *s, int64_t *st)
{
    int64_t m = 1;
    for (int i = s->rank - 1; i >= 0; i--) {
        st[i] = m;
        m *= s->dims[i];
    }
}

int he_odometer(int64_t *idx, const int64_t *dims, int rank)
{
    int d = rank - 1;
    while (d >= 0 && ++idx[d] == dims[d])
        idx[d--] = 0;
    return d;
}
