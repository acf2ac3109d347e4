/* shlo_lex.c - MLIR tokens, types and dense<...> literals for the StableHLO reader (shlo.h). */
#include "hlo/shlo.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------- tokens -- */

static int peekc(const parser *p, size_t at) { return at < p->len ? (unsigned char)p->s[at] : -1; }

static bool id_start(int c) { return c >= 0 && (isalpha(c) || c == '_'); }
static bool id_char(int c) { return c >= 0 && (isalnum(c) || c == '_' || c == '$' || c == '.'); }
/* %names may also hold '-' and start with a digit. */
static bool value_char(int c) { return id_char(c) || c == '-'; }

static size_t skip_string(parser *p, size_t pos)
{
    size_t start = pos++;
    while (pos < p->len && p->s[pos] != '"' && p->s[pos] != '\n')
        pos += p->s[pos] == '\\' ? 2 : 1;
    if (pos >= p->len || p->s[pos] != '"')
        lx_fail_at(p, start, "unterminated string");
    return pos + 1;
}

stok sx_lex_at(parser *p, size_t pos, size_t *end)
{
    stok t = {S_EOF, 0, 0, 0, 0};
    pos = lx_skip_space(p, pos);
    t.at = t.pos = pos;
    int c = peekc(p, pos);
    size_t e = pos + 1;
    if (c < 0) {
        e = pos;
    } else if (c == '%' || c == '@' || c == '#' || c == '^' || c == '!') {
        static const char sig[] = "%@#^!";
        static const stok_kind kinds[] = {S_VALUE, S_SYM, S_HASH, S_CARET, S_BANG};
        t.kind = kinds[strchr(sig, c) - sig];
        t.pos = e;
        if (c == '@' && peekc(p, e) == '"') { /* @"quoted symbol" */
            e = skip_string(p, e);
        } else {
            while (c == '%' ? value_char(peekc(p, e)) : id_char(peekc(p, e)))
                e++;
            if (c == '%' && peekc(p, e) == '#' && isdigit(peekc(p, e + 1)))
                for (e++; isdigit(peekc(p, e));)
                    e++;
        }
        if (e == t.pos)
            lx_fail_at(p, pos, "expected a name after '%c'", c);
    } else if (id_start(c)) {
        while (id_char(peekc(p, e)))
            e++;
        t.kind = S_WORD;
    } else if (isdigit(c) || (c == '-' && isdigit(peekc(p, e)))) {
        bool hex = c == '0' && peekc(p, e) == 'x';
        for (;;) {
            int d = peekc(p, e), prev = (unsigned char)p->s[e - 1];
            if (d >= 0 && (isalnum(d) || d == '.'))
                e++;
            else if ((d == '+' || d == '-') && !hex && (prev == 'e' || prev == 'E'))
                e++;
            else
                break;
        }
        t.kind = S_NUM;
    } else if (c == '"') {
        e = skip_string(p, pos);
        t.kind = S_STRING;
    } else if (c == '-' && peekc(p, e) == '>') {
        e++;
        t.kind = S_ARROW;
    } else {
        t.kind = S_PUNCT;
        t.ch = (char)c;
    }
    t.len = e - t.pos;
    if (t.len > HLO_MAX_NAME)
        lx_fail_at(p, pos, "token longer than %d bytes", HLO_MAX_NAME);
    *end = e;
    return t;
}

stok sx_peek(parser *p)
{
    size_t end;
    return sx_lex_at(p, p->pos, &end);
}

stok sx_next(parser *p)
{
    size_t end;
    stok t = sx_lex_at(p, p->pos, &end);
    p->pos = end;
    return t;
}

bool sx_punct(stok t, char ch) { return t.kind == S_PUNCT && t.ch == ch; }

bool sx_is(const parser *p, stok t, const char *word)
{
    return t.kind == S_WORD && strlen(word) == t.len && !memcmp(p->s + t.pos, word, t.len);
}

