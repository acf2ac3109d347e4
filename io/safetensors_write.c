/* safetensors_write.c - the safetensors writer (safetensors.h): the layout and the JSON text of
 * the reference implementation's writer (Hugging Face's safetensors, serde_json), so that the
 * same tensors give the same bytes. */
#include "io/safetensors.h"

#include "io/tpuio.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The order of the reference implementation's Dtype enum, which it keeps in increasing alignment:
 * its writer lays tensors out by descending order, so that each starts aligned. */
static const unsigned char dtype_order[ST_DTYPE_COUNT_] = {
    [ST_BOOL] = 0, [ST_U8] = 1,   [ST_I8] = 2,  [ST_I16] = 3, [ST_U16] = 4,
    [ST_F16] = 5,  [ST_BF16] = 6, [ST_I32] = 7, [ST_U32] = 8, [ST_F32] = 9,
    [ST_F64] = 10, [ST_I64] = 11, [ST_U64] = 12};

/* A growing byte string; after a failed allocation it drops everything that follows. */
typedef struct {
    char *p;
    size_t len, cap;
    bool oom;
} text;

static void put(text *t, const char *s, size_t n)
{
    if (!t->oom && t->len + n > t->cap) {
        size_t cap = t->cap ? t->cap : 256;
        while (cap < t->len + n)
            cap *= 2;
        char *q = realloc(t->p, cap);
        t->oom = !q;
        if (q) {
            t->p = q;
            t->cap = cap;
        }
    }
    if (!t->oom) {
        memcpy(t->p + t->len, s, n);
        t->len += n;
    }
}

static void put_str(text *t, const char *s) { put(t, s, strlen(s)); }

static void put_num(text *t, unsigned long long v)
{
    char num[24];
    put(t, num, (size_t)snprintf(num, sizeof num, "%llu", v));
}

/* A JSON string, escaped as serde_json escapes: '"', '\\' and control characters only. */
static void put_json(text *t, const char *s)
{
    static const char raw[] = "\"\\\b\f\n\r\t", letter[] = "\"\\bfnrt";
    put(t, "\"", 1);
    for (; *s; s++) {
        const unsigned char c = (unsigned char)*s;
        const char *hit = strchr(raw, c);
        char esc[8] = {'\\', hit ? letter[hit - raw] : 0};
        if (hit)
            put(t, esc, 2);
        else if (c < 0x20)
            put(t, esc, (size_t)snprintf(esc, sizeof esc, "\\u%04x", c));
        else
            put(t, s, 1);
    }
    put(t, "\"", 1);
}

static bool is_utf8(const char *s)
{
    for (size_t n; *s; s += n)
        if (!(n = (unsigned char)*s < 0x80 ? 1 : tpuio_utf8_len(s)))
            return false;
    return true;
}

/* A tensor to write and its bytes. */
typedef struct {
    const st_tensor *t;
    size_t bytes;
} entry;

static int by_name(const void *a, const void *b)
{
    return strcmp(((const entry *)a)->t->name, ((const entry *)b)->t->name);
}

static int by_layout(const void *a, const void *b)
{
    const st_tensor *x = ((const entry *)a)->t, *y = ((const entry *)b)->t;
    const int dx = dtype_order[x->dtype], dy = dtype_order[y->dtype];
    return dx != dy ? dy - dx : strcmp(x->name, y->name);
}

typedef struct {
    const char *key, *value;
} meta_pair;

static int by_key(const void *a, const void *b)
{
    return strcmp(((const meta_pair *)a)->key, ((const meta_pair *)b)->key);
}

/* The bytes of t after checking it, or SIZE_MAX with the reason in err. Element counts are bounded
 * as the reader bounds them. */
static size_t tensor_bytes(const st_tensor *t, char *err, size_t errlen)
{
    const char *why = !t->name                                ? "has no name"
                      : !is_utf8(t->name)                     ? "has a name that is not UTF-8"
                      : !strcmp(t->name, "__metadata__")      ? "has the name reserved for metadata"
                      : (unsigned)t->dtype >= ST_DTYPE_COUNT_ ? "has an unknown dtype"
                                                              : NULL;
    if (why) {
        tpuio_err(err, errlen, "tensor '%s' %s", t->name ? t->name : "", why);
        return SIZE_MAX;
    }
    if (t->rank < 0 || t->rank > ST_MAX_RANK) {
        tpuio_err(err, errlen, "tensor '%s': rank %d (0 to %d)", t->name, t->rank, ST_MAX_RANK);
        return SIZE_MAX;
    }
    uint64_t e = 1;
    for (int d = 0; d < t->rank; d++) {
        if (t->shape[d] < 0) {
            tpuio_err(err, errlen, "tensor '%s': dimension %d is %lld", t->name, d,
                      (long long)t->shape[d]);
            return SIZE_MAX;
        }
        if (t->shape[d] && e > (uint64_t)SIZE_MAX / 16 / (uint64_t)t->shape[d]) {
            tpuio_err(err, errlen, "tensor '%s': shape too large", t->name);
            return SIZE_MAX;
        }
        e *= (uint64_t)t->shape[d];
    }
    const size_t bytes = (size_t)e * st_dtype_size(t->dtype);
    if (bytes && !t->data) {
        tpuio_err(err, errlen, "tensor '%s' has no data", t->name);
        return SIZE_MAX;
    }
    return bytes;
}

