/* hlo_lex.c - the HLO parser's arena, error reporting and lexer (see hlo_lex.h). */
#include "hlo/hlo_lex.h"
#include "io/tpuio.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- arena -- */

void lx_arena_free(struct hlo_arena *a)
{
    while (a) {
        struct hlo_arena *next = a->next;
        free(a);
        a = next;
    }
}

/* --------------------------------------------------------- name table -- */

void lx_table_init(parser *p, lx_table *t, size_t n)
{
    size_t size = 16;
    while (size < n * 2)
        size *= 2;
    t->slots = lx_alloc(p, size * sizeof *t->slots);
    t->mask = size - 1;
}

size_t lx_table_slot(const lx_table *t, const char *s, size_t n, lx_same_fn same, const void *ctx)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
    size_t i = h & t->mask;
    while (t->slots[i] && !same(ctx, t->slots[i] - 1, s, n))
        i = (i + 1) & t->mask;
    return i;
}

/* ------------------------------------------------------------- parser -- */

void lx_locate(parser *p, size_t pos, int *line, int *col)
{
    if (pos < p->lc_pos) { /* back from the cache: the lines in between and pos's column */
        for (size_t i = pos; i < p->lc_pos; i++)
            p->lc_line -= p->s[i] == '\n';
        size_t start = pos;
        while (start > 0 && p->s[start - 1] != '\n')
            start--;
        p->lc_pos = pos;
        p->lc_col = (int)(pos - start) + 1;
    }
    for (; p->lc_pos < pos && p->lc_pos < p->len; p->lc_pos++) {
        if (p->s[p->lc_pos] == '\n') {
            p->lc_line++;
            p->lc_col = 1;
        } else {
            p->lc_col++;
        }
    }
    *line = p->lc_line;
    *col = p->lc_col;
}

void hlo_vfail(hlo_error *err, const char *file, int line, int col, const char *op, const char *fmt,
               va_list ap)
{
    if (!err)
        return;
    char what[400];
    vsnprintf(what, sizeof what, fmt, ap);
    err->line = line < 0 ? 0 : line;
    err->col = line < 0 ? 0 : col;
    if (line < 0)
        tpuio_err(err->msg, sizeof err->msg, "%s: %s", file, what);
    else
        tpuio_err(err->msg, sizeof err->msg, "%s:%d:%d: %s%s%s", file, line, col, op ? op : "",
                  op ? ": " : "", what);
}

