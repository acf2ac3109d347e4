/* The same small GEMM instruction streams, int8 and bf16, on the verilated core and on the RTL
 * under Icarus Verilog (tests/rtl/tb_core.v, file mode): both must leave the golden model's
 * memory in the same number of cycles; prints each simulator's speed (median of several runs) and
 * their ratio.
 * usage: bench_icarus <source dir> <work dir> [N] [M K N_cols] */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/stat.h>

#include "io/tpuio.h"
#include "sim/tpusim.h"
#include "tests/support/fp_values.h"
#include "tests/support/progs.h"

enum { RUNS_VL = 5, RUNS_IV = 3, MEM = 1 << 16 };

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return v[n / 2];
}

static int write_hex(const char *path, const tpu_prog *p, const uint8_t *mem, size_t n)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    if (p)
        for (size_t i = 0; i < p->n; i++)
            fprintf(f, "%08x%08x%08x%08x\n", p->insns[i].w[3], p->insns[i].w[2], p->insns[i].w[1],
                    p->insns[i].w[0]);
    else
        for (size_t i = 0; i < n; i++)
            fprintf(f, "%02x\n", mem[i]);
    return fclose(f);
}

/* Runs a shell command; returns its first line of output matching prefix in line. */
static int run_capture(const char *cmd, const char *prefix, char *line, size_t size)
{
    FILE *f = popen(cmd, "r");
    if (!f)
        return -1;
    int found = 0;
    char buf[512];
    while (fgets(buf, sizeof buf, f))
        if (!found && strncmp(buf, prefix, strlen(prefix)) == 0) {
            snprintf(line, size, "%s", buf);
            found = 1;
        }
    return (pclose(f) == 0 && found) ? 0 : -1;
}

/* One program on the verilated core, the golden model and Icarus: prints both simulators' cycles
 * and speeds; returns 0 when all three leave the same memory and both simulators take the same
 * cycles. */
