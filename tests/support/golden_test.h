// golden_test.h - shared by the golden-model tests (test_golden.cpp, test_golden_insns.cpp): a
// golden model that cleans up after itself, a snapshot of everything an instruction may change,
// and random contents for its memories.
#ifndef TPU_TESTS_SUPPORT_GOLDEN_TEST_H
#define TPU_TESTS_SUPPORT_GOLDEN_TEST_H

#include <cstdint>
#include <cstring>
#include <new>
#include <vector>

#include "tests/support/progs.h"

namespace golden_test
{

// A golden model that cleans up after itself, with small default sizes.
struct Golden {
    tpusim_hwcfg cfg;
    tpusim_golden *g;

    explicit Golden(uint32_t n, uint32_t ub_rows = 16, uint32_t acc_rows = 16, uint32_t tiles = 2,
                    uint64_t mem_size = 4096)
        : cfg{n, ub_rows, acc_rows, tiles, 32, mem_size}, g(tpusim_golden_create(&cfg))
    {
        if (!g)
            throw std::bad_alloc();
    }
    ~Golden() { tpusim_golden_destroy(g); }
    Golden(const Golden &) = delete;
    Golden &operator=(const Golden &) = delete;

    int exec(uint32_t op, uint32_t flags = 0, uint32_t rows = 0, uint32_t a = 0, uint32_t b = 0,
             uint32_t len = 0, uint32_t stride = 0)
    {
        const tpusim_insn i = tpusim_encode(op, flags, rows, a, b, len, stride);
        return tpusim_golden_exec(g, &i);
    }
    uint8_t *mem() { return tpusim_golden_mem(g); }
    int8_t *ub(uint32_t r) { return tpusim_golden_ub(g, r); }
    int32_t *acc(uint32_t r) { return tpusim_golden_acc(g, r); }
    void put32(uint64_t addr, uint32_t v)
    {
        for (int k = 0; k < 4; k++)
            mem()[addr + k] = (uint8_t)(v >> 8 * k);
    }
    int32_t get32(uint64_t addr)
    {
        uint32_t v = 0;
        for (int k = 0; k < 4; k++)
            v |= (uint32_t)mem()[addr + k] << 8 * k;
        int32_t s;
        memcpy(&s, &v, 4);
        return s;
    }
    // bias, mult, shift rows of the parameter block RD_PARAMS reads with stride 4N at addr
    void put_params(uint64_t addr, const std::vector<int32_t> &bias,
                    const std::vector<int32_t> &mult, const std::vector<uint32_t> &shift)
    {
        const uint32_t n = cfg.array_n;
        for (size_t c = 0; c < bias.size(); c++) {
            put32(addr + 4 * c, (uint32_t)bias[c]);
            put32(addr + 4 * n + 4 * c, (uint32_t)mult[c]);
            put32(addr + 8 * n + 4 * c, shift[c]);
        }
    }
};

// Everything an instruction may change that the model exposes.
struct State {
    std::vector<uint8_t> mem;
    std::vector<int8_t> ub;
    std::vector<int32_t> acc;
    uint32_t sync;

    explicit State(Golden &m)
        : mem(m.mem(), m.mem() + m.cfg.mem_size), sync(tpusim_golden_sync_count(m.g))
    {
        for (uint32_t r = 0; r < m.cfg.ub_rows; r++)
            ub.insert(ub.end(), m.ub(r), m.ub(r) + m.cfg.array_n);
        for (uint32_t r = 0; r < m.cfg.acc_rows; r++)
            acc.insert(acc.end(), m.acc(r), m.acc(r) + m.cfg.array_n);
    }
    bool operator==(const State &o) const
    {
        return mem == o.mem && ub == o.ub && acc == o.acc && sync == o.sync;
    }
};

inline void fill_random(Golden &m, tpu_rng *r)
{
    rng_fill(r, m.mem(), m.cfg.mem_size);
    for (uint32_t i = 0; i < m.cfg.ub_rows; i++)
        rng_fill(r, m.ub(i), m.cfg.array_n);
    for (uint32_t i = 0; i < m.cfg.acc_rows; i++)
        rng_fill(r, m.acc(i), 4 * m.cfg.array_n);
}

} // namespace golden_test

#endif
