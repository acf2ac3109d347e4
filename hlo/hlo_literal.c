/* hlo_literal.c - constant literals for the HLO parser (hlo_lex.h): scalars and nested brace
 * levels of an array, every number kept as a double and, for pred and integer types, exactly as
 * an int64 (hlo_instr.literal_int), `{...}` for an elided value. */
#include "hlo/hlo_lex.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    double *v;
    int64_t *i; /* integer and pred types (hlo_instr.literal_int) */
    int n, cap, cap_i;
} values;

/* A number without '.' or exponent as an integer modulo 2^64, or 0 when its magnitude is 2^64 or
 * more (then it differs from the double, which the evaluator checks). */
static int64_t integer_token(const char *s, size_t len)
{
    uint64_t m = 0;
    for (size_t i = s[0] == '-'; i < len; i++) {
        const uint64_t d = (uint64_t)(s[i] - '0');
        if (m > (UINT64_MAX - d) / 10)
            return 0;
        m = m * 10 + d;
    }
    return (int64_t)(s[0] == '-' ? -m : m);
}

/* A decimal number token: [-]digits[.digits][e[+-]digits], or [-].digits... (strtod alone would
 * take hex too); what names the context in messages. */
static double decimal(parser *p, tok t, const char *what)
{
    const char *s = p->s + t.pos;
    size_t i = s[0] == '-', digits = 0;
    while (i < t.len && isdigit((unsigned char)s[i]))
        i++, digits++;
    if (i < t.len && s[i] == '.')
        for (i++; i < t.len && isdigit((unsigned char)s[i]); i++)
            digits++;
    if (digits && i < t.len && (s[i] == 'e' || s[i] == 'E')) {
        size_t j = i + 1 + (i + 1 < t.len && (s[i + 1] == '+' || s[i + 1] == '-'));
        if (j < t.len && isdigit((unsigned char)s[j]))
            for (i = j; i < t.len && isdigit((unsigned char)s[i]); i++)
                ;
    }
    if (t.kind != T_NUM || !digits || i != t.len)
        lx_fail_at(p, t.pos, "bad number '%.*s' in %s", (int)t.len, s, what);
    char buf[128];
    if (t.len >= sizeof buf)
        lx_fail_at(p, t.pos, "number '%.24s...' too long in %s", s, what);
    memcpy(buf, s, t.len);
    buf[t.len] = 0;
    return strtod(buf, NULL);
}

double lx_parse_double(parser *p, const char *what) { return decimal(p, lx_next(p), what); }

static void literal_value(parser *p, values *vals, hlo_type type)
{
    tok t = lx_next(p);
    const char *s = p->s + t.pos;
    double v;
    int64_t iv = 0;
    if (lx_tok_is(p, t, "true")) {
        v = 1;
    } else if (lx_tok_is(p, t, "false")) {
        v = 0;
    } else if (lx_tok_is(p, t, "inf") || (t.kind == T_NUM && t.len == 4 && !memcmp(s, "-inf", 4))) {
        v = s[0] == '-' ? -INFINITY : INFINITY;
    } else if (lx_tok_is(p, t, "nan") || (t.kind == T_NUM && t.len == 4 && !memcmp(s, "-nan", 4))) {
        v = NAN;
    } else if (t.kind == T_NUM) {
        v = decimal(p, t, "constant");
        const bool integral =
            !memchr(s, '.', t.len) && !memchr(s, 'e', t.len) && !memchr(s, 'E', t.len);
        iv = integral ? integer_token(s, t.len) : fabs(v) < 0x1p63 ? (int64_t)v : 0;
    } else {
        lx_expected(p, t, "a number in constant");
    }
    if (type == HLO_PRED)
        iv = v != 0;
    if (type == HLO_PRED || (type >= HLO_S8 && type <= HLO_U64)) {
        vals->i = lx_grow(p, vals->i, vals->n, &vals->cap_i, sizeof *vals->i);
        vals->i[vals->n] = iv;
    }
    vals->v = lx_grow(p, vals->v, vals->n, &vals->cap, sizeof *vals->v);
    vals->v[vals->n++] = v;
}

/* One brace level of an array literal: dims[level] entries, each a value or a sub-level. */
static void literal_level(parser *p, const hlo_shape *sh, int level, values *vals)
{
    tok open = lx_expect_punct(p, '{', "in array constant");
    int64_t count = 0;
    if (!lx_is_punct(lx_peek(p), '}')) {
        do {
            if (level + 1 < sh->rank)
                literal_level(p, sh, level + 1, vals);
            else
                literal_value(p, vals, sh->type);
            count++;
        } while (lx_eat_punct(p, ','));
    }
    lx_expect_punct(p, '}', "in array constant");
    /* An empty top level `{}` stands for any shape with no elements. */
    if (count != sh->dims[level] && !(count == 0 && level == 0 && sh->elements == 0))
        lx_fail_at(p, open.pos, "constant has %lld entries in dimension %d, shape has %lld",
                   (long long)count, level, (long long)sh->dims[level]);
}

void lx_parse_literal(parser *p, hlo_instr *in)
{
    tok t = lx_peek(p);
    if (in->shape.type == HLO_TUPLE || in->shape.type == HLO_TOKEN) {
        lx_skip_value(p, "constant");
        in->literal_elided = true;
        return;
    }
    if (lx_is_punct(t, '{')) {
        size_t end;
        tok inner = lx_lex_at(p, t.pos + 1, &end);
        if (inner.kind == T_ELLIPSIS) {
            lx_next(p);
            lx_next(p);
            lx_expect_punct(p, '}', "after '...' in elided constant");
            in->literal_elided = true;
            return;
        }
        if (in->shape.rank == 0)
            lx_fail_at(p, t.pos, "expected a scalar constant for shape %s[]",
                       hlo_type_name(in->shape.type));
    } else if (in->shape.rank > 0) {
        lx_expected(p, t, "'{' for an array constant");
    }
    values vals = {NULL, NULL, 0, 0, 0};
    if (in->shape.rank == 0)
        literal_value(p, &vals, in->shape.type);
    else
        literal_level(p, &in->shape, 0, &vals);
    in->literal = vals.v;
    in->literal_int = vals.i;
    in->n_literal = (size_t)vals.n;
}
