/* safetensors.c - the safetensors reader (safetensors.h). The JSON header is parsed by a small
 * recursive-descent reader that knows only what the format uses: objects, strings (with every
 * JSON escape), and arrays of non-negative integers. An error longjmps out; everything allocated
 * so far is reachable from the st_file being built (or p->pending), and is freed there. */
#include "io/safetensors.h"

#include "io/tpuio.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const unsigned char *s; /* the JSON header */
    size_t len, pos;
    st_file *f;
    void *pending; /* a block not yet stored in f */
    char *err;
    size_t errlen;
    jmp_buf fail;
} reader;

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3), noreturn))
#endif
static void
fail(reader *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    tpuio_verr(r->err, r->errlen, fmt, ap);
    va_end(ap);
    longjmp(r->fail, 1);
}

#if defined(__GNUC__)
__attribute__((noreturn))
#endif
static void
syntax(reader *r, const char *what)
{
    if (r->pos < r->len)
        fail(r, "bad JSON header at byte %zu: expected %s, found '%c'", r->pos, what,
             r->s[r->pos] >= 0x20 && r->s[r->pos] < 0x7f ? r->s[r->pos] : '?');
    fail(r, "bad JSON header: ends where %s was expected", what);
}

static void *xrealloc(reader *r, void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q)
        fail(r, "out of memory");
    return q;
}

static void skip_ws(reader *r)
{
    while (r->pos < r->len && (r->s[r->pos] == ' ' || r->s[r->pos] == '\t' ||
                               r->s[r->pos] == '\n' || r->s[r->pos] == '\r'))
        r->pos++;
}

static bool eat(reader *r, char c)
{
    skip_ws(r);
    if (r->pos < r->len && r->s[r->pos] == c) {
        r->pos++;
        return true;
    }
    return false;
}

static void expect(reader *r, char c)
{
    if (!eat(r, c)) {
        char what[4] = {'\'', c, '\'', 0};
        syntax(r, what);
    }
}

static unsigned hex4(reader *r)
{
    unsigned v = 0;
    for (int i = 0; i < 4; i++, r->pos++) {
        int c = r->pos < r->len ? r->s[r->pos] : -1;
        int d = c >= '0' && c <= '9'   ? c - '0'
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                       : -1;
        if (d < 0)
            syntax(r, "4 hex digits after \\u");
        v = v * 16 + (unsigned)d;
    }
    return v;
}

/* A JSON string, decoded to UTF-8, into r->pending (and returned). */
static char *string(reader *r)
{
    expect(r, '"');
    size_t n = 0, cap = 16;
    char *out = r->pending = xrealloc(r, NULL, cap);
    for (;;) {
        if (r->pos >= r->len)
            syntax(r, "'\"' closing a string");
        unsigned c = r->s[r->pos++];
        if (c == '"')
            break;
        if (c < 0x20)
            fail(r, "bad JSON header at byte %zu: control character in a string", r->pos - 1);
        unsigned char u[4];
        size_t k = 0;
        if (c != '\\') { /* a raw byte, UTF-8 passed through */
            u[k++] = (unsigned char)c;
        } else {
            if (r->pos >= r->len)
                syntax(r, "an escape");
            char e = (char)r->s[r->pos++];
            const char *from = "\"\\/bfnrt", *to = "\"\\/\b\f\n\r\t", *hit = strchr(from, e);
            if (e && hit) {
                u[k++] = (unsigned char)to[hit - from];
            } else if (e == 'u') {
                unsigned cp = hex4(r);
                if (cp >= 0xd800 && cp < 0xdc00) { /* a surrogate pair */
                    if (r->pos + 1 >= r->len || r->s[r->pos] != '\\' || r->s[r->pos + 1] != 'u')
                        syntax(r, "a low surrogate \\uDC00-\\uDFFF");
                    r->pos += 2;
                    unsigned lo = hex4(r);
                    if (lo < 0xdc00 || lo > 0xdfff)
                        syntax(r, "a low surrogate \\uDC00-\\uDFFF");
                    cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
                } else if (cp >= 0xdc00 && cp < 0xe000) {
                    fail(r, "bad JSON header at byte %zu: lone low surrogate", r->pos - 6);
                }
                if (cp == 0)
                    fail(r, "bad JSON header at byte %zu: \\u0000 in a string", r->pos - 6);
                if (cp < 0x80) {
                    u[k++] = (unsigned char)cp;
                } else {
                    int extra = cp < 0x800 ? 1 : cp < 0x10000 ? 2 : 3;
                    u[k++] = (unsigned char)(((0xff00u >> (extra + 1)) & 0xff) | cp >> (6 * extra));
                    for (int i = extra - 1; i >= 0; i--)
                        u[k++] = (unsigned char)(0x80 | (cp >> (6 * i) & 0x3f));
                }
            } else {
                r->pos--;
                syntax(r, "one of the escapes \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\u");
            }
        }
        if (n + k + 1 > cap)
            out = r->pending = xrealloc(r, out, cap *= 2);
        memcpy(out + n, u, k);
        n += k;
    }
    out[n] = 0;
    return out;
}