static int compare(const char *work, tpusim *sim, const tpusim_hwcfg *hw, const char *what,
                   const uint8_t *img, const tpu_prog *p)
{
    static uint8_t out_vl[MEM];
    tpusim_golden *g = tpusim_golden_create(hw);
    if (!g) {
        fprintf(stderr, "bench_icarus: golden model failed\n");
        return 1;
    }
    memcpy(tpusim_golden_mem(g), img, MEM);
    if (tpusim_golden_run(g, p->insns, p->n, NULL) != TPU_FAULT_NONE) {
        fprintf(stderr, "bench_icarus: golden model failed\n");
        tpusim_golden_destroy(g);
        return 1;
    }

    double vl_t[RUNS_VL];
    uint64_t cycles_vl = 0;
    for (int i = 0; i < RUNS_VL; i++) {
        tpusim_reset(sim);
        tpusim_mem_write(sim, 0, img, MEM);
        uint64_t c0 = tpusim_cycle(sim);
        double t0 = tpuio_seconds();
        if (tpusim_run_program(sim, p->insns, p->n, 10000000) != TPUSIM_HALTED) {
            fprintf(stderr, "bench_icarus: Verilator run did not halt\n");
            tpusim_golden_destroy(g);
            return 1;
        }
        vl_t[i] = tpuio_seconds() - t0;
        cycles_vl = tpusim_cycle(sim) - c0;
    }
    tpusim_mem_read(sim, 0, out_vl, MEM);

    char path[1024], cmd[4096], line[512];
    snprintf(path, sizeof path, "%s/prog.hex", work);
    int ok = write_hex(path, p, NULL, 0) == 0;
    snprintf(path, sizeof path, "%s/mem.hex", work);
    if (!ok || write_hex(path, NULL, img, MEM) != 0) {
        fprintf(stderr, "bench_icarus: cannot write %s\n", path);
        tpusim_golden_destroy(g);
        return 1;
    }
    double iv_t[RUNS_IV], start_t[RUNS_IV];
    unsigned long cycles_iv = 0;
    for (int i = 0; i < 2 * RUNS_IV; i++) {
        snprintf(cmd, sizeof cmd,
                 "vvp -n '%s/core.vvp' +prog=%s/%s.hex +mem=%s/mem.hex +memsize=%d "
                 "+dump=%s/dump.hex +dumpbytes=%d",
                 work, work, i % 2 ? "prog" : "halt", work, MEM, work, MEM);
        double t0 = tpuio_seconds();
        if (run_capture(cmd, "RESULT", line, sizeof line) != 0) {
            fprintf(stderr, "bench_icarus: Icarus run failed\n");
            tpusim_golden_destroy(g);
            return 1;
        }
        (i % 2 ? iv_t : start_t)[i / 2] = tpuio_seconds() - t0;
        const char *c = strstr(line, "cycles=");
        if (i % 2)
            cycles_iv = c ? strtoul(c + 7, NULL, 10) : 0;
    }
    snprintf(path, sizeof path, "%s/dump.hex", work);
    FILE *f = fopen(path, "r");
    int same = f != NULL;
    const uint8_t *gm = tpusim_golden_mem(g);
    for (size_t i = 0; same && i < MEM; i++) {
        unsigned b;
        same = fscanf(f, "%x", &b) == 1 && b == gm[i] && out_vl[i] == gm[i];
    }
    if (f)
        fclose(f);
    tpusim_golden_destroy(g);

    double vl = median(vl_t, RUNS_VL), start = median(start_t, RUNS_IV);
    double iv = median(iv_t, RUNS_IV) - start;
    double vl_rate = (double)cycles_vl / vl, iv_rate = (double)cycles_iv / iv;
    printf("%s, %zu instructions, memory latency 4\n", what, p->n);
    printf("  %-10s %10s %12s %16s\n", "simulator", "cycles", "wall (s)", "cycles/s");
    printf("  %-10s %10llu %12.4f %16.0f   median of %d\n", "Verilator",
           (unsigned long long)cycles_vl, vl, vl_rate, RUNS_VL);
    printf("  %-10s %10lu %12.4f %16.0f   median of %d, less %.3f s vvp start-up\n", "Icarus",
           cycles_iv, iv, iv_rate, RUNS_IV, start);
    printf("  Verilator / Icarus speed: %.0fx; results bit-exact vs golden: %s; same cycles: %s\n",
           vl_rate / iv_rate, same ? "yes" : "NO", cycles_vl == cycles_iv ? "yes" : "NO");
    return same && cycles_vl == cycles_iv ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s <source dir> <work dir> [N] [M K Ncols]\n", argv[0]);
        return 2;
    }
    const char *src = argv[1], *work = argv[2];
    uint32_t n_arr = argc > 3 ? (uint32_t)atoi(argv[3]) : 8;
    gemm_desc d = {0};
    d.m = argc > 6 ? (uint32_t)atoi(argv[4]) : 64;
    d.k = argc > 6 ? (uint32_t)atoi(argv[5]) : 64;
    d.n = argc > 6 ? (uint32_t)atoi(argv[6]) : 64;
    bf16_gemm_desc db = {.m = d.m, .k = d.k, .n = d.n};

    tpusim_config cfg;
    tpusim_config_default(&cfg);
    cfg.array_n = n_arr;
    cfg.mem_size = MEM;
    cfg.mem_latency = 4; /* tb_core's default memory latency */
    char err[256];
    tpusim *sim = tpusim_create(&cfg, err, sizeof err);
    if (!sim) {
        fprintf(stderr, "bench_icarus: %s\n", err);
        return 1;
    }
    tpusim_hwcfg hw;
    tpusim_read_hwcfg(sim, &hw);
    static uint8_t img[MEM], img_bf16[MEM];
    uint64_t end = gemm_layout(&d, 64), end_bf16 = bf16_gemm_layout(&db, n_arr, 64);
    tpu_rng r = {7};
    tpu_prog p = {0}, pb = {0};
    if (end > MEM || end_bf16 > MEM || gemm_program(&p, &hw, &d) != 0) {
        fprintf(stderr, "bench_icarus: GEMM does not fit\n");
        return 1;
    }
    rng_fill_int8(&r, (int8_t *)img, end);
    /* The bf16 GEMM on edge values and magnitudes whose sums cancel and round. */
    rng_fill_fp(&r, img_bf16, end_bf16);
    bf16_gemm_program(&pb, n_arr, &db, 0, 0);
    prog_emit(&pb, TPU_OP_HALT, 0, 0, 0, 0, 0, 0);

    char cmd[4096], path[1024];
    mkdir(work, 0777);
    snprintf(cmd, sizeof cmd,
             "iverilog -g2012 -I '" TPU_ISA_DIR "' -I '%s/rtl' -I '%s/tests/rtl' -o '%s/core.vvp' "
             "-s tb_core -P tb_core.N=%u -P tb_core.MEM_MAX=%d %s/rtl/*.v %s/tests/rtl/model/*.v "
             "%s/tests/rtl/tb_core.v",
             src, src, work, n_arr, MEM, src, src, src);
    if (system(cmd) != 0) {
        fprintf(stderr, "bench_icarus: iverilog failed\n");
        return 1;
    }
    /* vvp start-up (loading the images, initialising the memories) is timed with a program that
     * only halts, and subtracted. */
    tpu_prog halt = {0};
    prog_emit(&halt, TPU_OP_HALT, 0, 0, 0, 0, 0, 0);
    snprintf(path, sizeof path, "%s/halt.hex", work);
    write_hex(path, &halt, NULL, 0);
    prog_free(&halt);

    char what[128];
    snprintf(what, sizeof what, "GEMM %ux%ux%u at N=%u, int8", d.m, d.k, d.n, n_arr);
    int rc = compare(work, sim, &hw, what, img, &p);
    snprintf(what, sizeof what, "GEMM %ux%ux%u at N=%u, bf16", d.m, d.k, d.n, n_arr);
    rc |= compare(work, sim, &hw, what, img_bf16, &pb);
    prog_free(&p);
    prog_free(&pb);
    tpusim_destroy(sim);
    return rc;
}
