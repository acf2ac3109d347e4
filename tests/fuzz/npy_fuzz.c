/* npy_fuzz.c - libFuzzer target for the .npy reader (io/npy.h): any image must be parsed or
 * refused with a one-line message, never crash or leak; an accepted array must encode again and
 * parse back to the same shape and bytes. A 2-byte void array is taken as bfloat16 (as a caller
 * whose model says so) in images of odd length, so that both are written and read back. */
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
    const npy_dtype read = a.dtype;
    if (read != NPY_V2)
        check(npy_as_bfloat16(&a, err, sizeof err) == -1 && a.dtype == read && err[0]);
    else if (size % 2)
        check(npy_as_bfloat16(&a, err, sizeof err) == 0 && a.dtype == NPY_BFLOAT16);
    size_t len;
    void *img = npy_encode(&a, 0, &len);
    check(img != NULL);
    check(npy_parse(img, len, &b, err, sizeof err) == 0 && b.dtype == read);
    if (a.dtype == NPY_BFLOAT16)
        check(npy_as_bfloat16(&b, err, sizeof err) == 0);
    check(b.dtype == a.dtype && b.ndim == a.ndim && b.count == a.count);
    check(memcmp(b.shape, a.shape, sizeof a.shape) == 0);
    check(memcmp(b.data, a.data, a.count * npy_dtype_size(a.dtype)) == 0);
    free(img);
    npy_free(&a);
    npy_free(&b);
    return 0;
}
