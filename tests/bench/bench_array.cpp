// bench_array: the bare array against the full core on the same GEMM (make bench).
//
// The bare array is tpu_array alone (rtl/tpu_array.v, rtl/tpu_pe.v) verilated for each N with the
// core model's Verilator and C++ options (tpu_verilate in sim/CMakeLists.txt), clocked the way
// sim/device.cpp clocks the core (inputs set, clk = 0 eval, clk = 1 eval), and fed from here with
// what tpu_mxu would feed it for C = A . B: every N x N weight tile of B shifted into the bank the
// array is not computing with while the other bank streams, and the M rows of A per tile, one per
// cycle, element k entering array row k k cycles late. The schedule keeps the MXU's bank rules
// (a shift starts N cycles after the last row reading that bank; the first row of a tile enters
// N cycles after its shift starts), so the array streams exactly the rows the core's MXU streams
// (PERF_MXU_BUSY) plus its bubbles and the drain. The de-skewed sums are accumulated into C here
// and checked against a C reference, like the core's result.
//
// The full core runs the same GEMM through the driver and firmware, like tpusim gemm; its speed
// is the driver's (simulated cycles over host time simulating). The two alternate, repeat by
// repeat, so both see the same machine load; the table gives the medians and their ratio.
//
// usage: bench_array [--array N,...] [--size S | --m M --k K --n N] [--repeat R] [--only
// array|core]
// --only runs one side (for profilers: docs/performance.md); the ratio column is then empty.
#include "driver/tpu.h"
#include "tests/support/progs.h"

#include "tests/bench/bench_arrays.h" // generated: the Varray_n<N> headers, BENCH_FOR_EACH_ARRAY

#include <verilated.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