/* Checks f's tensors and metadata and sorts them into order (by layout) and meta (by key). */
static int check(const st_file *f, entry *order, meta_pair *meta, size_t *data_len, char *err,
                 size_t errlen)
{
    *data_len = 0;
    for (int i = 0; i < f->n_tensors; i++) {
        const size_t bytes = tensor_bytes(&f->tensors[i], err, errlen);
        if (bytes == SIZE_MAX)
            return -1;
        if (bytes > SIZE_MAX / 2 - *data_len) {
            tpuio_err(err, errlen, "the tensors hold too many bytes");
            return -1;
        }
        *data_len += bytes;
        order[i] = (entry){&f->tensors[i], bytes};
    }
    qsort(order, (size_t)f->n_tensors, sizeof *order, by_name);
    for (int i = 1; i < f->n_tensors; i++)
        if (!strcmp(order[i - 1].t->name, order[i].t->name)) {
            tpuio_err(err, errlen, "tensor '%s' appears twice", order[i].t->name);
            return -1;
        }
    qsort(order, (size_t)f->n_tensors, sizeof *order, by_layout);
    for (int i = 0; i < f->n_meta; i++) {
        const meta_pair m = {f->meta_keys[i], f->meta_values[i]};
        const char *why = !m.key || !m.value  ? "has no key or value"
                          : !is_utf8(m.key)   ? "has a key that is not UTF-8"
                          : !is_utf8(m.value) ? "has a value that is not UTF-8"
                                              : NULL;
        if (why) {
            tpuio_err(err, errlen, "__metadata__ entry '%s' %s", m.key ? m.key : "", why);
            return -1;
        }
        meta[i] = m;
    }
    qsort(meta, (size_t)f->n_meta, sizeof *meta, by_key);
    for (int i = 1; i < f->n_meta; i++)
        if (!strcmp(meta[i - 1].key, meta[i].key)) {
            tpuio_err(err, errlen, "__metadata__ key '%s' appears twice", meta[i].key);
            return -1;
        }
    return 0;
}

/* The JSON header of the sorted tensors and metadata, padded with spaces to a multiple of 8. */
static text header_text(const entry *order, int n, const meta_pair *meta, int n_meta)
{
    text h = {0};
    put_str(&h, "{");
    if (n_meta) {
        put_str(&h, "\"__metadata__\":{");
        for (int i = 0; i < n_meta; i++) {
            put_str(&h, i ? "," : "");
            put_json(&h, meta[i].key);
            put_str(&h, ":");
            put_json(&h, meta[i].value);
        }
        put_str(&h, n ? "}," : "}");
    }
    size_t offset = 0;
    for (int i = 0; i < n; i++) {
        const st_tensor *t = order[i].t;
        put_str(&h, i ? "," : "");
        put_json(&h, t->name);
        put_str(&h, ":{\"dtype\":\"");
        put_str(&h, st_dtype_name(t->dtype));
        put_str(&h, "\",\"shape\":[");
        for (int d = 0; d < t->rank; d++) {
            put_str(&h, d ? "," : "");
            put_num(&h, (unsigned long long)t->shape[d]);
        }
        put_str(&h, "],\"data_offsets\":[");
        put_num(&h, offset);
        put_str(&h, ",");
        put_num(&h, offset + order[i].bytes);
        put_str(&h, "]}");
        offset += order[i].bytes;
    }
    put_str(&h, "}");
    while (h.len % 8)
        put_str(&h, " ");
    return h;
}

int st_encode(const st_file *f, void **out, size_t *len, char *err, size_t errlen)
{
    *out = NULL;
    *len = 0;
    if (f->n_tensors < 0 || f->n_meta < 0 || (f->n_tensors && !f->tensors) ||
        (f->n_meta && (!f->meta_keys || !f->meta_values))) {
        tpuio_err(err, errlen, "bad arguments: %d tensors, %d metadata entries", f->n_tensors,
                  f->n_meta);
        return -1;
    }
    entry *order = malloc(((size_t)f->n_tensors + 1) * sizeof *order);
    meta_pair *meta = malloc(((size_t)f->n_meta + 1) * sizeof *meta);
    size_t data_len;
    text h = {0};
    int rc = -1;
    if (!order || !meta) {
        tpuio_err(err, errlen, "out of memory");
        goto done;
    }
    if (check(f, order, meta, &data_len, err, errlen))
        goto done;
    h = header_text(order, f->n_tensors, meta, f->n_meta);
    if (h.len > ST_MAX_HEADER) {
        tpuio_err(err, errlen, "header of %zu bytes (at most %d)", h.len, ST_MAX_HEADER);
        goto done;
    }
    unsigned char *b = h.oom ? NULL : malloc(8 + h.len + data_len);
    if (!b) {
        tpuio_err(err, errlen, "out of memory for %zu bytes", 8 + h.len + data_len);
        goto done;
    }
    *out = b;
    *len = 8 + h.len + data_len;
    tpuio_put_le(b, h.len, 8);
    memcpy(b + 8, h.p, h.len);
    b += 8 + h.len;
    for (int i = 0; i < f->n_tensors; i++) {
        if (order[i].bytes)
            memcpy(b, order[i].t->data, order[i].bytes);
        b += order[i].bytes;
    }
    rc = 0;
done:
    free(h.p);
    free(meta);
    free(order);
    return rc;
}

int st_save(const char *path, const st_file *f, char *err, size_t errlen)
{
    void *img;
    size_t len;
    if (st_encode(f, &img, &len, err, errlen))
        return -1;
    const int rc = tpuio_write_file(path, img, len, err, errlen);
    free(img);
    return rc;
}
