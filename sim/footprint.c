/* footprint.c - what each instruction reads and writes (docs/isa.md "Footprints"), from the
 * generated TPU_FOR_EACH_ACCESS list of rtl/tpu_isa.toml: the golden model's range checks, the
 * verifier's attribution and the driver's verification spans all come from here. */
#include "sim/tpusim.h"

int tpusim_footprint(const tpusim_fields *f, uint32_t array_n, tpusim_access *out)
{
    /* The names the table's expressions use. */
    const uint64_t rows = f->rows, a = f->a, b = f->b, len = f->len, stride = f->stride;
    const uint64_t flags = f->flags, N = array_n;
    const uint64_t ph = TPU_POOL_GET(f->stride, PH), pw = TPU_POOL_GET(f->stride, PW);
    const uint64_t step = TPU_POOL_GET(f->stride, STEP), pitch = TPU_POOL_GET(f->stride, PITCH);
    int k = 0;
#define ACCESS(OP, SPACE, WRITE, WHEN, FIRST, COUNT, STEP, SIZE) \
    if (f->op == TPU_OP_##OP && (WHEN))                          \
        out[k++] = (tpusim_access){TPU_SPACE_##SPACE, WRITE, FIRST, COUNT, STEP, SIZE};
    TPU_FOR_EACH_ACCESS(ACCESS)
#undef ACCESS
    /* Whatever names the table stops using. */
    (void)rows, (void)a, (void)b, (void)len, (void)stride, (void)flags, (void)N;
    (void)ph, (void)pw, (void)step, (void)pitch;
    return k;
}

uint64_t tpusim_access_end(const tpusim_access *a)
{
    return a->count ? a->first + (a->count - 1) * a->step + a->size : a->first;
}

/* The size of a space a range of it must stay inside (the ID registers' and MEM_SIZE's). */
static uint64_t limit(const tpusim_hwcfg *cfg, uint32_t csr)
{
    switch (csr) {
    case TPU_CSR_UB_ROWS: return cfg->ub_rows;
    case TPU_CSR_ACC_ROWS: return cfg->acc_rows;
    default: /* TPU_CSR_MEM_SIZE */ return cfg->mem_size;
    }
}

int tpusim_range_fault(const tpusim_access *acc, int count, const tpusim_hwcfg *cfg)
{
#define RANGE(SPACE, LIMIT, FAULT)                                    \
    for (int i = 0; i < count; i++)                                   \
        if (acc[i].space == TPU_SPACE_##SPACE &&                      \
            tpusim_access_end(&acc[i]) > limit(cfg, TPU_CSR_##LIMIT)) \
            return TPU_FAULT_##FAULT;
    TPU_FOR_EACH_RANGE(RANGE)
#undef RANGE
    return TPU_FAULT_NONE;
}

void tpusim_for_each_write(const tpusim_insn *prog, size_t n, uint32_t array_n, int space,
                           tpusim_block_fn *fn, void *ctx)
{
    for (size_t i = 0; i < n; i++) {
        const tpusim_fields f = tpusim_decode(&prog[i]);
        tpusim_access acc[TPU_FOOTPRINT_MAX];
        const int k = tpusim_footprint(&f, array_n, acc);
        for (int j = 0; j < k; j++) {
            const tpusim_access *x = &acc[j];
            if (!x->write || x->space != space || !x->count)
                continue;
            if (x->step <= x->size) { /* blocks that touch or overlap: one range */
                fn(ctx, x->first, tpusim_access_end(x) - x->first, i);
                continue;
            }
            for (uint64_t b = 0; b < x->count; b++)
                fn(ctx, x->first + b * x->step, x->size, i);
        }
    }
}
