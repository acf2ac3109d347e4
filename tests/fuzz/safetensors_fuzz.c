/* safetensors_fuzz.c - libFuzzer target for the safetensors reader and writer (io/safetensors.h):
 * any image must be parsed or refused with a one-line message, never crash or leak; an accepted
 * file's tensors must lie inside the data, not overlap, and be found by name; and it must be
 * written again (or refused only for names or metadata that are not UTF-8, which the reader passes
 * through) and read back to the same tensors and metadata. */
#include <stdlib.h>
#include <string.h>

#include "io/safetensors.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(int ok)
{
    if (!ok)
        abort();
}

/* st_encode of f parses back to f's tensors (by name) and metadata (by key). */
static void rewrite(const st_file *f)
{
    void *img;
    size_t len;
    char err[512] = "";
    if (st_encode(f, &img, &len, err, sizeof err)) {
        check(strstr(err, "not UTF-8") != NULL);
        return;
    }
    st_file g;
    check(st_parse(img, len, &g, err, sizeof err) == 0);
    check(g.n_tensors == f->n_tensors && g.n_meta == f->n_meta);
    for (int i = 0; i < f->n_tensors; i++) {
        const st_tensor *a = &f->tensors[i], *b = st_find(&g, a->name);
        check(b && b->dtype == a->dtype && b->rank == a->rank && b->size == a->size);
        check(!memcmp(b->shape, a->shape, sizeof a->shape[0] * (size_t)a->rank));
        check(!a->size || !memcmp(b->data, a->data, a->size));
    }
    for (int i = 0; i < f->n_meta; i++)
        check(!strcmp(st_meta(&g, f->meta_keys[i]), f->meta_values[i]));
    st_free(&g);
    free(img);
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
    rewrite(&f);
    st_free(&f);
    return 0;
}