int hlo_errorf(hlo_error *err, const char *fmt, ...)
{
    if (!err)
        return -1;
    va_list ap;
    va_start(ap, fmt);
    tpuio_verr(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    err->line = err->col = 0;
    return -1;
}

void hlo_vfail_at(hlo_error *err, const char *file, const hlo_instr *at, const char *fmt,
                  va_list ap)
{
    hlo_vfail(err, file, at ? at->line : -1, at ? at->col : 0, at ? at->opcode_name : NULL, fmt,
              ap);
}

int hlo_fail(hlo_error *err, const char *file, const hlo_instr *at, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    hlo_vfail_at(err, file, at, fmt, ap);
    va_end(ap);
    return -1;
}

void lx_fail_at(parser *p, size_t pos, const char *fmt, ...)
{
    int line, col;
    lx_locate(p, pos, &line, &col);
    va_list ap;
    va_start(ap, fmt);
    hlo_vfail(p->err, p->file, line, col, NULL, fmt, ap);
    va_end(ap);
    longjmp(p->fail, 1);
}

void *lx_alloc(parser *p, size_t n)
{
    n = (n + 15) & ~(size_t)15;
    struct hlo_arena *a = p->arena;
    if (!a || a->size - a->used < n) {
        size_t size = n > ARENA_CHUNK ? n : ARENA_CHUNK;
        a = malloc(sizeof *a + size);
        if (!a)
            lx_fail_at(p, p->pos, "out of memory");
        a->next = p->arena;
        a->size = size;
        a->used = 0;
        p->arena = a;
    }
    void *r = a->data + a->used;
    a->used += n;
    memset(r, 0, n);
    return r;
}

/* Makes room for one more element in an arena array of *cap elements of size sz. */
void *lx_grow(parser *p, void *v, int n, int *cap, size_t sz)
{
    if (n < *cap)
        return v;
    if (*cap > (1 << 28))
        lx_fail_at(p, p->pos, "too many elements");
    int ncap = *cap ? *cap * 2 : 8;
    void *nv = lx_alloc(p, (size_t)ncap * sz);
    if (n)
        memcpy(nv, v, (size_t)n * sz);
    *cap = ncap;
    return nv;
}

char *lx_dup_str(parser *p, size_t pos, size_t len)
{
    char *r = lx_alloc(p, len + 1);
    memcpy(r, p->s + pos, len);
    return r;
}

/* ------------------------------------------------------------- lexer -- */

static int peekc(const parser *p, size_t at) { return at < p->len ? (unsigned char)p->s[at] : -1; }

static bool is_name_start(int c) { return c >= 0 && (isalpha(c) || c == '_'); }
static bool is_name_char(int c)
{
    return c >= 0 && (isalnum(c) || c == '_' || c == '.' || c == '-');
}

/* Skips whitespace and comments from pos; returns the next significant position. */
size_t lx_skip_space(parser *p, size_t pos)
{
    for (;;) {
        int c = peekc(p, pos);
        if (c >= 0 && isspace(c)) {
            pos++;
        } else if (c == '/' && peekc(p, pos + 1) == '/') {
            while (pos < p->len && p->s[pos] != '\n')
                pos++;
        } else if (c == '/' && peekc(p, pos + 1) == '*') {
            size_t start = pos;
            pos += 2;
            while (pos < p->len && !(p->s[pos] == '*' && peekc(p, pos + 1) == '/'))
                pos++;
            if (pos >= p->len)
                lx_fail_at(p, start, "unterminated comment");
            pos += 2;
        } else {
            return pos;
        }
    }
}

static size_t skip_string(parser *p, size_t pos)
{
    size_t start = pos++;
    while (pos < p->len && p->s[pos] != '"')
        pos += p->s[pos] == '\\' ? 2 : 1;
    if (pos >= p->len)
        lx_fail_at(p, start, "unterminated string");
    return pos + 1;
}

static int hex_digit(int c)
{
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
}

/* absl::CUnescape's escapes: XLA's printer writes strings with CEscape. */
char *lx_unescape(parser *p, tok t, const char *what)
{
    static const char simple[] = "n\nt\tr\r\"\"''\\\\??a\ab\bf\fv\v";
    char *r = lx_alloc(p, t.len), *w = r; /* the decoded text is shorter than the quotes */
    size_t i = t.pos + 1, end = t.pos + t.len - 1;
    while (i < end) {
        size_t at = i;
        int c = (unsigned char)p->s[i++];
        if (c == '\\') {
            int e = (unsigned char)p->s[i++];
            const char *s = strchr(simple, e);
            if (e && s && (s - simple) % 2 == 0) {
                c = (unsigned char)s[1];
            } else if (e >= '0' && e <= '7') { /* up to three octal digits */
                c = e - '0';
                for (int k = 0; k < 2 && i < end && p->s[i] >= '0' && p->s[i] <= '7'; k++)
                    c = c * 8 + (p->s[i++] - '0');
                if (c > 0xff)
                    lx_fail_at(p, at, "octal escape out of range in %s", what);
            } else if (e == 'x' && i < end && hex_digit((unsigned char)p->s[i]) >= 0) {
                c = hex_digit((unsigned char)p->s[i++]);
                if (i < end && hex_digit((unsigned char)p->s[i]) >= 0)
                    c = c * 16 + hex_digit((unsigned char)p->s[i++]);
            } else {
                lx_fail_at(p, at, "unknown escape '\\%c' in %s", e, what);
            }
        }
        if (c == 0)
            lx_fail_at(p, at, "NUL character in %s", what);
        *w++ = (char)c;
    }
    return r;
}

/* Lexes the token at or after pos without consuming it; *end gets the position after it. */
tok lx_lex_at(parser *p, size_t pos, size_t *end)
{
    tok t = {T_EOF, 0, 0, 0, 0};
    pos = lx_skip_space(p, pos);
    t.at = t.pos = pos;
    int c = peekc(p, pos);
    size_t e = pos;
    if (c < 0) {
        t.kind = T_EOF;
    } else if (c == '%' || is_name_start(c)) {
        if (c == '%') {
            if (!is_name_start(peekc(p, pos + 1)))
                lx_fail_at(p, pos, "expected a name after '%%'");
            t.pos = ++e;
        }
        while (is_name_char(peekc(p, e)))
            e++;
        t.kind = T_NAME;
        t.len = e - t.pos;
        if (t.len > HLO_MAX_NAME)
            lx_fail_at(p, pos, "name longer than %d bytes", HLO_MAX_NAME);
        *end = e;
        return t;
    } else if (c == '.' && peekc(p, pos + 1) == '.' && peekc(p, pos + 2) == '.') {
        e += 3;
        t.kind = T_ELLIPSIS;
    } else if (isdigit(c) || ((c == '-' || c == '.') &&
                              (isalnum(peekc(p, pos + 1)) || peekc(p, pos + 1) == '.'))) {
        /* Numbers and number-like atoms (1e-05, -inf, 0_-1x1_1); validated by their users. */
        e++;
        for (;;) {
            int d = peekc(p, e), prev = (unsigned char)p->s[e - 1];
            if (d >= 0 && (isalnum(d) || d == '_' || d == '.'))
                e++;
            else if (d == '+' && (prev == 'e' || prev == 'E'))
                e++;
            else if (d == '-' && (prev == 'e' || prev == 'E' || prev == '_' || prev == 'x'))
                e++;
            else
                break;
        }
        t.kind = T_NUM;
    } else if (c == '"') {
        e = skip_string(p, pos);
        t.kind = T_STRING;
    } else if (c == '-' && peekc(p, pos + 1) == '>') {
        e += 2;
        t.kind = T_ARROW;
    } else if (c == '<' && peekc(p, pos + 1) == '=') {
        e += 2;
        t.kind = T_LE;
    } else {
        e++;
        t.kind = T_PUNCT;
        t.ch = (char)c;
    }
    t.len = e - t.pos;
    *end = e;
    return t;
}

tok lx_peek(parser *p)
{
    size_t end;
    return lx_lex_at(p, p->pos, &end);
}

tok lx_next(parser *p)
{
    size_t end;
    tok t = lx_lex_at(p, p->pos, &end);
    p->pos = end;
    return t;
}

bool lx_is_punct(tok t, char ch) { return t.kind == T_PUNCT && t.ch == ch; }

bool lx_tok_is(const parser *p, tok t, const char *word)
{
    return t.kind == T_NAME && strlen(word) == t.len && memcmp(p->s + t.pos, word, t.len) == 0;
}

void lx_fail_expected(parser *p, size_t at, size_t end, const char *what)
{
    if (at >= p->len)
        lx_fail_at(p, at, "expected %s, found end of input", what);
    size_t full = end - at, len = full > 24 ? 24 : full;
    lx_fail_at(p, at, "expected %s, found '%.*s%s'", what, (int)len, p->s + at,
               full > len ? "..." : "");
}

void lx_expected(parser *p, tok t, const char *what)
{
    lx_fail_expected(p, t.at, t.pos + t.len, what);
}

tok lx_expect_punct(parser *p, char ch, const char *ctx)
{
    tok t = lx_next(p);
    if (!lx_is_punct(t, ch)) {
        char what[80];
        snprintf(what, sizeof what, "'%c' %s", ch, ctx);
        lx_expected(p, t, what);
    }
    return t;
}

bool lx_eat_punct(parser *p, char ch)
{
    if (!lx_is_punct(lx_peek(p), ch))
        return false;
    lx_next(p);
    return true;
}

tok lx_expect_name(parser *p, const char *what)
{
    tok t = lx_next(p);
    if (t.kind != T_NAME)
        lx_expected(p, t, what);
    return t;
}

/* A decimal integer token, range-checked against [lo, hi]. */
int64_t lx_parse_int(parser *p, const char *what, int64_t lo, int64_t hi)
{
    tok t = lx_next(p);
    if (t.kind != T_NUM)
        lx_expected(p, t, what);
    return lx_int_token(p, t.at, t.pos, t.len, what, lo, hi);
}

int64_t lx_int_token(parser *p, size_t at, size_t pos, size_t len, const char *what, int64_t lo,
                     int64_t hi)
{
    const char *s = p->s + pos;
    size_t i = s[0] == '-';
    if (i == len)
        lx_fail_expected(p, at, pos + len, what);
    int64_t v = 0;
    for (; i < len; i++) {
        if (!isdigit((unsigned char)s[i]))
            lx_fail_at(p, pos, "bad integer '%.*s' for %s", (int)len, s, what);
        int d = s[i] - '0';
        if (v > (INT64_MAX - d) / 10)
            lx_fail_at(p, pos, "integer '%.*s' out of range for %s", (int)len, s, what);
        v = v * 10 + d;
    }
    if (s[0] == '-')
        v = -v;
    if (v < lo || v > hi)
        lx_fail_at(p, pos, "%s %lld out of range [%lld, %lld]", what, (long long)v, (long long)lo,
                   (long long)hi);
    return v;
}

/* Skips one balanced group ( { [ or one atom starting at the next token: used for attribute
 * values and layouts we do not interpret. Strings and comments inside may hold any bracket. */
void lx_skip_value(parser *p, const char *what)
{
    char stack[HLO_MAX_DEPTH]; /* the opening brackets */
    size_t opened[HLO_MAX_DEPTH];
    int depth = 0;
    size_t pos = lx_skip_space(p, p->pos), start = pos;
    for (;;) {
        int c = peekc(p, pos);
        if (depth == 0 && (c < 0 || isspace(c) || c == ',' || c == ')' || c == '}' || c == ']' ||
                           (c == '/' && (peekc(p, pos + 1) == '/' || peekc(p, pos + 1) == '*'))))
            break;
        if (c < 0) {
            int line, col;
            lx_locate(p, opened[depth - 1], &line, &col);
            lx_fail_at(p, pos, "unterminated '%c' (opened at %d:%d) in %s", stack[depth - 1], line,
                       col, what);
        }
        if (c == '"') {
            pos = skip_string(p, pos);
        } else if (c == '/' && (peekc(p, pos + 1) == '/' || peekc(p, pos + 1) == '*')) {
            pos = lx_skip_space(p, pos);
        } else if (c == '(' || c == '{' || c == '[') {
            if (depth == HLO_MAX_DEPTH)
                lx_fail_at(p, pos, "%s nested deeper than %d", what, HLO_MAX_DEPTH);
            stack[depth] = (char)c;
            opened[depth++] = pos++;
        } else if (c == ')' || c == '}' || c == ']') {
            char close = stack[depth - 1] == '(' ? ')' : stack[depth - 1] == '{' ? '}' : ']';
            if (c != close)
                lx_fail_at(p, pos, "expected '%c' in %s, found '%c'", close, what, c);
            depth--;
            pos++;
        } else {
            pos++;
        }
    }
    if (pos == start)
        lx_expected(p, lx_peek(p), what);
    p->pos = pos;
}
