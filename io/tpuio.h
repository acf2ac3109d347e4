/* tpuio.h - what every loader and writer of the tree shares (C11, no dependencies): error text,
 * bounded whole-file reading, little-endian bytes with a bounds-checked cursor, output files
 * written all or nothing, and the host's clock. The formats built on it have their own headers:
 * io/npy.h (NumPy arrays), io/safetensors.h (weights); package/tpub.h (packages) and the HLO parser
 * use it too.
 *
 * Error idiom of io/: a function that can fail returns 0, or -1 with one line saying what and
 * why in the caller's err buffer (err may be NULL or errlen 0: the message is dropped). Messages
 * do not repeat the path the caller passed; the caller prefixes it. */
#ifndef TPU_IO_TPUIO_H
#define TPU_IO_TPUIO_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ----------------------------------------------------------------- error text -- */

/* printf into err (errlen bytes, truncated; nothing when err is NULL or errlen is 0), made
 * printable by tpuio_printable: bytes from an input never break the line or the terminal. */
void tpuio_err(char *err, size_t errlen, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
void tpuio_verr(char *err, size_t errlen, const char *fmt, va_list ap);

/* Copies src into dst (size bytes, truncated at a whole escape, NUL-terminated) with every byte
 * that is not printable text escaped: \n, \r, \t, and \xNN for other control characters and
 * for bytes that are not part of well-formed UTF-8. Returns dst. */
char *tpuio_printable(char *dst, size_t size, const char *src);

/* Length of the well-formed UTF-8 sequence of two or more bytes at s (RFC 3629: no overlong
 * forms, surrogates or values past U+10FFFF), or 0 when the byte at s does not start one (ASCII
 * included). Reads no further than a NUL byte. */
size_t tpuio_utf8_len(const char *s);

/* ---------------------------------------------------------------- reading files -- */

/* Streams (pipes, character devices) have no size to check before reading: they are read up to
 * this many bytes at most, whatever the format allows a regular file. */
#define TPUIO_STREAM_MAX ((uint64_t)64 << 20)

/* Reads the whole file at path into a new buffer (*buf, free() it; one NUL byte past *len so
 * text parsers may rely on it). A regular file larger than max bytes is refused by its size
 * before anything is read; any other file (a pipe, a character device) once more than
 * min(max, TPUIO_STREAM_MAX) bytes have come. Opening never waits for a FIFO's writer (one with
 * no writer reads as empty). Returns 0, or -1 with the reason in err. */
int tpuio_read_file(const char *path, uint64_t max, void **buf, size_t *len, char *err,
                    size_t errlen);

/* ------------------------------------------------------------ little-endian bytes -- */

/* The unsigned integer of n (1..8) little-endian bytes at p, and its inverse. */
uint64_t tpuio_get_le(const uint8_t *p, int n);
void tpuio_put_le(uint8_t *p, uint64_t v, int n);

/* A read cursor over len bytes: tpuio_take hands out the next n bytes, or NULL (the cursor then
 * stays where it was) when fewer are left. */
typedef struct {
    const uint8_t *p;
    size_t len, pos;
} tpuio_cursor;

const uint8_t *tpuio_take(tpuio_cursor *c, size_t n);
static inline size_t tpuio_left(const tpuio_cursor *c) { return c->len - c->pos; }

/* ---------------------------------------------------------------- output files -- */

/* An output written to a temporary file beside its path, renamed into place by tpuio_commit: a
 * failure never leaves a partial file under the final name. Start from {0}. */
typedef struct {
    const char *path; /* borrowed: must live until tpuio_commit */
    char *tmp;        /* the temporary's name while staged, else NULL */
} tpuio_staged;

/* Writes len bytes of data to a new temporary file for path (the mode a plain create would
 * give), flushed to disk. Returns 0, or -1 with the reason in err. */
int tpuio_stage(tpuio_staged *f, const char *path, const void *data, size_t len, char *err,
                size_t errlen);
/* All or nothing: with ok, renames the n staged files into place, else (or when a rename fails)
 * removes every one, those already renamed too. Entries never staged ({0}) are skipped. Returns
 * 0, or -1: with ok, the rename of files[*failed] failed (failed may be NULL) and err says why;
 * without ok, err is left alone. */
int tpuio_commit(tpuio_staged *files, int n, int ok, int *failed, char *err, size_t errlen);
/* tpuio_stage and tpuio_commit of one file. */
int tpuio_write_file(const char *path, const void *data, size_t len, char *err, size_t errlen);

/* Temporary files a signal must not leave behind: once tpuio_remove_on_signals has installed
 * its handlers, a SIGINT, SIGTERM or SIGHUP removes every tracked path and then kills the process
 * with that signal (its default action, so the exit status still says so). tpuio_stage tracks
 * its temporary until tpuio_commit; other writers (traces) track theirs. Thread-safe; at most
 * TPUIO_TRACKED paths at a time (tpuio_track returns -1 beyond, and the file is then simply
 * not removed on a signal). */
#define TPUIO_TRACKED 64
void tpuio_remove_on_signals(void);
int tpuio_track(const char *path);
void tpuio_untrack(const char *path);

/* ------------------------------------------------------------------ the clock -- */

/* Seconds on the host's monotonic clock: host time spent, as a difference of two readings. */
double tpuio_seconds(void);

#ifdef __cplusplus
}
#endif
#endif
