/* errmsg.h - the message out-parameter of the CLI's libraries (npy, gtkw). */
#ifndef TPU_CLI_ERRMSG_H
#define TPU_CLI_ERRMSG_H

#include <stddef.h>

/* printf into err (errlen bytes, truncated); nothing when err is NULL or errlen is 0. */
void cli_set_err(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
