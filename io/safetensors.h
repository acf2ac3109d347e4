/* safetensors.h - the safetensors weight format, read and written: an 8-byte little-endian header
 * length N, N bytes of JSON {"name": {"dtype": "F32", "shape": [..], "data_offsets": [b, e]},
 * ..., "__metadata__": {"key": "value", ...}}, then the raw little-endian tensor data, offsets
 * counted from the end of the header. Tensors of dtype F32, I8, I32, U8, BF16, F16, F64, I16,
 * I64, U16, U32, U64 and BOOL (one byte) are accepted; the
 * header is validated completely (JSON syntax, known keys, offsets within the data, no overlap,
 * dtype size * element count == bytes) and every refusal says where and why. The writer lays a
 * file out as the reference implementation (Hugging Face's safetensors) does, byte for byte. */
#ifndef TPU_IO_SAFETENSORS_H
#define TPU_IO_SAFETENSORS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ST_MAX_RANK 16
#define ST_MAX_HEADER 100000000 /* bytes, as the reference implementation */
/* The largest file st_load reads (streams: TPUIO_STREAM_MAX, io/tpuio.h). */
#define ST_MAX_FILE ((uint64_t)4 << 30)

typedef enum {
    ST_F32,
    ST_I8,
    ST_I32,
    ST_U8,
    ST_BF16,
    ST_F16,
    ST_F64,
    ST_I16,
    ST_I64,
    ST_U16,
    ST_U32,
    ST_U64,
    ST_BOOL,
    ST_DTYPE_COUNT_
} st_dtype;

typedef struct {
    char *name;
    st_dtype dtype;
    int rank;
    int64_t shape[ST_MAX_RANK];
    int64_t elements; /* product of shape */
    size_t offset;    /* data_offsets[0], from the start of the data */
    size_t size;      /* bytes */
    const void *data; /* into st_file's copy of the file; may be unaligned */
} st_tensor;

typedef struct st_file {
    int n_tensors;
    st_tensor *tensors; /* in header order */
    int n_meta;
    char **meta_keys; /* __metadata__, in header order */
    char **meta_values;
    unsigned char *buf_; /* owns the file's bytes */
} st_file;

/* Parses a whole file image (copied). Returns 0, or -1 with the reason in err (out is then
 * empty and needs no st_free). */
int st_parse(const void *buf, size_t len, st_file *out, char *err, size_t errlen);
/* st_parse of a file's contents; err does not repeat the path. */
int st_load(const char *path, st_file *out, char *err, size_t errlen);
void st_free(st_file *f); /* f may be reused */

/* Encodes f's tensors (name, dtype, rank, shape and data of each: data holds the tensor's bytes
 * as in a file, little-endian, elements * st_dtype_size bytes; the other fields are ignored) and
 * its __metadata__ strings (none when n_meta is 0) as a safetensors image, laid out as the
 * reference writer does: tensors by descending dtype alignment, then by name (strcmp), their data
 * contiguous from offset 0; metadata keys by name; no white space in the JSON, which is padded
 * with spaces to a multiple of 8 bytes. So st_parse of the image gives f's tensors in that order
 * (st_file's buf_ is not used: a file st_parse read can be written back). Names, keys and values
 * must be UTF-8, names and keys unique, no tensor named __metadata__. Returns 0 with a malloc'd
 * image in *out and its length in *len, or -1 with the reason in err. */
int st_encode(const st_file *f, void **out, size_t *len, char *err, size_t errlen);
/* st_encode of f written to path all or nothing (io/tpuio.h: a failure leaves no file there);
 * err does not repeat the path. */
int st_save(const char *path, const st_file *f, char *err, size_t errlen);

const st_tensor *st_find(const st_file *f, const char *name); /* NULL when absent */
const char *st_meta(const st_file *f, const char *key);       /* NULL when absent */
size_t st_dtype_size(st_dtype t);
const char *st_dtype_name(st_dtype t); /* "F32", ... */

#ifdef __cplusplus
}
#endif
#endif