static uint64_t integer(reader *r, const char *what)
{
    skip_ws(r);
    size_t start = r->pos;
    uint64_t v = 0;
    while (r->pos < r->len && r->s[r->pos] >= '0' && r->s[r->pos] <= '9') {
        if (v > (UINT64_MAX >> 4))
            fail(r, "bad JSON header at byte %zu: %s too large", start, what);
        v = v * 10 + (uint64_t)(r->s[r->pos++] - '0');
    }
    if (r->pos == start)
        syntax(r, what);
    if (r->pos - start > 1 && r->s[start] == '0')
        fail(r, "bad JSON header at byte %zu: leading zero in %s", start, what);
    return v;
}

/* [int, ...] with at most max entries; returns the count. */
static int int_array(reader *r, uint64_t *v, int max, const char *what)
{
    int n = 0;
    expect(r, '[');
    if (eat(r, ']'))
        return 0;
    do {
        if (n == max)
            fail(r, "bad JSON header at byte %zu: more than %d entries in %s", r->pos, max, what);
        v[n++] = integer(r, "a non-negative integer");
    } while (eat(r, ','));
    expect(r, ']');
    return n;
}

static void metadata(reader *r)
{
    st_file *f = r->f;
    if (f->meta_keys)
        fail(r, "bad JSON header: __metadata__ appears twice");
    f->meta_keys = xrealloc(r, NULL, sizeof *f->meta_keys);
    f->meta_values = xrealloc(r, NULL, sizeof *f->meta_values);
    expect(r, '{');
    if (eat(r, '}'))
        return;
    do {
        f->meta_keys = xrealloc(r, f->meta_keys, (size_t)(f->n_meta + 1) * sizeof *f->meta_keys);
        f->meta_values =
            xrealloc(r, f->meta_values, (size_t)(f->n_meta + 1) * sizeof *f->meta_values);
        char *key = string(r);
        for (int i = 0; i < f->n_meta; i++)
            if (!strcmp(f->meta_keys[i], key))
                fail(r, "bad JSON header: __metadata__ key '%s' appears twice", key);
        f->meta_keys[f->n_meta] = key;
        f->meta_values[f->n_meta] = NULL;
        f->n_meta++;
        r->pending = NULL;
        expect(r, ':');
        f->meta_values[f->n_meta - 1] = string(r);
        r->pending = NULL;
    } while (eat(r, ','));
    expect(r, '}');
}

static const char *const dtype_names[ST_DTYPE_COUNT_] = {
    "F32", "I8", "I32", "U8", "BF16", "F16", "F64", "I16", "I64", "U16", "U32", "U64", "BOOL"};
static const unsigned char dtype_sizes[ST_DTYPE_COUNT_] = {4, 1, 4, 1, 2, 2, 8, 2, 8, 2, 4, 8, 1};

