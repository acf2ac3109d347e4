/* shlo.h - the StableHLO (MLIR text) reader behind hlo_parse(): lexer (shlo_lex.c), the module
 * (shlo_module.c), functions, values and ops (shlo_parse.c), regions (shlo_region.c) and the
 * mapping of ops and attributes onto hlo_instr (shlo_ops.c, shlo_ops_shape.c). Internal to hlo/;
 * it shares the HLO parser's state, arena and error reporting (hlo_lex.h). */
#ifndef TPU_HLO_SHLO_H
#define TPU_HLO_SHLO_H

#include "hlo/hlo_lex.h"

/* MLIR tokens. S_VALUE (%name, %name#3), S_SYM (@name), S_HASH (#name) and S_CARET (^name) keep
 * their sigil out of pos/len; S_WORD is a bare identifier (dots allowed: stablehlo.add). */
typedef enum {
    S_EOF,
    S_VALUE,
    S_SYM,
    S_HASH,
    S_CARET,
    S_BANG,
    S_WORD,
    S_NUM,
    S_STRING,
    S_ARROW,
    S_PUNCT
} stok_kind;

typedef struct {
    stok_kind kind;
    size_t at, pos, len;
    char ch; /* S_PUNCT */
} stok;

#define SHLO_MAX_OPERANDS 4096 /* operands, results and types of one op */

stok sx_lex_at(parser *p, size_t pos, size_t *end);
stok sx_peek(parser *p);
stok sx_next(parser *p);
bool sx_punct(stok t, char ch);
bool sx_is(const parser *p, stok t, const char *word);
void sx_expected(parser *p, stok t, const char *what) __attribute__((noreturn));
stok sx_expect_punct(parser *p, char ch, const char *ctx);
bool sx_eat_punct(parser *p, char ch);
stok sx_expect(parser *p, stok_kind kind, const char *what);
int64_t sx_int(parser *p, const char *what, int64_t lo, int64_t hi);
/* Skips one attribute value: tokens up to a ',' or an unmatched closer at bracket depth 0 (and a
 * ':' too when stop_colon), brackets (), [], {}, <> balanced. */
void sx_skip_value(parser *p, bool stop_colon, const char *what);
/* Skips one balanced group opened by open ('(', '[', '{' or '<'), which must come next. */
void sx_skip_group(parser *p, char open, const char *what);
/* An MLIR string literal's contents (escapes \\ \" \n \t \XX), NUL-terminated, from the arena. */
char *sx_string(parser *p, stok t);

/* A type: tensor<2x3xf32>, a bare element type (f32, i1, ...), !stablehlo.token, tuple<...>. */
void sx_type(parser *p, hlo_shape *sh, int depth);
/* dense<...> of a constant of shape sh (not a tuple): the values in row-major order, *splat set
 * when one value stands for all (then n is 1). Returns the number of values in *vals (arena). */
size_t sx_dense(parser *p, const hlo_shape *sh, double **vals, bool *splat);

/* A block argument before it becomes a parameter. */
typedef struct {
    stok name;
    hlo_shape shape;
    size_t loc_pos;       /* loc(...) contents, 0: none */
    int64_t alias_output; /* tf.aliasing_output (the result it updates), -1: none */
    size_t alias_at;      /* where that attribute is written */
} sarg;

/* One op as read, before mapping to HLO. Attributes are kept as the position of their value
 * (re-read on demand by shlo_ops.c); operands are instruction indices of the computation. */
typedef struct {
    size_t name_pos, name_len, value_pos;
} sattr;

typedef struct {
    size_t at;               /* the op name, for messages */
    char *name;              /* "stablehlo.add", without quotes */
    int n_operands, n_inits; /* operands of pretty reduce come before their inits */
    int *operands, *inits;
    int n_attrs;
    sattr *attrs;
    int n_words; /* bare words of the pretty form (GT, FLOAT, applies, ...) in order */
    stok *words;
    bool has_sym;
    stok sym;           /* @callee or @target */
    size_t bracket_pos; /* a pretty [..] group (slice, get_tuple_element index); 0: none */
    size_t dense_pos;   /* the pretty constant's dense<...>; 0: none */
    int n_regions;
    int *regions; /* computation indices */
    int n_results;
    hlo_shape *results;
    size_t apply_pos; /* `applies stablehlo.add`: the op word; 0: none */
} sop;

/* How a region's block arguments and the values it uses from enclosing regions become
 * parameters: PLAIN (reduce, sort, ...) one parameter per argument, no captures; STATE (while's
 * cond and body) the arguments packed as XLA's while state: the one array, or a tuple parameter
 * and a get-tuple-element per argument; CAPTURE (case and if) no arguments, each value used from
 * an enclosing region one captured operand: the one value, or a tuple of them. */
typedef enum { SHLO_PLAIN, SHLO_STATE, SHLO_CAPTURE } shlo_region;

/* A value name: one result group `%0`, `%0:2` or an argument, mapped to instructions. */
typedef struct {
    size_t pos, len;
    int first, count; /* count results at instructions first, first + 1, ... */
} sval;

/* A computation being built. */
typedef struct shlo_builder shlo_builder;
struct shlo_builder {
    int comp;
    shlo_region kind;
    hlo_instr *instrs;
    int n, cap;
    sval *vals;
    int n_vals, cap_vals;
    lx_table names; /* of vals; slots NULL before the first */
    shlo_builder *parent;
    /* CAPTURE: the instructions of parent used here, and the get-tuple-element of parameter 0
     * (instruction 0) that stands for each. */
    int n_caps, cap_caps, cap_locals;
    int *cap_parent, *cap_local;
};

