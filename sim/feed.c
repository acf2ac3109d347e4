/* feed.c - recording feeds (tpusim.h "Feeds"; replayed by the device, device.h). */
#include <stdlib.h>
#include <string.h>

#include "sim/feed.h"

tpusim_feed *tpusim_feed_new(void)
{
    tpusim_feed *f = calloc(1, sizeof *f);
    if (f)
        f->owned = 1;
    return f;
}

void tpusim_feed_free(tpusim_feed *f)
{
    if (!f)
        return;
    if (f->owned) {
        free((void *)f->insns);
        free(f->wait);
    }
    free(f);
}

void tpusim_feed_rewind(tpusim_feed *f)
{
    f->next = 0;
    f->waited = 0;
    f->edges = 0;
}

void tpusim_feed_clear(tpusim_feed *f)
{
    f->n = 0;
    f->wait_next = 0;
    tpusim_feed_rewind(f);
}

void tpusim_feed_view(tpusim_feed *f, const tpusim_insn *prog, size_t n)
{
    memset(f, 0, sizeof *f);
    f->insns = prog;
    f->n = n;
}

int tpusim_feed_wait(tpusim_feed *f, uint64_t cycles)
{
    if (cycles > UINT64_MAX - f->wait_next)
        return -1;
    f->wait_next += cycles;
    return 0;
}

int tpusim_feed_push(tpusim_feed *f, const tpusim_insn *insn)
{
    if (!f->owned)
        return -1;
    if (f->n == f->cap) {
        const size_t cap = f->cap ? 2 * f->cap : 1024;
        tpusim_insn *insns = realloc((void *)f->insns, cap * sizeof *insns);
        if (!insns)
            return -1;
        f->insns = insns;
        uint64_t *wait = realloc(f->wait, cap * sizeof *wait);
        if (!wait)
            return -1;
        f->wait = wait;
        f->cap = cap;
    }
    memcpy((tpusim_insn *)&f->insns[f->n], insn, sizeof *insn);
    f->wait[f->n++] = f->wait_next;
    f->wait_next = 0;
    return 0;
}

size_t tpusim_feed_size(const tpusim_feed *f) { return f->n; }
const tpusim_insn *tpusim_feed_insns(const tpusim_feed *f) { return f->insns; }
size_t tpusim_feed_taken(const tpusim_feed *f) { return f->next; }
uint64_t tpusim_feed_edges(const tpusim_feed *f) { return f->edges; }
