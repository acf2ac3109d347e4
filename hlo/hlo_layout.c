/* hlo_layout.c - layouts (hlo_shape.minor_to_major) and what depends on them: bitcast, which
 * reinterprets its operand's buffer under the result's shape and layout. */
#include "hlo/hlo_eval_internal.h"

#include <string.h>

void hlo_layout_order(const hlo_shape *s, int *order)
{
    for (int k = 0; k < s->rank; k++)
        order[k] = s->has_layout ? s->minor_to_major[s->rank - 1 - k] : k;
}

bool hlo_layout_is_row_major(const hlo_shape *s)
{
    int order[HLO_MAX_RANK], last = -1;
    hlo_layout_order(s, order);
    for (int k = 0; k < s->rank; k++) {
        if (s->dims[order[k]] == 1) /* a unit dim moves no element wherever it sits */
            continue;
        if (order[k] < last)
            return false;
        last = order[k];
    }
    return true;
}

bool hlo_bitcast_is_reshape(const hlo_shape *from, const hlo_shape *to)
{
    return hlo_layout_is_row_major(from) && hlo_layout_is_row_major(to);
}

/* Element strides of s's dims in its physical buffer. */
static void physical_strides(const hlo_shape *s, int64_t *st)
{
    int order[HLO_MAX_RANK];
    hlo_layout_order(s, order);
    int64_t n = 1;
    for (int k = s->rank - 1; k >= 0; k--) {
        st[order[k]] = n;
        n *= s->dims[order[k]];
    }
}

/* Result element idx is the element at its physical offset (under to's layout) in the
 * operand's buffer (under from's): the offset is split into the operand's logical index (minor dims
 * first), which gives its row-major position in a. */
void he_bitcast(const hlo_shape *from, const hlo_shape *to, const hlo_array *a, hlo_array *o)
{
    const size_t es = hlo_type_size(o->shape.type);
    int64_t ost[HLO_MAX_RANK], ast[HLO_MAX_RANK], idx[HLO_MAX_RANK] = {0};
    int order[HLO_MAX_RANK];
    physical_strides(to, ost);
    he_strides(&a->shape, ast);
    hlo_layout_order(from, order);
    for (int64_t i = 0; i < o->shape.elements; i++) {
        int64_t off = 0, at = 0;
        for (int d = 0; d < o->shape.rank; d++)
            off += idx[d] * ost[d];
        for (int k = from->rank - 1; k >= 0; k--) {
            const int d = order[k];
            at += off % from->dims[d] * ast[d];
            off /= from->dims[d];
        }
        memcpy((char *)o->data + i * (int64_t)es, (const char *)a->data + at * (int64_t)es, es);
        he_odometer(idx, o->shape.dims, o->shape.rank);
    }
}
