/* hlo_eval_shape.c - the evaluator's data-movement ops: elements copied to new places,
 * nothing computed (hlo_eval_internal.h). */
#include "compiler/hlo_eval_internal.h"

#include <string.h>

/* out[i] = in[sum idx(i)[d] * step[d]]: broadcast and transpose. */
static void gather(hlo_array *out, const hlo_array *in, const int64_t *step)
{
    int64_t idx[HLO_MAX_RANK] = {0};
    size_t size = hlo_type_size(in->shape.type);
    for (int64_t i = 0; i < out->shape.elements; i++) {
        int64_t src = 0;
        for (int d = 0; d < out->shape.rank; d++)
            src += idx[d] * step[d];
        memcpy((char *)out->data + i * (int64_t)size, (const char *)in->data + src * (int64_t)size,
               size);
        he_odometer(idx, out->shape.dims, out->shape.rank);
    }
}

/* pad: the value everywhere, then operand element i at lo + i * (interior + 1) per dimension
 * where that lies inside the result (negative padding crops). Element bytes are copied. */
static void pad(const hlo_instr *in, const hlo_array *a, const hlo_array *v, hlo_array *o)
{
    const size_t es = hlo_type_size(o->shape.type);
    int64_t ost[HLO_MAX_RANK], idx[HLO_MAX_RANK] = {0};
    he_strides(&o->shape, ost);
    for (int64_t i = 0; i < o->shape.elements; i++)
        memcpy((char *)o->data + i * es, v->data, es);
    for (int64_t i = 0; i < a->shape.elements; i++) {
        int64_t at = 0;
        bool inside = true;
        for (int d = 0; d < a->shape.rank && inside; d++) {
            const int64_t p = in->pad_low.v[d] + idx[d] * (in->pad_interior.v[d] + 1);
            inside = p >= 0 && p < o->shape.dims[d];
            at += p * ost[d];
        }
        if (inside)
            memcpy((char *)o->data + at * es, (const char *)a->data + i * es, es);
        for (int d = a->shape.rank - 1; d >= 0 && ++idx[d] == a->shape.dims[d]; d--)
            idx[d] = 0;
    }
}

void he_shape(const hlo_instr *in, const hlo_array *const *ops, hlo_array *o)
{
    hlo_type t = o->shape.type;
    int64_t n = o->shape.elements;
    const hlo_array *a = ops[0];
    switch (in->opcode) {
    case HLO_OP_RESHAPE:
    case HLO_OP_COPY:
    case HLO_OP_BITCAST_CONVERT: /* the same bytes in row-major order (little-endian host) */
        memcpy(o->data, a->data, (size_t)n * hlo_type_size(t));
        return;
    case HLO_OP_BROADCAST:
    case HLO_OP_TRANSPOSE: {
        int64_t st[HLO_MAX_RANK], step[HLO_MAX_RANK] = {0};
        he_strides(&a->shape, st);
        for (int i = 0; i < in->dimensions.n; i++) {
            if (in->opcode == HLO_OP_BROADCAST)
                step[in->dimensions.v[i]] = st[i]; /* operand dim i is result dim dims[i] */
            else
                step[i] = st[in->dimensions.v[i]]; /* result dim i is operand dim dims[i] */
        }
        gather(o, a, step);
        return;
    }
    default: /* pad */ pad(in, a, ops[1], o); return;
    }
}
