/* hlo_lex.h - the HLO parser's state, arena and lexer, shared by hlo_lex.c and hlo_parse.c
 * and the attribute values of hlo_attrs.c (internal to hlo/; the public AST is hlo.h).
 * Errors longjmp to parser.fail. */
#ifndef TPU_HLO_HLO_LEX_H
#define TPU_HLO_HLO_LEX_H

#include <setjmp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hlo/hlo.h"

struct hlo_arena {
    struct hlo_arena *next;
    size_t size, used;
    _Alignas(16) unsigned char data[];
};

#define ARENA_CHUNK ((size_t)64 << 10)

typedef enum { T_EOF, T_NAME, T_NUM, T_STRING, T_ARROW, T_ELLIPSIS, T_LE, T_PUNCT } tok_kind;

typedef struct {
    tok_kind kind;
    size_t at;       /* where the token starts, for messages */
    size_t pos, len; /* its text; a T_NAME's excludes the leading '%' */
    char ch;         /* T_PUNCT */
} tok;

/* An operand or computation name to resolve once its scope is complete. */
typedef struct {
    int comp, instr;
    int slot; /* operand index, or REF_TO_APPLY, REF_CALLS, REF_CONDITION, REF_BODY,
                 REF_SELECT, or REF_BRANCH - k for branch k */
    size_t at, pos, len;
} ref;

enum {
    REF_TO_APPLY = -1,
    REF_CALLS = -2,
    REF_CONDITION = -3,
    REF_BODY = -4,
    REF_SELECT = -5,
    REF_BRANCH = -6
};

typedef struct {
    const char *s;
    size_t len;
    const char *file;
    struct hlo_arena *arena;
    hlo_error *err;
    jmp_buf fail;
    size_t lc_pos; /* line/column cache: positions are mostly requested in increasing order */
    int lc_line, lc_col;
    size_t pos; /* next unread byte */
    ref *refs;
    int n_refs, cap_refs;
} parser;

/* Names to indices for both parsers: open addressing over the indices of the caller's names
 * (slots hold index + 1, 0 is empty; a power of two of them), compared through same(ctx, index,
 * s, n). */
typedef struct {
    int *slots;
    size_t mask;
} lx_table;
typedef bool (*lx_same_fn)(const void *ctx, int index, const char *s, size_t n);
/* Room for n names at half load at most (from the arena). */
void lx_table_init(parser *p, lx_table *t, size_t n);
/* The slot of name s[0..n): its index is t->slots[slot] - 1, or the slot is the empty one where
 * the name would go. */
size_t lx_table_slot(const lx_table *t, const char *s, size_t n, lx_same_fn same, const void *ctx);

void lx_arena_free(struct hlo_arena *a);
void lx_locate(parser *p, size_t pos, int *line, int *col);
/* Records "file:line:col: message" and longjmps out of the parse. */
void lx_fail_at(parser *p, size_t pos, const char *fmt, ...)
    __attribute__((format(printf, 3, 4), noreturn));
void *lx_alloc(parser *p, size_t n); /* zeroed, from the arena */
/* Makes room for one more element in an arena array of *cap elements of size sz. */
void *lx_grow(parser *p, void *v, int n, int *cap, size_t sz);
char *lx_dup_str(parser *p, size_t pos, size_t len);
/* The contents of a T_STRING token with the C escapes XLA's printer writes (\" \\ \n \ooo \xhh
 * ...) decoded, NUL-terminated, from the arena; what names the string in messages. */
char *lx_unescape(parser *p, tok t, const char *what);

size_t lx_skip_space(parser *p, size_t pos);
tok lx_lex_at(parser *p, size_t pos, size_t *end);
tok lx_peek(parser *p);
tok lx_next(parser *p);
bool lx_is_punct(tok t, char ch);
bool lx_tok_is(const parser *p, tok t, const char *word);
/* "expected <what>, found '<the text from at to end>'" (at most 24 bytes of it) or "found end of
 * input", at at: for the tokens of both lexers. */
void lx_fail_expected(parser *p, size_t at, size_t end, const char *what) __attribute__((noreturn));
void lx_expected(parser *p, tok t, const char *what) __attribute__((noreturn));
tok lx_expect_punct(parser *p, char ch, const char *ctx);
bool lx_eat_punct(parser *p, char ch);
tok lx_expect_name(parser *p, const char *what);
int64_t lx_parse_int(parser *p, const char *what, int64_t lo, int64_t hi);
/* The decimal integer of a number token at at whose text is s[pos, pos + len), range-checked
 * against [lo, hi]: for the tokens of both lexers. */
int64_t lx_int_token(parser *p, size_t at, size_t pos, size_t len, const char *what, int64_t lo,
                     int64_t hi);
double lx_parse_double(parser *p, const char *what); /* a decimal number (hlo_literal.c) */
/* Skips one attribute value by balanced scanning of (), {}, [] and strings. */
void lx_skip_value(parser *p, const char *what);
/* A constant's literal into in (hlo_literal.c): in->shape must be parsed already. */
void lx_parse_literal(parser *p, hlo_instr *in);

/* hlo_attrs.c */
/* Records name as the reference to resolve for instruction instr of computation comp. */
void lx_add_ref(parser *p, int comp, int instr, int slot, tok name);
void lx_ints_push(parser *p, hlo_ints *l, int *cap, int64_t v); /* appends v to arena list l */
void lx_parse_slice(parser *p, hlo_instr *in);
void lx_parse_padding(parser *p, hlo_instr *in);
void lx_parse_window(parser *p, hlo_instr *in);
void lx_parse_dim_labels(parser *p, hlo_instr *in);
/* The list of a gather's or scatter's dimension numbers that the attribute `name` fills, or
 * NULL for another attribute. */
hlo_ints *lx_gather_list(parser *p, tok name, hlo_instr *in);
/* true_computation=t / false_computation=f (branches 0 and 1 of a pred conditional) or
 * branch_computations={b0, ...}, not both; returns whether the attribute was already given. */
bool lx_parse_branches(parser *p, hlo_instr *in, tok name, int comp, int instr);
/* An all-reduce's replica_groups: {{0,1},{2,3}}, {} (none), or XLA's iota form [G,S]<=[N]
 * (G groups of S consecutive ids; a transposed iota is refused). */
void lx_parse_replica_groups(parser *p, hlo_instr *in);

#endif
