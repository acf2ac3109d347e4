/* npy.c - NumPy .npy reader and writer (see npy.h). The format: the magic "\x93NUMPY", a major
 * and minor version byte, the header length (u16 little-endian in 1.0, u32 in 2.0), the header
 * (a Python dict literal with 'descr', 'fortran_order' and 'shape', padded with spaces and ended
 * by a newline), then the raw data. */
#include "io/npy.h"
#include "io/tpuio.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char npy_magic[6] = {'\x93', 'N', 'U', 'M', 'P', 'Y'};

size_t npy_dtype_size(npy_dtype t)
{
    switch (t) {
    case NPY_INT8:
    case NPY_UINT8: return 1;
    case NPY_FLOAT16:
    case NPY_BFLOAT16:
    case NPY_V2: return 2;
    case NPY_INT32:
    case NPY_FLOAT32: return 4;
    case NPY_INT64: return 8;
    }
    return 0;
}

const char *npy_dtype_name(npy_dtype t)
{
    switch (t) {
    case NPY_INT8: return "int8";
    case NPY_UINT8: return "uint8";
    case NPY_INT32: return "int32";
    case NPY_FLOAT32: return "float32";
    case NPY_INT64: return "int64";
    case NPY_FLOAT16: return "float16";
    case NPY_BFLOAT16: return "bfloat16";
    case NPY_V2: return "void16";
    }
    return "?";
}

/* The descr numpy writes for each dtype (bfloat16: with ml_dtypes; V2: a plain void array). */
static const char *dtype_descr(npy_dtype t)
{
    switch (t) {
    case NPY_INT8: return "|i1";
    case NPY_UINT8: return "|u1";
    case NPY_INT32: return "<i4";
    case NPY_FLOAT32: return "<f4";
    case NPY_INT64: return "<i8";
    case NPY_FLOAT16: return "<f2";
    case NPY_BFLOAT16: return "<V2";
    case NPY_V2: return "|V2";
    }
    return NULL;
}

/* ------------------------------------------------------ header parsing -- */

/* A cursor over the header text. */
typedef struct {
    const char *p, *end;
    char *err;
    size_t errlen;
} hdr;

static void skip_space(hdr *h)
{
    while (h->p < h->end && (*h->p == ' ' || *h->p == '\t' || *h->p == '\n' || *h->p == '\r'))
        h->p++;
}

/* Consumes c after optional white space; 0 if it is not there. */
static int accept(hdr *h, char c)
{
    skip_space(h);
    if (h->p < h->end && *h->p == c) {
        h->p++;
        return 1;
    }
    return 0;
}

static int expect(hdr *h, char c, const char *where)
{
    if (accept(h, c))
        return 0;
    tpuio_err(h->err, h->errlen, "malformed header: expected '%c' %s", c, where);
    return -1;
}

/* A quoted string without escapes, copied into out (NUL-terminated). */
static int parse_string(hdr *h, char *out, size_t size, const char *what)
{
    skip_space(h);
    if (h->p >= h->end || (*h->p != '\'' && *h->p != '"')) {
        tpuio_err(h->err, h->errlen, "malformed header: expected a string for %s", what);
        return -1;
    }
    const char quote = *h->p++;
    size_t n = 0;
    while (h->p < h->end && *h->p != quote) {
        if (*h->p == '\\' || n + 1 >= size) {
            tpuio_err(h->err, h->errlen, "malformed header: unsupported %s", what);
            return -1;
        }
        out[n++] = *h->p++;
    }
    if (h->p >= h->end) {
        tpuio_err(h->err, h->errlen, "malformed header: unterminated string");
        return -1;
    }
    h->p++;
    out[n] = '\0';
    return 0;
}

static int parse_bool(hdr *h, int *out)
{
    skip_space(h);
    const size_t left = (size_t)(h->end - h->p);
    if (left >= 4 && !memcmp(h->p, "True", 4)) {
        *out = 1;
        h->p += 4;
    } else if (left >= 5 && !memcmp(h->p, "False", 5)) {
        *out = 0;
        h->p += 5;
    } else {
        tpuio_err(h->err, h->errlen, "malformed header: fortran_order is not True or False");
        return -1;
    }
    return 0;
}

