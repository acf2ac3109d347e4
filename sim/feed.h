/* feed.h - a feed's record and replay state (tpusim.h "Feeds"); internal to libtpusim: feed.c
 * records, the device (device.h) replays. */
#ifndef TPU_SIM_FEED_H
#define TPU_SIM_FEED_H

#include "sim/tpusim.h"

#ifdef __cplusplus
extern "C" {
#endif

struct tpusim_feed {
    /* The record: push i waits wait[i] edges (wait NULL: none), then offers insns[i]. A view
     * (tpusim_run_programs) points at the caller's instructions and owns nothing. */
    const tpusim_insn *insns;
    uint64_t *wait;
    size_t n, cap;
    uint64_t wait_next; /* waits recorded since the last push: the next push's */
    int owned;          /* insns and wait are ours (cap entries each) */
    /* The replay. */
    size_t next;     /* the push being waited for or offered */
    uint64_t waited; /* edges of wait[next] spent */
    uint64_t edges;  /* edges spent waiting and offering */
};

/* A view of prog[0, n) with no waits. */
void tpusim_feed_view(tpusim_feed *f, const tpusim_insn *prog, size_t n);
/* Rewinds the replay. */
void tpusim_feed_rewind(tpusim_feed *f);

/* The replay, one edge: whether the feed offers its next instruction this edge (it then takes
 * the edge as an offer), or spends it waiting (or has nothing left). */
static inline const tpusim_insn *tpusim_feed_offer(tpusim_feed *f)
{
    if (f->next == f->n)
        return NULL;
    f->edges++;
    if (f->wait && f->waited < f->wait[f->next]) {
        f->waited++;
        return NULL;
    }
    return &f->insns[f->next];
}
static inline void tpusim_feed_take(tpusim_feed *f)
{
    f->next++;
    f->waited = 0;
}
static inline int tpusim_feed_done(const tpusim_feed *f) { return f->next == f->n; }

#ifdef __cplusplus
}
#endif
#endif