namespace
{

// One GEMM's operands, padded to whole N x N tiles, and its reference result.
struct Gemm {
    uint32_t m, k, n;       // as given
    uint32_t kt, nt;        // tiles along K and N
    std::vector<int8_t> a;  // m x k, row-major
    std::vector<int8_t> b;  // k x n, row-major
    std::vector<int32_t> c; // m x n reference
};

Gemm make_gemm(uint32_t m, uint32_t k, uint32_t n, uint32_t arr)
{
    Gemm g{m, k, n, (k + arr - 1) / arr, (n + arr - 1) / arr, {}, {}, {}};
    g.a.resize(size_t(m) * k);
    g.b.resize(size_t(k) * n);
    tpu_rng r = {12345};
    rng_fill(&r, g.a.data(), g.a.size());
    rng_fill(&r, g.b.data(), g.b.size());
    gemm_desc d = {};
    d.m = m;
    d.k = k;
    d.n = n;
    g.c.resize(size_t(m) * n);
    gemm_reference(&d, g.a.data(), g.b.data(), nullptr, g.c.data());
    return g;
}

double seconds_since(std::chrono::steady_clock::time_point t0)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Verilator holds ports of up to 64 bits in integers and wider ones in VlWide words; these copy
// 32-bit words into either.
template <typename T> void put(T &port, const uint32_t *w)
{
    static_assert(std::is_integral<T>::value, "Verilator scalar");
    uint64_t x = w[0];
    if (sizeof(T) > 4)
        x |= uint64_t(w[1]) << 32;
    port = static_cast<T>(x);
}
template <std::size_t W> void put(VlWide<W> &port, const uint32_t *w)
{
    for (std::size_t i = 0; i < W; i++)
        port.at(i) = w[i];
}
template <std::size_t W> uint32_t word(const VlWide<W> &port, std::size_t i) { return port.at(i); }

// Sets bits [pos, pos+width) of a word array (all zero beforehand) to v.
inline void set_bits(uint32_t *w, unsigned pos, unsigned width, uint32_t v)
{
    v &= (1u << width) - 1;
    w[pos / 32] |= v << (pos % 32);
    if (pos % 32 + width > 32)
        w[pos / 32 + 1] |= v >> (32 - pos % 32);
}

// One context for every bare-array model, never destroyed: Verilator 5.006 unregisters a model's
// scopes through the thread's most recent context (Verilated::threadContextp()), which must
// outlive every model built after it, the driver's included.
VerilatedContext *array_context()
{
    static VerilatedContext *ctx = [] {
        VerilatedContext *c = new VerilatedContext;
        c->randReset(0);
        return c;
    }();
    return ctx;
}

struct ArrayRun {
    uint64_t cycles = 0; // clock edges
    uint64_t rows = 0;   // rows streamed (the core's PERF_MXU_BUSY)
    double seconds = 0;
    bool ok = false;
};

// The bare N x N array through one GEMM; c (m x n) receives the result.
template <class V> ArrayRun run_array(const Gemm &g, uint32_t N, std::vector<int32_t> &c)
{
    constexpr unsigned AW = 16, WW = 16; // int8 activations and weight cells, sign-extended
    const uint32_t tiles = g.kt * g.nt;
    const uint32_t M = g.m;
    // Padded tiles: tile t = (nt, kt) in the order the firmware streams them (K innermost), row r
    // (the K index) and column c (the output column), zero past k and n.
    std::vector<int8_t> wt(size_t(tiles) * N * N, 0);
    for (uint32_t t = 0; t < tiles; t++) {
        const uint32_t k0 = (t % g.kt) * N, n0 = (t / g.kt) * N;
        for (uint32_t r = 0; r < N && k0 + r < g.k; r++)
            for (uint32_t col = 0; col < N && n0 + col < g.n; col++)
                wt[(size_t(t) * N + r) * N + col] = g.b[size_t(k0 + r) * g.n + n0 + col];
    }
    // A padded to whole K tiles: row i of tile kt is &ap[i * kp + kt * N].
    const uint32_t kp = g.kt * N;
    std::vector<int8_t> ap(size_t(M) * kp, 0);
    for (uint32_t i = 0; i < M; i++)
        std::memcpy(&ap[size_t(i) * kp], &g.a[size_t(i) * g.k], g.k);
    // Output columns padded too, cut when copied out.
    const uint32_t np = g.nt * N;
    std::vector<int32_t> cp(size_t(M) * np, 0);

    // Schedule: tile t's shift into bank t % 2 starts at ts[t] (column c shifts during
    // [ts + c, ts + c + N - 1]); its rows enter array row 0 at start[t] .. start[t] + M - 1.
    std::vector<int64_t> ts(tiles), start(tiles);
    for (uint32_t t = 0; t < tiles; t++) {
        int64_t s = t ? ts[t - 1] + N + 1 : 0; // one shift at a time, decided N + 1 apart
        if (t >= 2)
            s = std::max<int64_t>(s, start[t - 2] + M - 1 + N); // bank free
        ts[t] = s;
        start[t] = std::max<int64_t>(t ? start[t - 1] + M : 0, s + N);
    }
    const int64_t last_row = start[tiles - 1] + M - 1;
    const int64_t end = last_row + 2 * int64_t(N) - 1; // column N-1's sum of it leaves then

    // Rows that entered array row 0, by cycle (ring of 2N): A row at its K tile, output row at
    // its column block, bank; null when no row entered.
    uint32_t ring = 1;
    while (ring < 2 * N)
        ring <<= 1;
    std::vector<const int8_t *> in_a(ring, nullptr);
    std::vector<int32_t *> in_c(ring, nullptr);
    std::vector<uint8_t> in_s(ring, 0);

    const size_t aw_words = (AW * N + 31) / 32 + 1, w_words = (WW * N + 31) / 32 + 1;
    std::vector<uint32_t> a_w(aw_words), s_w(2), w_w(w_words), we_w(2), ws_w(2);

    std::unique_ptr<V> v(new V(array_context(), "TOP"));
    v->clk = 0;
    v->rst = 1;
    v->eval();
    v->clk = 1;
    v->eval();
    v->rst = 0;

    ArrayRun run;
    const auto t0 = std::chrono::steady_clock::now();
    uint32_t cur = 0, sh = 0;
    for (int64_t tau = 0; tau <= end; tau++) {
        // The row entering array row 0 in this cycle.
        const uint32_t slot = uint32_t(tau) & (ring - 1);
        in_a[slot] = nullptr;
        in_c[slot] = nullptr;
        in_s[slot] = 0;
        if (cur < tiles && tau >= start[cur]) {
            const uint32_t i = uint32_t(tau - start[cur]);
            in_a[slot] = &ap[size_t(i) * kp + (cur % g.kt) * N];
            in_c[slot] = &cp[size_t(i) * np + (cur / g.kt) * N];
            in_s[slot] = cur & 1;
            run.rows++;
            if (i == M - 1)
                cur++;
        }
        // Activations and bank selects, skewed: row r takes the row that entered r cycles ago.
        std::fill(a_w.begin(), a_w.end(), 0);
        s_w[0] = s_w[1] = 0;
        for (uint32_t r = 0; r < N && int64_t(r) <= tau; r++) {
            const uint32_t e = uint32_t(tau - r) & (ring - 1);
            if (!in_a[e])
                continue;
            set_bits(a_w.data(), AW * r, AW, uint32_t(int32_t(in_a[e][r])));
            s_w[r / 32] |= uint32_t(in_s[e]) << (r % 32);
        }
        // Weights: at most two shifts overlap (one per column at a time).
        std::fill(w_w.begin(), w_w.end(), 0);
        we_w[0] = we_w[1] = ws_w[0] = ws_w[1] = 0;
        while (sh < tiles && ts[sh] + 2 * int64_t(N) - 2 < tau)
            sh++;
        for (uint32_t t = sh; t < tiles && t < sh + 2 && ts[t] <= tau; t++)
            for (uint32_t col = 0; col < N; col++) {
                const int64_t j = tau - col - ts[t]; // step of this column's shift
                if (j < 0 || j >= int64_t(N))
                    continue;
                // Step j shifts in tile row N-1-j: after N steps row r sits in array row r.
                const int8_t w = wt[(size_t(t) * N + (N - 1 - uint32_t(j))) * N + col];
                set_bits(w_w.data(), WW * col, WW, uint32_t(int32_t(w)));
                we_w[col / 32] |= 1u << (col % 32);
                ws_w[col / 32] |= (t & 1u) << (col % 32);
            }
        put(v->a_in, a_w.data());
        put(v->s_in, s_w.data());
        v->f_in = 0; // int8 rows: the float clock stays gated
        v->bf = 0;
        put(v->w_in, w_w.data());
        put(v->w_en, we_w.data());
        put(v->w_sel, ws_w.data());
        v->clk = 0;
        v->eval();
        v->clk = 1;
        v->eval();
        // After this edge column c holds the sum of the row that entered N-1+c cycles ago.
        for (uint32_t col = 0; col < N; col++) {
            const int64_t from = tau - int64_t(N - 1) - col;
            if (from < 0)
                continue;
            int32_t *dst = in_c[uint32_t(from) & (ring - 1)];
            if (!dst)
                continue;
            dst[col] = int32_t(uint32_t(dst[col]) + word(v->p_out, col));
        }
    }
    run.seconds = seconds_since(t0);
    run.cycles = uint64_t(end + 1);
    v->final();

    for (uint32_t i = 0; i < M; i++)
        std::memcpy(&c[size_t(i) * g.n], &cp[size_t(i) * np], size_t(g.n) * 4);
    run.ok = c == g.c;
    return run;
}

struct ArrayEntry {
    uint32_t n;
    ArrayRun (*run)(const Gemm &, uint32_t, std::vector<int32_t> &);
};
#define BENCH_ARRAY_ENTRY(N) {N, run_array<Varray_n##N>},
const ArrayEntry kArrays[] = {BENCH_FOR_EACH_ARRAY(BENCH_ARRAY_ENTRY)};
#undef BENCH_ARRAY_ENTRY

struct CoreRun {
    uint64_t cycles = 0, rows = 0;
    double seconds = 0;
    bool ok = false;
};

// The full core through the driver and firmware, as tpusim gemm runs it (without the golden
// model: the result is compared with the reference instead).
struct Core {
    tpu_device *dev = nullptr;
    uint32_t a = 0, b = 0, c = 0;
    tpu_stream *st = nullptr;
    std::string err;