/* A tuple of non-negative integers: (), (5,), (3, 4). */
static int parse_shape(hdr *h, npy_array *a)
{
    if (expect(h, '(', "before the shape"))
        return -1;
    a->ndim = 0;
    while (!accept(h, ')')) {
        skip_space(h);
        if (h->p >= h->end || *h->p < '0' || *h->p > '9') {
            tpuio_err(h->err, h->errlen, "malformed header: shape is not a tuple of integers");
            return -1;
        }
        uint64_t v = 0;
        while (h->p < h->end && *h->p >= '0' && *h->p <= '9') {
            const unsigned digit = (unsigned)(*h->p++ - '0');
            if (v > (UINT64_MAX - digit) / 10) {
                tpuio_err(h->err, h->errlen, "malformed header: a dimension is too large");
                return -1;
            }
            v = v * 10 + digit;
        }
        if (a->ndim == NPY_MAX_DIMS) {
            tpuio_err(h->err, h->errlen, "more than %d dimensions", NPY_MAX_DIMS);
            return -1;
        }
        a->shape[a->ndim++] = v;
        if (!accept(h, ',')) {
            if (expect(h, ')', "after the shape"))
                return -1;
            break;
        }
    }
    return 0;
}

static int parse_descr(hdr *h, npy_array *a)
{
    skip_space(h);
    if (h->p < h->end && *h->p == '[') {
        tpuio_err(h->err, h->errlen, "unsupported dtype: structured arrays are not supported");
        return -1;
    }
    char d[32];
    if (parse_string(h, d, sizeof d, "dtype"))
        return -1;
    /* One-byte types have no byte order; numpy writes '|', accept any order mark. */
    const int one_byte_order = d[0] == '|' || d[0] == '<' || d[0] == '>' || d[0] == '=';
    if (one_byte_order && !strcmp(d + 1, "i1")) {
        a->dtype = NPY_INT8;
    } else if (one_byte_order && !strcmp(d + 1, "u1")) {
        a->dtype = NPY_UINT8;
    } else if (!strcmp(d, "<i4")) {
        a->dtype = NPY_INT32;
    } else if (!strcmp(d, "<f4")) {
        a->dtype = NPY_FLOAT32;
    } else if (!strcmp(d, "<i8")) {
        a->dtype = NPY_INT64;
    } else if (!strcmp(d, "<f2")) {
        a->dtype = NPY_FLOAT16;
    } else if (!strcmp(d, "<V2") || !strcmp(d, "|V2")) {
        a->dtype = NPY_V2; /* bfloat16 or not: the caller's model says (npy.h) */
    } else if (d[0] == '>') {
        tpuio_err(h->err, h->errlen, "big-endian data ('%s') is not supported", d);
        return -1;
    } else {
        tpuio_err(h->err, h->errlen,
                  "unsupported dtype '%s' (supported: int8, uint8, int32, int64, float16, "
                  "float32, and bfloat16 as '<V2')",
                  d);
        return -1;
    }
    return 0;
}

