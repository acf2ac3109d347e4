/* tpuio.c - error text, file reading, little-endian bytes and staged outputs (tpuio.h). */
#define _POSIX_C_SOURCE 200809L /* fcntl flags, fsync, mkstemp, clock_gettime */
#include "io/tpuio.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

size_t tpuio_utf8_len(const char *str)
{
    const unsigned char *s = (const unsigned char *)str;
    unsigned char lo = 0x80, hi = 0xbf;
    size_t n;
    if (s[0] >= 0xc2 && s[0] <= 0xdf)
        n = 2;
    else if (s[0] >= 0xe0 && s[0] <= 0xef)
        n = 3, lo = s[0] == 0xe0 ? 0xa0 : 0x80, hi = s[0] == 0xed ? 0x9f : 0xbf;
    else if (s[0] >= 0xf0 && s[0] <= 0xf4)
        n = 4, lo = s[0] == 0xf0 ? 0x90 : 0x80, hi = s[0] == 0xf4 ? 0x8f : 0xbf;
    else
        return 0;
    if (s[1] < lo || s[1] > hi) /* the first continuation byte carries the range checks */
        return 0;
    for (size_t i = 2; i < n; i++)
        if (s[i] < 0x80 || s[i] > 0xbf)
            return 0;
    return n;
}

char *tpuio_printable(char *dst, size_t size, const char *src)
{
    if (!size)
        return dst;
    const unsigned char *s = (const unsigned char *)src;
    size_t at = 0;
    while (*s) {
        char esc[5];
        const char *piece = esc;
        size_t n = 1;
        if (*s >= 0x20 && *s < 0x7f) {
            piece = (const char *)s;
        } else if (*s >= 0x80 && (n = tpuio_utf8_len((const char *)s))) {
            piece = (const char *)s;
        } else {
            n = 1;
            if (*s == '\n' || *s == '\r' || *s == '\t')
                snprintf(esc, sizeof esc, "\\%c", *s == '\n' ? 'n' : *s == '\r' ? 'r' : 't');
            else
                snprintf(esc, sizeof esc, "\\x%02x", *s);
        }
        const size_t len = piece == esc ? strlen(esc) : n;
        if (at + len >= size)
            break;
        memcpy(dst + at, piece, len);
        at += len;
        s += n;
    }
    dst[at] = 0;
    return dst;
}

void tpuio_verr(char *err, size_t errlen, const char *fmt, va_list ap)
{
    if (!err || !errlen)
        return;
    char raw[1024];
    vsnprintf(raw, sizeof raw, fmt, ap);
    tpuio_printable(err, errlen, raw);
}

void tpuio_err(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    tpuio_verr(err, errlen, fmt, ap);
    va_end(ap);
}

/* ------------------------------------------------------------------ reading -- */

/* Reads up to cap bytes from fd into buf; *got is how many. -1 on a read error (errno set). */
static int read_all(int fd, uint8_t *buf, size_t cap, size_t *got)
{
    *got = 0;
    while (*got < cap) {
        const ssize_t r = read(fd, buf + *got, cap - *got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0)
            return -1;
        if (r == 0)
            break;
        *got += (size_t)r;
    }
    return 0;
}

int tpuio_read_file(const char *path, uint64_t max, void **buf, size_t *len, char *err,
                    size_t errlen)
{
    *buf = NULL;
    *len = 0;
    /* O_NONBLOCK: opening a FIFO that no process writes must not wait for a writer. */
    const int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        tpuio_err(err, errlen, "cannot open: %s", strerror(errno));
        return -1;
    }
    struct stat st;
    int rc = -1;
    uint8_t *b = NULL;
    size_t got = 0;
    if (fstat(fd, &st)) {
        tpuio_err(err, errlen, "cannot read: %s", strerror(errno));
    } else if (S_ISDIR(st.st_mode)) {
        tpuio_err(err, errlen, "cannot read: is a directory");
    } else if (S_ISREG(st.st_mode) && (uint64_t)st.st_size > max) {
        tpuio_err(err, errlen, "%llu bytes, more than the %llu this input may have",
                  (unsigned long long)st.st_size, (unsigned long long)max);
    } else {
        /* A regular file is read in one go; a stream, with blocking reads, in growing chunks
         * until it ends or passes max. */
        const int regular = S_ISREG(st.st_mode);
        if (!regular && max > TPUIO_STREAM_MAX)
            max = TPUIO_STREAM_MAX;
        size_t cap = regular ? (size_t)st.st_size : 65536;
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
        for (;;) {
            uint8_t *nb = realloc(b, cap + 1);
            if (!nb) {
                tpuio_err(err, errlen, "out of memory reading %zu bytes", cap);
                break;
            }
            b = nb;
            size_t n;
            if (read_all(fd, b + got, cap - got, &n)) {
                tpuio_err(err, errlen, "cannot read: %s", strerror(errno));
                break;
            }
            got += n;
            if (got < cap || regular) {
                rc = 0;
                break;
            }
            if (got > max) {
                tpuio_err(err, errlen,
                          "not a regular file, and more than the %llu bytes such "
                          "an input may have",
                          (unsigned long long)max);
                break;
            }
            cap = cap > max / 2 ? (size_t)max + 1 : 2 * cap;
        }
    }
    close(fd);
    if (rc) {
        free(b);
        return -1;
    }
    b[got] = 0;
    *buf = b;
    *len = got;
    return 0;
}