void sx_expected(parser *p, stok t, const char *what)
{
    lx_fail_expected(p, t.at, t.pos + t.len, what);
}

stok sx_expect_punct(parser *p, char ch, const char *ctx)
{
    stok t = sx_next(p);
    if (!sx_punct(t, ch)) {
        char what[96];
        snprintf(what, sizeof what, "'%c' %s", ch, ctx);
        sx_expected(p, t, what);
    }
    return t;
}

bool sx_eat_punct(parser *p, char ch)
{
    if (!sx_punct(sx_peek(p), ch))
        return false;
    sx_next(p);
    return true;
}

stok sx_expect(parser *p, stok_kind kind, const char *what)
{
    stok t = sx_next(p);
    if (t.kind != kind)
        sx_expected(p, t, what);
    return t;
}

int64_t sx_int(parser *p, const char *what, int64_t lo, int64_t hi)
{
    stok t = sx_next(p);
    if (t.kind != S_NUM)
        sx_expected(p, t, what);
    return lx_int_token(p, t.at, t.pos, t.len, what, lo, hi);
}

void sx_skip_value(parser *p, bool stop_colon, const char *what)
{
    char stack[HLO_MAX_DEPTH];
    int depth = 0;
    size_t start = lx_skip_space(p, p->pos);
    for (;;) {
        size_t end;
        stok t = sx_lex_at(p, p->pos, &end);
        if (t.kind == S_EOF)
            sx_expected(p, t, depth ? "a closing bracket" : what);
        if (t.kind == S_PUNCT) {
            char c = t.ch;
            if (depth == 0 && (c == ',' || (c == ':' && stop_colon) || strchr(")]}>", c)))
                break;
            if (strchr("([{<", c)) {
                if (depth == HLO_MAX_DEPTH)
                    lx_fail_at(p, t.at, "%s nested deeper than %d", what, HLO_MAX_DEPTH);
                stack[depth++] = c;
            } else if (strchr(")]}>", c)) {
                char open = stack[depth - 1];
                char close = open == '(' ? ')' : open == '[' ? ']' : open == '{' ? '}' : '>';
                if (c != close)
                    lx_fail_at(p, t.at, "expected '%c' in %s, found '%c'", close, what, c);
                depth--;
            }
        }
        p->pos = end;
    }
    if (lx_skip_space(p, p->pos) == start)
        sx_expected(p, sx_peek(p), what);
}

void sx_skip_group(parser *p, char open, const char *what)
{
    static const char *const closers = ")]}>";
    char close = closers[strchr("([{<", open) - "([{<"];
    sx_expect_punct(p, open, what);
    if (!sx_punct(sx_peek(p), close))
        sx_skip_value(p, false, what);
    while (sx_eat_punct(p, ',')) /* lists: the skip stops at each top-level ',' */
        sx_skip_value(p, false, what);
    char ctx[48];
    snprintf(ctx, sizeof ctx, "to close the %s", what);
    sx_expect_punct(p, close, ctx);
}

