/* npy_fuzz.c - libFuzzer target for the .npy reader (io/npy.h): any image must be parsed or
 * refused with a one-line message, never crash or leak; an accepted array must encode again and
 * parse back to the same shape and bytes. */
#include <stdlib.h>
#include <string.h>

#include "io/npy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(int ok)
{
    if (!ok)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    npy_array a, b;
    char err[512] = "";
    if (npy_parse(data, size, &a, err, sizeof err)) {
        check(err[0] && !strchr(err, '\n'));
        return 0;
    }
    check(a.ndim >= 0 && a.ndim <= NPY_MAX_DIMS && a.count * npy_dtype_size(a.dtype) <= size);
    size_t len;
    void *img = npy_encode(&a, 0, &len);
    check(img != NULL);
    check(npy_parse(img, len, &b, err, sizeof err) == 0);
    check(b.dtype == a.dtype && b.ndim == a.ndim && b.count == a.count);
    check(memcmp(b.shape, a.shape, sizeof a.shape) == 0);
    check(memcmp(b.data, a.data, a.count * npy_dtype_size(a.dtype)) == 0);
    free(img);
    npy_free(&a);
    npy_free(&b);
    return 0;
}
