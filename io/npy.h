/* npy.h - NumPy .npy files (format versions 1.0 and 2.0): little-endian int8, uint8, int32,
 * int64, float16, float32 and bfloat16 arrays in C order. Anything else (other dtypes, big-endian,
 * Fortran order, format 3.0, truncated or trailing bytes) is refused with a message saying why.
 *
 * bfloat16: NumPy has none of its own. Arrays of ml_dtypes' bfloat16 (JAX's) are saved with the
 * descr '<V2', which any other 2-byte void type has too, and NumPy saves such an array loaded back
 * (a plain void array) as '|V2'. So the reader reads both as NPY_V2, 2-byte elements of unknown
 * meaning, and a caller whose model says the array is bfloat16 makes it NPY_BFLOAT16 with
 * npy_as_bfloat16. The writer writes NPY_BFLOAT16 as '<V2', what ml_dtypes writes (read it back
 * with np.load(f).view(ml_dtypes.bfloat16)), and NPY_V2 as '|V2'. Values are never converted
 * here: rounding float32 to bfloat16 or float16 is the caller's. */
#ifndef TPU_IO_NPY_H
#define TPU_IO_NPY_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    NPY_INT8,
    NPY_UINT8,
    NPY_INT32,
    NPY_FLOAT32,
    NPY_INT64,
    NPY_FLOAT16,  /* '<f2' */
    NPY_BFLOAT16, /* never read: see npy_as_bfloat16 */
    NPY_V2        /* '<V2' or '|V2': 2-byte elements of unknown meaning, as read */
} npy_dtype;

#define NPY_MAX_DIMS 8
/* The largest .npy file npy_load reads (streams: TPUIO_STREAM_MAX, io/tpuio.h). */
#define NPY_MAX_FILE ((uint64_t)4 << 30)

typedef struct {
    npy_dtype dtype;
    int ndim; /* 0 (a scalar) .. NPY_MAX_DIMS */
    uint64_t shape[NPY_MAX_DIMS];
    uint64_t count; /* elements: the product of shape */
    void *data;     /* count elements in host byte order, C order; malloc'd; 2-byte elements
                     * (float16, bfloat16, V2) as uint16_t bit patterns */
} npy_array;

size_t npy_dtype_size(npy_dtype t);
const char *npy_dtype_name(npy_dtype t); /* "int8", ..., "bfloat16", NumPy's "void16" for V2 */

/* Parses a whole .npy image. Returns 0, or -1 with the reason in err (out is then empty). */
int npy_parse(const void *buf, size_t len, npy_array *out, char *err, size_t errlen);
/* npy_parse of a file's contents; err does not repeat the path. */
int npy_load(const char *path, npy_array *out, char *err, size_t errlen);
/* Encodes arr as a .npy image with a version 1 or 2 header (0: 1 unless the header needs 2).
 * Returns a malloc'd buffer and its length in *len, or NULL (bad version or arguments, out of
 * memory). */
void *npy_encode(const npy_array *arr, int version, size_t *len);
void npy_free(npy_array *arr); /* frees data; arr may be reused */

/* For a caller whose model says arr is bfloat16: NPY_V2 becomes NPY_BFLOAT16 (the same bits),
 * NPY_BFLOAT16 stays. Returns 0, or -1 (arr unchanged) for any other dtype with the reason in
 * err; a caller that accepts float32 there and rounds it checks for float32 first. */
int npy_as_bfloat16(npy_array *arr, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif
#endif