    Core(const Gemm &g, uint32_t n)
    {
        tpusim_config o{};
        o.array_n = n;
        char msg[256];
        if (tpu_open(&o, 0, &dev, msg, sizeof msg) != TPU_OK) {
            err = msg;
            return;
        }
        uint32_t ia, ib, ic;
        st = tpu_stream_new();
        if (!st || tpu_alloc(dev, g.a.size(), &a) || tpu_alloc(dev, g.b.size(), &b) ||
            tpu_alloc(dev, g.c.size() * 4, &c) || tpu_write(dev, a, g.a.data(), g.a.size()) ||
            tpu_write(dev, b, g.b.data(), g.b.size()) ||
            tpu_stream_buffer(st, a, uint32_t(g.a.size()), &ia) ||
            tpu_stream_buffer(st, b, uint32_t(g.b.size()), &ib) ||
            tpu_stream_buffer(st, c, uint32_t(g.c.size() * 4), &ic)) {
            err = "cannot set up the GEMM: " + std::string(tpu_last_error(dev));
            return;
        }
        tpu_gemm gm = {};
        gm.m = g.m;
        gm.k = g.k;
        gm.n = g.n;
        gm.a = {ia, 0, g.k};
        gm.b = {ib, 0, g.n};
        gm.c = {ic, 0, g.n};
        if (tpu_stream_gemm(st, &gm) != TPU_OK)
            err = "cannot build the command stream";
    }
    ~Core()
    {
        tpu_stream_free(st);
        tpu_close(dev);
    }
    CoreRun run(const Gemm &g, std::vector<int32_t> &out)
    {
        CoreRun r;
        tpu_perf_report p;
        if (tpu_submit(dev, st) != TPU_OK || tpu_wait(dev, 0) != TPU_OK ||
            tpu_perf(dev, &p) != TPU_OK || tpu_read(dev, c, out.data(), out.size() * 4)) {
            err = tpu_last_error(dev);
            return r;
        }
        r.cycles = p.cycles;
        r.rows = p.counters[TPU_PERF_MXU_BUSY];
        r.seconds = p.wall_seconds;
        r.ok = out == g.c;
        return r;
    }
};

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

bool parse_list(const char *s, std::vector<uint32_t> &out)
{
    out.clear();
    std::string str(s);
    size_t pos = 0;
    while (pos <= str.size()) {
        const size_t comma = std::min(str.find(',', pos), str.size());
        const std::string item = str.substr(pos, comma - pos);
        char *endp;
        const unsigned long v = std::strtoul(item.c_str(), &endp, 10);
        if (item.empty() || *endp || v == 0 || v > 65535)
            return false;
        out.push_back(uint32_t(v));
        pos = comma + 1;
    }
    return !out.empty();
}

int usage()
{
    std::fprintf(stderr, "usage: bench_array [--array N,...] [--size S | --m M --k K --n N] "
                         "[--repeat R] [--only array|core]\n");
    return 2;
}

} // namespace