/* The header dict: the three keys in any order, each once, nothing else. */
static int parse_header(hdr *h, npy_array *a)
{
    int have_descr = 0, have_order = 0, have_shape = 0, fortran = 0;
    if (expect(h, '{', "at the start of the header"))
        return -1;
    while (!accept(h, '}')) {
        char key[32];
        if (parse_string(h, key, sizeof key, "key") || expect(h, ':', "after a key"))
            return -1;
        int *seen;
        int rc;
        if (!strcmp(key, "descr")) {
            seen = &have_descr;
            rc = parse_descr(h, a);
        } else if (!strcmp(key, "fortran_order")) {
            seen = &have_order;
            rc = parse_bool(h, &fortran);
        } else if (!strcmp(key, "shape")) {
            seen = &have_shape;
            rc = parse_shape(h, a);
        } else {
            tpuio_err(h->err, h->errlen, "malformed header: unknown key '%s'", key);
            return -1;
        }
        if (rc)
            return -1;
        if (*seen) {
            tpuio_err(h->err, h->errlen, "malformed header: key '%s' given twice", key);
            return -1;
        }
        *seen = 1;
        if (!accept(h, ',')) {
            if (expect(h, '}', "at the end of the header"))
                return -1;
            break;
        }
    }
    skip_space(h);
    if (h->p != h->end) {
        tpuio_err(h->err, h->errlen, "malformed header: text after the dict");
        return -1;
    }
    if (!have_descr || !have_order || !have_shape) {
        tpuio_err(h->err, h->errlen, "malformed header: no '%s'",
                  !have_descr   ? "descr"
                  : !have_order ? "fortran_order"
                                : "shape");
        return -1;
    }
    /* With at most one dimension the two orders are the same bytes. */
    if (fortran && a->ndim > 1) {
        tpuio_err(h->err, h->errlen, "Fortran-order arrays are not supported (save C order)");
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------ reading -- */

int npy_parse(const void *buf, size_t len, npy_array *out, char *err, size_t errlen)
{
    const uint8_t *b = buf;
    memset(out, 0, sizeof *out);
    if (len < sizeof npy_magic || memcmp(b, npy_magic, sizeof npy_magic)) {
        tpuio_err(err, errlen, "not a .npy file (bad magic)");
        return -1;
    }
    if (len < 8) {
        tpuio_err(err, errlen, "truncated header (no version)");
        return -1;
    }
    const unsigned major = b[6], minor = b[7];
    if ((major != 1 && major != 2) || minor != 0) {
        tpuio_err(err, errlen, "unsupported .npy format version %u.%u (only 1.0 and 2.0)", major,
                  minor);
        return -1;
    }
    const size_t pre = major == 1 ? 10 : 12;
    if (len < pre) {
        tpuio_err(err, errlen, "truncated header (no header length)");
        return -1;
    }
    const size_t hlen = major == 1 ? (size_t)(b[8] | b[9] << 8) : (size_t)tpuio_get_le(b + 8, 4);
    if (hlen > len - pre) {
        tpuio_err(err, errlen, "truncated header: %zu bytes announced, %zu present", hlen,
                  len - pre);
        return -1;
    }
    npy_array a = {0};
    hdr h = {(const char *)b + pre, (const char *)b + pre + hlen, err, errlen};
    if (parse_header(&h, &a))
        return -1;

    const size_t esize = npy_dtype_size(a.dtype);
    const size_t have = len - pre - hlen;
    uint64_t count = 1;
    for (int i = 0; i < a.ndim; i++) {
        if (a.shape[i] && count > UINT64_MAX / a.shape[i]) {
            tpuio_err(err, errlen, "shape too large");
            return -1;
        }
        count *= a.shape[i];
    }
    if (count > have / esize) {
        tpuio_err(err, errlen, "truncated data: %llu bytes expected, %zu present",
                  (unsigned long long)count * esize, have);
        return -1;
    }
    const size_t bytes = (size_t)count * esize;
    if (bytes != have) {
        tpuio_err(err, errlen, "%zu unexpected bytes after the data", have - bytes);
        return -1;
    }
    a.count = count;
    a.data = malloc(bytes ? bytes : 1);
    if (!a.data) {
        tpuio_err(err, errlen, "out of memory for %zu bytes", bytes);
        return -1;
    }
    const uint8_t *src = b + pre + hlen;
    if (esize == 1) {
        memcpy(a.data, src, bytes);
    } else if (esize == 2) {
        uint16_t *dst = a.data; /* float16 and 2-byte void: bit patterns */
        for (size_t i = 0; i < count; i++)
            dst[i] = (uint16_t)tpuio_get_le(src + 2 * i, 2);
    } else if (esize == 4) {
        uint32_t *dst = a.data; /* int32 and float32 share the 32-bit pattern */
        for (size_t i = 0; i < count; i++)
            dst[i] = (uint32_t)tpuio_get_le(src + 4 * i, 4);
    } else {
        uint64_t *dst = a.data; /* int64 */
        for (size_t i = 0; i < count; i++)
            dst[i] = tpuio_get_le(src + 8 * i, 8);
    }
    *out = a;
    return 0;
}

int npy_load(const char *path, npy_array *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    void *buf;
    size_t len;
    if (tpuio_read_file(path, NPY_MAX_FILE, &buf, &len, err, errlen))
        return -1;
    const int rc = npy_parse(buf, len, out, err, errlen);
    free(buf);
    return rc;
}

/* ------------------------------------------------------------ writing -- */

void *npy_encode(const npy_array *arr, int version, size_t *len)
{
    const char *descr = arr ? dtype_descr(arr->dtype) : NULL;
    if (!descr || version < 0 || version > 2 || arr->ndim < 0 || arr->ndim > NPY_MAX_DIMS)
        return NULL;
    char dict[64 + 24 * NPY_MAX_DIMS];
    int n =
        snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
    uint64_t count = 1;
    for (int i = 0; i < arr->ndim; i++) {
        n += snprintf(dict + n, sizeof dict - (size_t)n, "%s%llu", i ? ", " : "",
                      (unsigned long long)arr->shape[i]);
        count *= arr->shape[i];
    }
    n += snprintf(dict + n, sizeof dict - (size_t)n, "%s), }", arr->ndim == 1 ? "," : "");
    if (count != arr->count)
        return NULL;
    if (version == 0)
        version = 1;

    /* Pad with spaces and a final newline so that the data starts 64-byte aligned. */
    const size_t pre = version == 1 ? 10 : 12;
    const size_t hlen = (pre + (size_t)n + 1 + 63) / 64 * 64 - pre;
    const size_t esize = npy_dtype_size(arr->dtype);
    if (version == 1 && hlen > 0xFFFF)
        return NULL;
    if (count > (SIZE_MAX - pre - hlen) / esize)
        return NULL;
    const size_t total = pre + hlen + (size_t)count * esize;
    uint8_t *out = malloc(total);
    if (!out)
        return NULL;
    memcpy(out, npy_magic, sizeof npy_magic);
    out[6] = (uint8_t)version;
    out[7] = 0;
    if (version == 1) {
        out[8] = (uint8_t)hlen;
        out[9] = (uint8_t)(hlen >> 8);
    } else {
        tpuio_put_le(out + 8, hlen, 4);
    }
    memcpy(out + pre, dict, (size_t)n);
    memset(out + pre + n, ' ', hlen - (size_t)n - 1);
    out[pre + hlen - 1] = '\n';
    uint8_t *dst = out + pre + hlen;
    if (esize == 1) {
        if (count)
            memcpy(dst, arr->data, (size_t)count);
    } else if (esize == 2) {
        const uint16_t *src = arr->data;
        for (size_t i = 0; i < count; i++)
            tpuio_put_le(dst + 2 * i, src[i], 2);
    } else if (esize == 4) {
        const uint32_t *src = arr->data;
        for (size_t i = 0; i < count; i++)
            tpuio_put_le(dst + 4 * i, src[i], 4);
    } else {
        const uint64_t *src = arr->data;
        for (size_t i = 0; i < count; i++)
            tpuio_put_le(dst + 8 * i, src[i], 8);
    }
    *len = total;
    return out;
}

void npy_free(npy_array *arr)
{
    free(arr->data);
    memset(arr, 0, sizeof *arr);
}

int npy_as_bfloat16(npy_array *arr, char *err, size_t errlen)
{
    if (arr->dtype == NPY_V2 || arr->dtype == NPY_BFLOAT16) {
        arr->dtype = NPY_BFLOAT16;
        return 0;
    }
    const char *descr = dtype_descr(arr->dtype);
    tpuio_err(err, errlen, "dtype %s ('%s'), expected bfloat16 ('<V2', as ml_dtypes saves it)",
              npy_dtype_name(arr->dtype), descr ? descr : "?");
    return -1;
}
