/* io_copy.c - a file through io/'s reader and writer, for tests/io/interop.py to hold against
 * numpy, ml_dtypes and safetensors:
 *   io_copy npy IN OUT [--bf16]  npy_load (then npy_as_bfloat16 with --bf16), the dtype's name on
 *                                stdout, npy_encode written to OUT
 *   io_copy st IN OUT            st_load, st_save
 * Exit 0, or 1 with one line on stderr. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/npy.h"
#include "io/safetensors.h"
#include "io/tpuio.h"

static int copy_npy(const char *in, const char *out, int bf16, char *err, size_t errlen)
{
    npy_array a;
    if (npy_load(in, &a, err, errlen))
        return -1;
    int rc = bf16 ? npy_as_bfloat16(&a, err, errlen) : 0;
    if (!rc) {
        printf("%s\n", npy_dtype_name(a.dtype));
        size_t len;
        void *img = npy_encode(&a, 0, &len);
        rc = img ? tpuio_write_file(out, img, len, err, errlen) : -1;
        if (!img)
            tpuio_err(err, errlen, "npy_encode failed");
        free(img);
    }
    npy_free(&a);
    return rc;
}

static int copy_st(const char *in, const char *out, char *err, size_t errlen)
{
    st_file f;
    if (st_load(in, &f, err, errlen))
        return -1;
    const int rc = st_save(out, &f, err, errlen);
    st_free(&f);
    return rc;
}

int main(int argc, char **argv)
{
    char err[512] = "";
    const int npy = argc >= 4 && !strcmp(argv[1], "npy"), st = argc == 4 && !strcmp(argv[1], "st");
    const int bf16 = npy && argc == 5 && !strcmp(argv[4], "--bf16");
    if (!(st || (npy && (argc == 4 || bf16)))) {
        fprintf(stderr, "usage: io_copy npy IN OUT [--bf16] | io_copy st IN OUT\n");
        return 1;
    }
    if (npy ? copy_npy(argv[2], argv[3], bf16, err, sizeof err)
            : copy_st(argv[2], argv[3], err, sizeof err)) {
        fprintf(stderr, "io_copy: %s -> %s: %s\n", argv[2], argv[3], err);
        return 1;
    }
    return 0;
}
