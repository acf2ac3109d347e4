/* safetensors_fuzz.c - libFuzzer target for the safetensors reader (io/safetensors.h): any image
 * must be parsed or refused with a one-line message, never crash or leak; an accepted file's
 * tensors must lie inside the data, not overlap, and be found by name. */
#include <stdlib.h>
#include <string.h>

#include "io/safetensors.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(int ok)
{
    if (!ok)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    st_file f;
    char err[512] = "";
    if (st_parse(data, size, &f, err, sizeof err)) {
        check(err[0] && !strchr(err, '\n'));
        return 0;
    }
    for (int i = 0; i < f.n_tensors; i++) {
        const st_tensor *t = &f.tensors[i];
        check(t->rank >= 0 && t->rank <= ST_MAX_RANK);
        check((uint64_t)t->elements * st_dtype_size(t->dtype) == t->size);
        check(t->size <= size && st_find(&f, t->name) == t);
        /* Touch every byte, so that ASan sees a tensor pointing outside the copy. */
        unsigned sum = 0;
        for (size_t b = 0; b < t->size; b++)
            sum += ((const unsigned char *)t->data)[b];
        check(sum <= 255 * t->size);
    }
    for (int i = 0; i < f.n_meta; i++)
        check(st_meta(&f, f.meta_keys[i]) != NULL);
    st_free(&f);
    return 0;
}