/* ------------------------------------------------------------ little-endian -- */

uint64_t tpuio_get_le(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = n - 1; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

void tpuio_put_le(uint8_t *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> 8 * i);
}

const uint8_t *tpuio_take(tpuio_cursor *c, size_t n)
{
    if (c->len - c->pos < n)
        return NULL;
    const uint8_t *p = c->p + c->pos;
    c->pos += n;
    return p;
}

/* ---------------------------------------------------------- signal cleanup -- */

/* A slot is free (0), being written (1) or holds a path to remove (2). The handler reads only
 * slots in state 2, whose path is complete, and calls only unlink, signal and raise. */
static atomic_int tracked_state[TPUIO_TRACKED];
static char tracked_path[TPUIO_TRACKED][PATH_MAX];

int tpuio_track(const char *path)
{
    if (strlen(path) >= PATH_MAX)
        return -1;
    for (int i = 0; i < TPUIO_TRACKED; i++) {
        int free_slot = 0;
        if (atomic_compare_exchange_strong(&tracked_state[i], &free_slot, 1)) {
            strcpy(tracked_path[i], path);
            atomic_store(&tracked_state[i], 2);
            return i;
        }
    }
    return -1;
}

void tpuio_untrack(const char *path)
{
    for (int i = 0; i < TPUIO_TRACKED; i++) {
        int held = 2;
        if (atomic_load(&tracked_state[i]) == 2 && !strcmp(tracked_path[i], path) &&
            atomic_compare_exchange_strong(&tracked_state[i], &held, 0))
            return;
    }
}

static void remove_tracked(int sig)
{
    for (int i = 0; i < TPUIO_TRACKED; i++)
        if (atomic_load(&tracked_state[i]) == 2)
            unlink(tracked_path[i]);
    signal(sig, SIG_DFL);
    raise(sig);
}

void tpuio_remove_on_signals(void)
{
    const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
    for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = remove_tracked;
        sigemptyset(&sa.sa_mask);
        for (size_t j = 0; j < sizeof sigs / sizeof sigs[0]; j++)
            sigaddset(&sa.sa_mask, sigs[j]); /* one cleanup at a time */
        sigaction(sigs[i], &sa, NULL);
    }
}

/* ------------------------------------------------------------------ outputs -- */

int tpuio_stage(tpuio_staged *f, const char *path, const void *data, size_t len, char *err,
                size_t errlen)
{
    f->path = path;
    f->tmp = malloc(strlen(path) + 16);
    if (!f->tmp) {
        tpuio_err(err, errlen, "out of memory");
        return -1;
    }
    sprintf(f->tmp, "%s.tmp.XXXXXX", path);
    const int fd = mkstemp(f->tmp);
    if (fd < 0) {
        tpuio_err(err, errlen, "cannot create: %s", strerror(errno));
        free(f->tmp);
        f->tmp = NULL;
        return -1;
    }
    tpuio_track(f->tmp);
    /* mkstemp makes the file private; give it the mode a plain create would have. */
    const mode_t mask = umask(0);
    umask(mask);
    const char *p = data;
    size_t done = 0;
    int e = fchmod(fd, 0666 & ~mask) ? errno : 0;
    while (!e && done < len) {
        const ssize_t w = write(fd, p + done, len - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            e = w < 0 ? errno : EIO;
        else
            done += (size_t)w;
    }
    /* fsync before the rename: after a crash the name holds the old file or the new one. */
    if (!e && fsync(fd))
        e = errno;
    if (close(fd) && !e)
        e = errno;
    if (!e)
        return 0;
    tpuio_err(err, errlen, "cannot write: %s", strerror(e));
    unlink(f->tmp);
    tpuio_untrack(f->tmp);
    free(f->tmp);
    f->tmp = NULL;
    return -1;
}

int tpuio_commit(tpuio_staged *files, int n, int ok, int *failed, char *err, size_t errlen)
{
    /* A signal amid the renames must take the renamed files back too: all or nothing. */
    for (int i = 0; ok && i < n; i++)
        if (files[i].tmp)
            tpuio_track(files[i].path);
    int committed = 0;
    while (ok && committed < n) {
        const tpuio_staged *f = &files[committed];
        if (f->tmp && rename(f->tmp, f->path)) {
            tpuio_err(err, errlen, "cannot rename into place: %s", strerror(errno));
            if (failed)
                *failed = committed;
            ok = 0;
        } else {
            committed++;
        }
    }
    for (int i = 0; i < n; i++) {
        if (!ok && files[i].tmp)
            unlink(i < committed ? files[i].path : files[i].tmp);
        if (files[i].tmp) {
            tpuio_untrack(files[i].tmp);
            tpuio_untrack(files[i].path);
        }
        free(files[i].tmp);
        files[i].tmp = NULL;
    }
    return ok ? 0 : -1;
}

int tpuio_write_file(const char *path, const void *data, size_t len, char *err, size_t errlen)
{
    tpuio_staged f = {0};
    if (tpuio_stage(&f, path, data, len, err, errlen))
        return -1;
    return tpuio_commit(&f, 1, 1, NULL, err, errlen);
}

/* ------------------------------------------------------------------ the clock -- */

double tpuio_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}