static void tensor(reader *r, st_tensor *t)
{
    bool seen[3] = {false, false, false};
    expect(r, '{');
    do {
        char *key = string(r);
        int k = !strcmp(key, "dtype")          ? 0
                : !strcmp(key, "shape")        ? 1
                : !strcmp(key, "data_offsets") ? 2
                                               : -1;
        if (k < 0)
            fail(r, "bad JSON header: tensor '%s' has unknown key '%s'", t->name, key);
        if (seen[k])
            fail(r, "bad JSON header: tensor '%s' has '%s' twice", t->name, key);
        seen[k] = true;
        free(key);
        r->pending = NULL;
        expect(r, ':');
        if (k == 0) {
            char *d = string(r);
            int i = 0;
            while (i < ST_DTYPE_COUNT_ && strcmp(d, dtype_names[i]))
                i++;
            if (i == ST_DTYPE_COUNT_)
                fail(r,
                     "tensor '%s': dtype '%s' not supported (F32, F64, F16, BF16, I8, I16, I32, "
                     "I64, U8, U16, U32, U64, BOOL)",
                     t->name, d);
            t->dtype = (st_dtype)i;
            free(d);
            r->pending = NULL;
        } else if (k == 1) {
            uint64_t dims[ST_MAX_RANK];
            t->rank = int_array(r, dims, ST_MAX_RANK, "shape");
            for (int i = 0; i < t->rank; i++)
                t->shape[i] = dims[i] > INT64_MAX ? INT64_MAX : (int64_t)dims[i];
        } else {
            uint64_t off[2];
            if (int_array(r, off, 2, "data_offsets") != 2)
                fail(r, "bad JSON header: tensor '%s': data_offsets needs 2 entries", t->name);
            if (off[0] > off[1])
                fail(r, "tensor '%s': data_offsets [%llu, %llu] end before they begin", t->name,
                     (unsigned long long)off[0], (unsigned long long)off[1]);
            t->offset = (size_t)off[0];
            t->size = (size_t)(off[1] - off[0]);
        }
    } while (eat(r, ','));
    expect(r, '}');
    for (int k = 0; k < 3; k++)
        if (!seen[k])
            fail(r, "bad JSON header: tensor '%s' has no '%s'", t->name,
                 (const char *[]){"dtype", "shape", "data_offsets"}[k]);
}

static void header(reader *r)
{
    st_file *f = r->f;
    expect(r, '{');
    if (!eat(r, '}')) {
        do {
            char *name = string(r);
            expect(r, ':');
            if (!strcmp(name, "__metadata__")) {
                free(name);
                r->pending = NULL;
                metadata(r);
                continue;
            }
            if (st_find(f, name))
                fail(r, "bad JSON header: tensor '%s' appears twice", name);
            f->tensors = xrealloc(r, f->tensors, (size_t)(f->n_tensors + 1) * sizeof *f->tensors);
            st_tensor *t = &f->tensors[f->n_tensors++];
            memset(t, 0, sizeof *t);
            t->name = name;
            r->pending = NULL;
            tensor(r, t);
        } while (eat(r, ','));
        expect(r, '}');
    }
    skip_ws(r);
    if (r->pos != r->len)
        syntax(r, "the end of the header after the top-level object");
}