/* The reader's state for one module. */
typedef struct {
    parser *p;
    hlo_module *m;
    int cap_comps;
    int depth;         /* regions open */
    shlo_builder *cur; /* computation being built */
    size_t instr_at;   /* where instructions added now are located */
    struct sfunc {
        size_t pos, len;
        int comp;
    } * funcs;
    int n_funcs, cap_funcs;
    struct scall {
        int comp, instr;
        stok sym;
    } * calls;
    int n_calls, cap_calls;
    struct scaps {
        int *v, n;
    } * caps; /* by computation: the captured operands of a CAPTURE region in its parent (n -1:
                 none) */
    int n_comp_caps, cap_comp_caps;
} shlo;

/* shlo_parse.c: values, computations and ops. */
void shlo_define_val(shlo *s, stok name, size_t len, int first, int count);
/* The instruction of a value use %name or %name#k; in a CAPTURE region a value of an enclosing
 * one is captured (shlo_capture). */
int shlo_use_val(shlo *s, stok t);
int shlo_begin_comp(shlo *s, shlo_builder *b, size_t at);
void shlo_end_comp(shlo *s, shlo_builder *b, size_t at);
/* A parameter per argument; argument k is parameter(number[k]) (NULL: k). */
void shlo_add_params(shlo *s, const sarg *args, int n, const int *number);
/* '(' arg, ... ')' into *args (arena); returns the count. */
int shlo_parse_args(shlo *s, sarg **args);
/* Ops up to the block's closing '}' (consumed). */
void shlo_parse_ops(shlo *s);
/* Skips `loc(...)` if it comes next; returns the position of its contents (0: none). */
size_t shlo_skip_loc(parser *p);
/* Appends an instruction to the current computation; returns its index. */
int shlo_add_instr(shlo *s, const char *opcode, const hlo_shape *shape, const int *operands,
                   int n_operands);
hlo_instr *shlo_instr(shlo *s, int idx);

/* shlo_region.c: '{' ['^bb0' '(' args ')' ':'] ops '}' as a new computation of the given kind;
 * returns its index. Arguments of pre (n_pre of them; numbers as shlo_add_params) replace the
 * block's (`reducer(...) {`, the pretty while's iteration arguments). */
int shlo_parse_region(shlo *s, shlo_region kind, const sarg *pre, int n_pre, const int *number);
/* `reducer(%a: T, %c: T) (%b: T, %d: T) { ... }` as a computation. */
int shlo_parse_reducer(shlo *s);
/* A computation of two scalar parameters of type t applying opcode (reduce's `applies`). */
int shlo_binary_comp(shlo *s, const char *opcode, const hlo_shape *scalar, size_t at);
/* The region kind of op name's regions (by its opcode: while, conditional, others). */
shlo_region shlo_region_of(parser *p, const char *name);
/* Is op name an if (a pred conditional: stablehlo.if) rather than a case? */
bool shlo_is_if(const char *name);
/* Instruction parent (of b's parent) used in CAPTURE region b: its stand-in in b. */
int shlo_capture(shlo *s, shlo_builder *b, int parent);
/* The pretty `stablehlo.while(%it = %x, ...) : T, ... cond { } do { }` after the op name. */
void shlo_parse_while(shlo *s, sop *op);
/* A while's operands as its state (a tuple of several); a case's and an if's branch operands
 * after the index (each branch's captured values); called with the op's regions read. */
void shlo_ctrl_operands(shlo *s, sop *op);

/* shlo_ops.c: the HLO opcode for a StableHLO op name ("stablehlo.dot_general" -> "dot"). */
const char *shlo_opcode(parser *p, const char *name);
/* Sets the attributes of instruction idx, just added for op with its opcode, shape and operands;
 * returns the instruction that holds op's value (idx, or one shlo_map added after it). */
int shlo_map(shlo *s, const sop *op, int idx);
/* Attribute a (or b) of op: the position of its value, 0 when absent. */
size_t shlo_find_attr(const parser *p, const sop *op, const char *a, const char *b);
/* An attribute's integers into list (values lo..HLO_MAX_ELEMENTS; lists, array<i64: ...>,
 * dense<...>, one integer, true / false); false when absent. */
bool shlo_get_ints(parser *p, const sop *op, const char *a, const char *b, hlo_ints *list,
                   int64_t lo);
bool shlo_get_int(parser *p, const sop *op, const char *a, const char *b, int64_t *v);
/* A list [1, 2] of dimensions (non-negative) at p->pos. */
void shlo_dim_list(parser *p, hlo_ints *l);
/* shlo_ops_shape.c: the attributes of gather, scatter, dynamic-slice, sort, reverse, map,
 * while and conditional. */
void shlo_map_shape_op(shlo *s, const sop *op, hlo_instr *in);
/* Records that instruction instr of the current computation calls the function sym (resolved by
 * shlo_parse_module). */
void shlo_add_call(shlo *s, int instr, stok sym);

/* shlo_module.c, hlo_parse.c's entry: does the text start like MLIR (module, func.func, #loc,
 * "builtin.module")? */
bool shlo_detect(parser *p);
void shlo_parse_module(parser *p, hlo_module *m);

#endif