int main(int argc, char **argv)
{
    std::vector<uint32_t> arrays;
    for (const ArrayEntry &e : kArrays)
        arrays.push_back(e.n);
    uint32_t m = 512, k = 512, n = 512, repeat = 3;
    bool do_array = true, do_core = true;
    for (int i = 1; i < argc; i++) {
        const std::string arg = argv[i];
        if (i + 1 >= argc)
            return usage();
        const char *val = argv[++i];
        if (arg == "--only") {
            const std::string side = val;
            if (side != "array" && side != "core")
                return usage();
            do_array = side == "array";
            do_core = side == "core";
            continue;
        }
        std::vector<uint32_t> list;
        if (!parse_list(val, list) || (arg != "--array" && list.size() != 1))
            return usage();
        if (arg == "--array")
            arrays = list;
        else if (arg == "--size")
            m = k = n = list[0];
        else if (arg == "--m")
            m = list[0];
        else if (arg == "--k")
            k = list[0];
        else if (arg == "--n")
            n = list[0];
        else if (arg == "--repeat")
            repeat = std::min<uint32_t>(list[0], 99);
        else
            return usage();
    }

    std::printf("bare array (tpu_array alone) vs full core (tpu_core, driver and firmware): "
                "GEMM %u x %u x %u, median of %u\n",
                m, k, n, repeat);
    std::printf("%5s %12s %14s %12s %12s %14s %10s\n", "N", "array cyc", "array cyc/s", "core cyc",
                "MXU rows", "core cyc/s", "core/array");
    int rc = 0;
    for (uint32_t arr : arrays) {
        const ArrayEntry *e = nullptr;
        for (const ArrayEntry &x : kArrays)
            if (x.n == arr)
                e = &x;
        if (!e) {
            std::printf("%5u (not built)\n", arr);
            continue;
        }
        const Gemm g = make_gemm(m, k, n, arr);
        Core core(g, arr);
        if (!core.err.empty()) {
            std::fprintf(stderr, "bench_array: N = %u: %s\n", arr, core.err.c_str());
            return 1;
        }
        std::vector<int32_t> out(g.c.size());
        std::vector<double> a_rate, c_rate;
        ArrayRun ar;
        CoreRun cr;
        for (uint32_t r = 0; r < repeat; r++) {
            if (do_array)
                ar = e->run(g, arr, out);
            if (do_core)
                cr = core.run(g, out);
            if ((do_array && !ar.ok) || (do_core && !cr.ok)) {
                std::fprintf(stderr,
                             "bench_array: N = %u: %s result differs from the reference%s\n", arr,
                             ar.ok ? "the core's" : "the bare array's",
                             core.err.empty() ? "" : (": " + core.err).c_str());
                return 1;
            }
            a_rate.push_back(double(ar.cycles) / ar.seconds);
            c_rate.push_back(double(cr.cycles) / cr.seconds);
        }
        const bool both = do_array && do_core;
        if (both && ar.rows != cr.rows)
            rc = 1; // the array must stream what the MXU streams
        const double am = do_array ? median(a_rate) : 0, cm = do_core ? median(c_rate) : 0;
        char ratio[16] = "";
        if (both)
            std::snprintf(ratio, sizeof ratio, "%.1f%%", 100 * cm / am);
        std::printf("%5u %12llu %14.0f %12llu %12llu %14.0f %10s%s\n", arr,
                    (unsigned long long)ar.cycles, am, (unsigned long long)cr.cycles,
                    (unsigned long long)cr.rows, cm, ratio,
                    both && ar.rows != cr.rows ? "  (array streamed a different row count)" : "");
        std::fflush(stdout);
    }
    return rc;
}