/* Offsets inside the data, sizes matching dtype and shape, no two tensors sharing a byte. */
static void validate(reader *r, const unsigned char *data, size_t data_len)
{
    st_file *f = r->f;
    int *by_offset = r->pending = xrealloc(r, NULL, ((size_t)f->n_tensors + 1) * sizeof(int));
    int n = 0;
    for (int i = 0; i < f->n_tensors; i++) {
        st_tensor *t = &f->tensors[i];
        uint64_t e = 1;
        for (int d = 0; d < t->rank; d++) {
            if (t->shape[d] && e > UINT64_MAX / 16 / (uint64_t)t->shape[d])
                fail(r, "tensor '%s': shape too large", t->name);
            e *= (uint64_t)t->shape[d];
        }
        t->elements = (int64_t)e;
        char shape[128];
        size_t at = 0;
        for (int d = 0; d < t->rank && at < sizeof shape; d++)
            at += (size_t)snprintf(shape + at, sizeof shape - at, d ? ",%lld" : "%lld",
                                   (long long)t->shape[d]);
        shape[at < sizeof shape ? at : sizeof shape - 1] = 0;
        if (e * st_dtype_size(t->dtype) != t->size)
            fail(r, "tensor '%s': %s [%s] needs %llu bytes but data_offsets span %zu", t->name,
                 st_dtype_name(t->dtype), shape, (unsigned long long)(e * st_dtype_size(t->dtype)),
                 t->size);
        if (t->offset > data_len || t->size > data_len - t->offset)
            fail(r, "tensor '%s': data_offsets [%zu, %zu] out of range: the data has %zu bytes",
                 t->name, t->offset, t->offset + t->size, data_len);
        t->data = data + t->offset;
        if (t->size) { /* insertion sort by offset; empty tensors occupy no bytes */
            int j = n++;
            while (j > 0 && f->tensors[by_offset[j - 1]].offset > t->offset) {
                by_offset[j] = by_offset[j - 1];
                j--;
            }
            by_offset[j] = i;
        }
    }
    for (int j = 1; j < n; j++) {
        const st_tensor *a = &f->tensors[by_offset[j - 1]], *b = &f->tensors[by_offset[j]];
        if (b->offset < a->offset + a->size)
            fail(r, "tensors '%s' [%zu, %zu] and '%s' [%zu, %zu] overlap", a->name, a->offset,
                 a->offset + a->size, b->name, b->offset, b->offset + b->size);
    }
    free(by_offset);
    r->pending = NULL;
}

/* r lives in the caller's frame: nothing local here changes between setjmp and longjmp. */
static int run(reader *const r, const unsigned char *b, size_t len)
{
    if (setjmp(r->fail)) {
        free(r->pending);
        st_free(r->f);
        return -1;
    }
    if (len < 8)
        fail(r, "file is %zu bytes, shorter than the 8-byte header length", len);
    const uint64_t n = tpuio_get_le(b, 8);
    if (n == 0 || n > ST_MAX_HEADER || n > len - 8)
        fail(r, "bad header length %llu: the file has %zu bytes after the length field",
             (unsigned long long)n, len - 8);
    r->f->buf_ = xrealloc(r, NULL, len);
    memcpy(r->f->buf_, b, len);
    r->s = r->f->buf_ + 8;
    r->len = (size_t)n;
    header(r);
    validate(r, r->f->buf_ + 8 + n, len - 8 - (size_t)n);
    return 0;
}

int st_parse(const void *buf, size_t len, st_file *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    reader r = {.f = out, .err = err, .errlen = errlen};
    return run(&r, buf, len);
}

int st_load(const char *path, st_file *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    void *buf;
    size_t len;
    if (tpuio_read_file(path, ST_MAX_FILE, &buf, &len, err, errlen))
        return -1;
    const int rc = st_parse(buf, len, out, err, errlen);
    free(buf);
    return rc;
}

void st_free(st_file *f)
{
    for (int i = 0; i < f->n_tensors; i++)
        free(f->tensors[i].name);
    for (int i = 0; i < f->n_meta; i++) {
        free(f->meta_keys[i]);
        free(f->meta_values[i]);
    }
    free(f->tensors);
    free(f->meta_keys);
    free(f->meta_values);
    free(f->buf_);
    memset(f, 0, sizeof *f);
}

const st_tensor *st_find(const st_file *f, const char *name)
{
    for (int i = 0; i < f->n_tensors; i++)
        if (!strcmp(f->tensors[i].name, name))
            return &f->tensors[i];
    return NULL;
}

const char *st_meta(const st_file *f, const char *key)
{
    for (int i = 0; i < f->n_meta; i++)
        if (!strcmp(f->meta_keys[i], key))
            return f->meta_values[i];
    return NULL;
}

size_t st_dtype_size(st_dtype t) { return (unsigned)t < ST_DTYPE_COUNT_ ? dtype_sizes[t] : 0; }

const char *st_dtype_name(st_dtype t)
{
    return (unsigned)t < ST_DTYPE_COUNT_ ? dtype_names[t] : "?";
}
