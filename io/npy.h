/* npy.h - NumPy .npy files (format versions 1.0 and 2.0): little-endian int8, uint8, int32,
 * int64 and float32 arrays in C order. Anything else (other dtypes, big-endian, Fortran order,
 * format 3.0, truncated or trailing bytes) is refused with a message saying why. */
#ifndef TPU_IO_NPY_H
#define TPU_IO_NPY_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum { NPY_INT8, NPY_UINT8, NPY_INT32, NPY_FLOAT32, NPY_INT64 } npy_dtype;

#define NPY_MAX_DIMS 8
/* The largest .npy file npy_load reads (streams: TPUIO_STREAM_MAX, io/tpuio.h). */
#define NPY_MAX_FILE ((uint64_t)4 << 30)

typedef struct {
    npy_dtype dtype;
    int ndim; /* 0 (a scalar) .. NPY_MAX_DIMS */
    uint64_t shape[NPY_MAX_DIMS];
    uint64_t count; /* elements: the product of shape */
    void *data;     /* count elements in host byte order, C order; malloc'd */
} npy_array;

size_t npy_dtype_size(npy_dtype t);
const char *npy_dtype_name(npy_dtype t); /* "int8", ... */

/* Parses a whole .npy image. Returns 0, or -1 with the reason in err (out is then empty). */
int npy_parse(const void *buf, size_t len, npy_array *out, char *err, size_t errlen);
/* npy_parse of a file's contents; err does not repeat the path. */
int npy_load(const char *path, npy_array *out, char *err, size_t errlen);
/* Encodes arr as a .npy image with a version 1 or 2 header (0: 1 unless the header needs 2).
 * Returns a malloc'd buffer and its length in *len, or NULL (bad version or arguments, out of
 * memory). */
void *npy_encode(const npy_array *arr, int version, size_t *len);
void npy_free(npy_array *arr); /* frees data; arr may be reused */

#ifdef __cplusplus
}
#endif
#endif