static int hex_digit(int c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

char *sx_string(parser *p, stok t)
{
    char *r = lx_alloc(p, t.len), *w = r;
    size_t i = t.pos + 1, end = t.pos + t.len - 1;
    while (i < end) {
        size_t at = i;
        int c = (unsigned char)p->s[i++];
        if (c == '\\') {
            int e = i < end ? (unsigned char)p->s[i++] : 0;
            int h1 = hex_digit(e), h2 = i < end ? hex_digit((unsigned char)p->s[i]) : -1;
            if (e == '\\' || e == '"')
                c = e;
            else if (e == 'n')
                c = '\n';
            else if (e == 't')
                c = '\t';
            else if (h1 >= 0 && h2 >= 0)
                c = h1 * 16 + h2, i++;
            else
                lx_fail_at(p, at, "unknown escape in string");
        }
        if (c == 0)
            lx_fail_at(p, at, "NUL character in string");
        *w++ = (char)c;
    }
    return r;
}

/* -------------------------------------------------------------- types -- */

static const struct {
    const char *name;
    hlo_type type;
} elem_types[] = {
    {"i1", HLO_PRED},  {"i8", HLO_S8},    {"i16", HLO_S16},  {"i32", HLO_S32},  {"i64", HLO_S64},
    {"si8", HLO_S8},   {"si16", HLO_S16}, {"si32", HLO_S32}, {"si64", HLO_S64}, {"ui8", HLO_U8},
    {"ui16", HLO_U16}, {"ui32", HLO_U32}, {"ui64", HLO_U64}, {"f16", HLO_F16},  {"bf16", HLO_BF16},
    {"f32", HLO_F32},  {"f64", HLO_F64},
};

static int elem_type(const parser *p, stok t)
{
    for (size_t i = 0; i < sizeof elem_types / sizeof *elem_types; i++)
        if (sx_is(p, t, elem_types[i].name))
            return (int)elem_types[i].type;
    return -1;
}

static void tensor_type(parser *p, hlo_shape *sh)
{
    sx_expect_punct(p, '<', "after 'tensor'");
    size_t pos = lx_skip_space(p, p->pos);
    sh->elements = 1;
    while (isdigit(peekc(p, pos)) || peekc(p, pos) == '?') {
        size_t at = pos;
        if (peekc(p, pos) == '?')
            lx_fail_at(p, at, "dynamic dimension '?' is not supported");
        int64_t n = 0;
        while (isdigit(peekc(p, pos))) {
            n = n * 10 + (p->s[pos++] - '0');
            if (n > HLO_MAX_ELEMENTS)
                lx_fail_at(p, at, "dimension size out of range [0, %lld]", HLO_MAX_ELEMENTS);
        }
        if (peekc(p, pos) != 'x')
            lx_fail_at(p, pos, "expected 'x' after a dimension in tensor type");
        pos++;
        if (sh->rank == HLO_MAX_RANK)
            lx_fail_at(p, at, "shape has more than %d dimensions", HLO_MAX_RANK);
        if (n && sh->elements > HLO_MAX_ELEMENTS / n)
            lx_fail_at(p, at, "shape has more than %lld elements", HLO_MAX_ELEMENTS);
        sh->elements *= n;
        sh->dims[sh->rank++] = n;
    }
    p->pos = pos;
    stok t = sx_next(p);
    int type = elem_type(p, t);
    if (type < 0)
        lx_fail_at(p, t.at, "unsupported element type '%.*s'", (int)(t.pos + t.len - t.at),
                   p->s + t.at);
    sh->type = (hlo_type)type;
    if (sx_eat_punct(p, ',')) /* an encoding such as #stablehlo.bounds<...>: not kept */
        sx_skip_value(p, false, "tensor encoding");
    sx_expect_punct(p, '>', "to close the tensor type");
}

void sx_type(parser *p, hlo_shape *sh, int depth)
{
    stok t = sx_next(p);
    if (depth >= HLO_MAX_DEPTH)
        lx_fail_at(p, t.at, "type nested deeper than %d", HLO_MAX_DEPTH);
    memset(sh, 0, sizeof *sh);
    if (sx_is(p, t, "tensor")) {
        tensor_type(p, sh);
    } else if (sx_is(p, t, "tuple")) {
        int cap = 0;
        sh->type = HLO_TUPLE;
        sx_expect_punct(p, '<', "after 'tuple'");
        while (!sx_eat_punct(p, '>')) {
            if (sh->n_tuple > 0)
                sx_expect_punct(p, ',', "or '>' in tuple type");
            sh->tuple = lx_grow(p, sh->tuple, sh->n_tuple, &cap, sizeof *sh->tuple);
            sx_type(p, &sh->tuple[sh->n_tuple++], depth + 1);
        }
    } else if (t.kind == S_BANG && t.len == 15 && !memcmp(p->s + t.pos, "stablehlo.token", 15)) {
        sh->type = HLO_TOKEN;
    } else if (elem_type(p, t) >= 0) {
        sh->type = (hlo_type)elem_type(p, t);
        sh->elements = 1;
    } else {
        sx_expected(p, t, "a type such as tensor<2x3xf32>");
    }
}

/* ----------------------------------------------------------- literals -- */

static bool is_float(hlo_type t)
{
    return t == HLO_F16 || t == HLO_BF16 || t == HLO_F32 || t == HLO_F64;
}

static double half_to_double(uint32_t h)
{
    int e = (int)(h >> 10 & 0x1f), m = (int)(h & 0x3ff);
    double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(m + 1024, e - 25);
    return h >> 15 ? -v : v;
}

/* The value of an element of type t stored as the bits (MLIR's hex form of floats). */
static double from_bits(hlo_type t, uint64_t b)
{
    switch (t) {
    case HLO_F16: return half_to_double((uint32_t)b);
    case HLO_BF16:
    case HLO_F32: {
        uint32_t u = t == HLO_BF16 ? (uint32_t)b << 16 : (uint32_t)b;
        float f;
        memcpy(&f, &u, sizeof f);
        return f;
    }
    case HLO_F64: {
        double d;
        memcpy(&d, &b, sizeof d);
        return d;
    }
    case HLO_PRED: return b != 0;
    case HLO_S8: return (int8_t)b;
    case HLO_S16: return (int16_t)b;
    case HLO_S32: return (int32_t)b;
    case HLO_S64: return (double)(int64_t)b;
    default: return (double)b;
    }
}

static size_t elem_bytes(hlo_type t)
{
    switch (t) {
    case HLO_PRED:
    case HLO_S8:
    case HLO_U8: return 1;
    case HLO_S16:
    case HLO_U16:
    case HLO_F16:
    case HLO_BF16: return 2;
    case HLO_S32:
    case HLO_U32:
    case HLO_F32: return 4;
    default: return 8;
    }
}

static double scalar(parser *p, hlo_type type)
{
    stok t = sx_next(p);
    const char *s = p->s + t.pos;
    if (sx_is(p, t, "true") || sx_is(p, t, "false"))
        return t.len == 4;
    bool minus = sx_punct(t, '-') && is_float(type);
    stok w = minus ? sx_peek(p) : t; /* inf, -inf, nan: MLIR prints hex, people write these */
    if (is_float(type) && (sx_is(p, w, "inf") || sx_is(p, w, "nan"))) {
        if (minus)
            sx_next(p);
        return sx_is(p, w, "nan") ? NAN : minus ? -INFINITY : INFINITY;
    }
    if (t.kind != S_NUM)
        sx_expected(p, t, "a number in dense literal");
    if (t.len > 2 && s[0] == '0' && s[1] == 'x') {
        uint64_t b = 0;
        if (t.len > 18)
            lx_fail_at(p, t.pos, "hex value '%.*s' longer than 64 bits", (int)t.len, s);
        for (size_t i = 2; i < t.len; i++) {
            if (hex_digit((unsigned char)s[i]) < 0)
                lx_fail_at(p, t.pos, "bad hex value '%.*s'", (int)t.len, s);
            b = b << 4 | (uint64_t)hex_digit((unsigned char)s[i]);
        }
        return from_bits(type, b);
    }
    size_t i = s[0] == '-', digits = 0;
    while (i < t.len && isdigit((unsigned char)s[i]))
        i++, digits++;
    bool frac = i < t.len && (s[i] == '.' || s[i] == 'e' || s[i] == 'E');
    if (i < t.len && s[i] == '.')
        for (i++; i < t.len && isdigit((unsigned char)s[i]); i++)
            ;
    if (digits && i < t.len && (s[i] == 'e' || s[i] == 'E')) {
        size_t j = i + 1 + (i + 1 < t.len && (s[i + 1] == '+' || s[i + 1] == '-'));
        if (j < t.len && isdigit((unsigned char)s[j]))
            for (i = j; i < t.len && isdigit((unsigned char)s[i]); i++)
                ;
    }
    if (!digits || i != t.len || (frac && !is_float(type)))
        lx_fail_at(p, t.pos, "bad %s '%.*s' in dense literal",
                   is_float(type) ? "number" : "integer", (int)t.len, s);
    char buf[64];
    if (t.len >= sizeof buf)
        lx_fail_at(p, t.pos, "number '%.24s...' too long", s);
    memcpy(buf, s, t.len);
    buf[t.len] = 0;
    return strtod(buf, NULL);
}

typedef struct {
    double *v;
    int n, cap;
} values;

static void push(parser *p, values *vals, double v)
{
    vals->v = lx_grow(p, vals->v, vals->n, &vals->cap, sizeof *vals->v);
    vals->v[vals->n++] = v;
}

static void level(parser *p, const hlo_shape *sh, int lv, values *vals)
{
    stok open = sx_expect_punct(p, '[', "in dense literal");
    int64_t count = 0;
    if (!sx_punct(sx_peek(p), ']')) {
        do {
            if (lv + 1 < sh->rank)
                level(p, sh, lv + 1, vals);
            else
                push(p, vals, scalar(p, sh->type));
            count++;
        } while (sx_eat_punct(p, ','));
    }
    sx_expect_punct(p, ']', "in dense literal");
    if (count != sh->dims[lv])
        lx_fail_at(p, open.at, "dense literal has %lld entries in dimension %d, type has %lld",
                   (long long)count, lv, (long long)sh->dims[lv]);
}

/* dense<"0x...">: the elements' little-endian bytes, or one element's for a splat. */
static void blob(parser *p, stok t, const hlo_shape *sh, values *vals, bool *splat)
{
    const char *s = p->s + t.pos + 1;
    size_t n = t.len - 2, size = elem_bytes(sh->type);
    if (n < 2 || s[0] != '0' || s[1] != 'x' || n % 2)
        lx_fail_at(p, t.pos, "expected a hex string \"0x...\" in dense literal");
    size_t bytes = (n - 2) / 2;
    if (bytes != size && bytes != size * (size_t)sh->elements)
        lx_fail_at(p, t.pos, "dense hex literal has %zu bytes, type needs %zu", bytes,
                   size * (size_t)sh->elements);
    *splat = bytes == size && sh->elements != 1;
    for (size_t e = 0; e < bytes / size; e++) {
        uint64_t b = 0;
        for (size_t k = size; k-- > 0;) {
            const char *h = s + 2 + 2 * (e * size + k);
            int hi = hex_digit((unsigned char)h[0]), lo = hex_digit((unsigned char)h[1]);
            if (hi < 0 || lo < 0)
                lx_fail_at(p, t.pos, "bad hex digit in dense literal");
            b = b << 8 | (uint64_t)(hi * 16 + lo);
        }
        push(p, vals, from_bits(sh->type, b));
    }
}

size_t sx_dense(parser *p, const hlo_shape *sh, double **out, bool *splat)
{
    stok d = sx_next(p);
    if (!sx_is(p, d, "dense"))
        sx_expected(p, d, "a dense<...> literal");
    if (sh->type == HLO_TUPLE || sh->type == HLO_TOKEN)
        lx_fail_at(p, d.at, "dense literal of a %s type", hlo_type_name(sh->type));
    sx_expect_punct(p, '<', "after 'dense'");
    values vals = {NULL, 0, 0};
    stok t = sx_peek(p);
    *splat = false;
    if (t.kind == S_STRING) {
        sx_next(p);
        blob(p, t, sh, &vals, splat);
    } else if (sx_punct(t, '[') && sh->rank > 0) {
        level(p, sh, 0, &vals);
    } else if (sx_punct(t, '[')) {
        lx_fail_at(p, t.at, "dense list for a scalar type");
    } else {
        push(p, &vals, scalar(p, sh->type));
        *splat = sh->elements != 1;
    }
    sx_expect_punct(p, '>', "to close the dense literal");
    *out = vals.v;
    return (size_t)vals.n;
}
