/* tpub_fuzz.c - libFuzzer target for the package reader (package/tpub.h): any image must be
 * parsed or refused with a one-line message naming its section, never crash or leak; an accepted
 * package must list and save again (tpub_save re-validates it) into a byte-identical image. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "package/tpub.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(int ok)
{
    if (!ok)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tpub_package p;
    hlo_error err = {0};
    if (tpub_parse(data, size, &p, &err)) {
        check(err.msg[0] && !strchr(err.msg, '\n'));
        return 0;
    }
    FILE *null = fopen("/dev/null", "w");
    check(null && tpub_dump(&p, null) == 0);
    fclose(null);
    char path[64];
    snprintf(path, sizeof path, "/tmp/tpub_fuzz.%ld.tpub", (long)getpid());
    check(tpub_save(&p, path, &err) == 0);
    FILE *f = fopen(path, "rb");
    check(f != NULL);
    unsigned char *back = malloc(size + 1);
    check(back && fread(back, 1, size + 1, f) == size && memcmp(back, data, size) == 0);
    fclose(f);
    free(back);
    unlink(path);
    tpub_free(&p);
    return 0;
}
