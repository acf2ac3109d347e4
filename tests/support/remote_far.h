// remote_far.h - a remote device for tests (test_driver_remote.cpp, test_runtime_cores.cpp): the
// bus of tpu_open_remote as plain calls on a device-side driver in the same process (tools/tpu_vp
// reaches one over TLM-2.0).
#ifndef TPU_TESTS_SUPPORT_REMOTE_FAR_H
#define TPU_TESTS_SUPPORT_REMOTE_FAR_H

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "driver/tpu.h"

namespace remote_far
{

// The bus: each op a call on the far device; `refuse` makes every access fail. A submission the
// far driver refuses at its start ends there: the next wait reports it.
struct Far {
    tpu_device *dev = nullptr;
    bool refuse = false;
    tpu_status refused[TPUSIM_CORES_MAX] = {};
    std::string why[TPUSIM_CORES_MAX];
};

inline int far_write(void *ctx, uint32_t addr, const void *src, size_t n)
{
    Far *f = static_cast<Far *>(ctx);
    return f->refuse || tpu_write(f->dev, addr, src, n) != TPU_OK ? -1 : 0;
}

inline int far_read(void *ctx, uint32_t addr, void *dst, size_t n)
{
    Far *f = static_cast<Far *>(ctx);
    return f->refuse || tpu_read(f->dev, addr, dst, n) != TPU_OK ? -1 : 0;
}

inline int far_query(void *ctx, tpu_info *info)
{
    Far *f = static_cast<Far *>(ctx);
    return f->refuse || tpu_query(f->dev, info) != TPU_OK ? -1 : 0;
}

inline int far_start(void *ctx, uint32_t core, uint32_t addr, uint32_t bytes)
{
    Far *f = static_cast<Far *>(ctx);
    if (f->refuse)
        return -1;
    f->refused[core] = tpu_submit_at(f->dev, core, addr, bytes);
    f->why[core] = tpu_last_error(f->dev);
    return 0;
}

// The far device's pending submissions are the near device's, but for those refused at their
// start: the wait reports those first, else the one that stops first.
inline int far_wait(void *ctx, uint32_t cores, uint32_t *core, tpu_remote_result *out)
{
    Far *f = static_cast<Far *>(ctx);
    if (f->refuse)
        return -1;
    for (uint32_t k = 0; k < TPUSIM_CORES_MAX; k++)
        if ((cores >> k & 1) && f->refused[k] != TPU_OK) {
            *core = k;
            out->status = f->refused[k];
            std::snprintf(out->msg, sizeof out->msg, "%s", f->why[k].c_str());
            f->refused[k] = TPU_OK;
            return 0;
        }
    if (cores & (cores - 1)) {
        out->status = tpu_wait_any(f->dev, 0, core);
    } else {
        *core = 0;
        while (!(cores >> *core & 1))
            ++*core;
        out->status = tpu_wait_core(f->dev, *core, 0);
    }
    if (out->status != TPU_OK)
        std::snprintf(out->msg, sizeof out->msg, "%s", tpu_last_error(f->dev));
    tpu_perf_core(f->dev, *core, &out->perf);
    return 0;
}

inline uint64_t far_cycle(void *ctx) { return tpu_cycle(static_cast<Far *>(ctx)->dev); }

inline const tpu_remote kOps = {nullptr,   far_write, far_read, far_query,
                                far_start, far_wait,  far_cycle};

// A far device of array size n (cores as tpusim_config.cores) and the ops that reach it; with
// open_near, the near (remote) device too.
struct Remote {
    Far far;
    tpu_remote ops = kOps;
    tpu_device *near = nullptr;
    Remote(uint32_t n, uint32_t cores, bool open_near = true)
    {
        tpusim_config o{};
        o.array_n = n;
        o.cores = cores;
        o.mem_size = 8u << 20;
        char err[256] = "";
        EXPECT_EQ(tpu_open(&o, 1, &far.dev, err, sizeof err), TPU_OK) << err;
        ops.ctx = &far;
        if (open_near) {
            EXPECT_EQ(tpu_open_remote(&ops, &near, err, sizeof err), TPU_OK) << err;
        }
    }
    ~Remote()
    {
        tpu_close(near);
        tpu_close(far.dev);
    }
    Remote(const Remote &) = delete;
    Remote &operator=(const Remote &) = delete;
};

} // namespace remote_far

#endif
