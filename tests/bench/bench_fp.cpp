// bench_fp: what the bf16 arithmetic of rtl/tpu_fp.vh costs a verilated array, and a check of it
// there.
//
// fp_array (tests/bench/fp_array.v) is N x N multiply-add lanes wired like tpu_array, int8 or
// bf16 by an input, verilated for each N with the core model's options (tpu_verilate in
// sim/CMakeLists.txt) and clocked as sim/device.cpp clocks the core. Each run loads a weight tile
// (N cycles) and streams a new activation into every row each cycle. The int8 and bf16 runs
// alternate, repeat by repeat, so both see the same machine load; the table gives the medians of
// simulated cycles per second and bf16's share of int8's. Outside the timed loop every run's
// outputs, every cycle, are checked against a C model of the array: tpu_pe's arithmetic for int8,
// the golden model's (sim/fp.h) for bf16.
//
// usage: bench_fp [--array N,...] [--cycles C] [--repeat R] [--edges] [--only int8|bf16]
// The data are random int8, and bf16 of magnitudes 2^-8 .. 2^4 with either sign (sums that grow,
// cancel and round); --edges draws bf16 from the edge values and random bits instead (zeros,
// subnormals, infs, NaNs, the largest values: overflow and NaN in the sums), for the check.
// --only runs one side (for profilers: docs/performance.md); the ratio column is then empty.
#include "sim/fp.h"
#include "tests/support/fp_values.h"

#include "tests/bench/bench_fp_arrays.h" // generated: the Vfp_array_n<N> headers

#include <verilated.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

namespace
{

// Verilator holds ports of up to 64 bits in integers and wider ones in VlWide words.
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
template <typename T> uint32_t word(const T &port, std::size_t i)
{
    return uint32_t(uint64_t(port) >> (32 * i));
}
template <std::size_t W> uint32_t word(const VlWide<W> &port, std::size_t i) { return port.at(i); }

// One run's data: the weight tile (row r, column c) and each cycle's activations, 16 bits each
// (int8 sign-extended), both N words a line.
struct Stimulus {
    uint32_t n = 0;
    bool bf16 = false;
    std::vector<uint16_t> w, a;
    size_t cycles() const { return a.size() / n; }
};

uint16_t draw(tpu_rng *r, bool bf16, bool edges)
{
    if (!bf16)
        return uint16_t(int16_t(rng_int8(r)));
    if (edges)
        return rng_bf16(r);
    const uint32_t e = 127 - 8 + rng_below(r, 13);
    return uint16_t(rng_below(r, 2) << 15 | e << 7 | rng_below(r, 128));
}

Stimulus make_stimulus(uint32_t n, bool bf16, bool edges, size_t cycles, uint64_t seed)
{
    Stimulus s;
    s.n = n;
    s.bf16 = bf16;
    tpu_rng r = {seed};
    s.w.resize(size_t(n) * n);
    for (uint16_t &x : s.w)
        x = draw(&r, bf16, edges);
    s.a.resize(cycles * n);
    for (uint16_t &x : s.a)
        x = draw(&r, bf16, edges);
    return s;
}

// The array's registers, a cycle at a time, as fp_array.v computes them.
struct Model {
    uint32_t n;
    bool bf16;
    std::vector<uint16_t> a, w; // row-major, N x N
    std::vector<uint32_t> p;

    Model(uint32_t n_, bool bf16_)
        : n(n_), bf16(bf16_), a(size_t(n_) * n_), w(size_t(n_) * n_), p(size_t(n_) * n_)
    {
    }
    uint32_t mac(uint32_t p_in, uint16_t x, uint16_t y) const
    {
        if (bf16)
            return tpusim_fp32_add(p_in, tpusim_bf16_mul(x, y));
        // a: 9-bit two's complement, w: 8-bit (fp_array.v, as tpu_pe)
        const int32_t sa = int32_t(x & 0x1ff) - (x & 0x100 ? 0x200 : 0);
        return p_in + uint32_t(sa * int32_t(int8_t(y & 0xff)));
    }
    void step(const uint16_t *a_in, const uint16_t *w_in, bool w_en)
    {
        for (uint32_t r = n; r-- > 0;) // bottom up and right to left: each reads old values
            for (uint32_t c = n; c-- > 0;) {
                const size_t i = size_t(r) * n + c;
                const uint16_t ai = c ? a[i - 1] : a_in[r];
                p[i] = mac(r ? p[i - n] : 0, ai, w[i]);
                if (w_en)
                    w[i] = r ? w[i - n] : w_in[c];
                a[i] = ai;
            }
    }
};

VerilatedContext *context()
{
    static VerilatedContext *ctx = [] {
        VerilatedContext *c = new VerilatedContext;
        c->randReset(0);
        return c;
    }();
    return ctx;
}

struct Run {
    double rate = 0; // simulated cycles per second
    std::string error;
};

// Loads the tile (row N-1 first, so that after N shifts row r sits in array row r), streams the
// activations, then checks every cycle's bottom row against the model.
template <class V> Run run(const Stimulus &s)
{
    const uint32_t n = s.n;
    const size_t words = (16 * n + 31) / 32 + 1;
    std::vector<uint32_t> a_w(words), w_w(words), zero(words);
    auto pack = [&](std::vector<uint32_t> &dst, const uint16_t *src) {
        std::fill(dst.begin(), dst.end(), 0);
        for (uint32_t i = 0; i < n; i++)
            dst[i / 2] |= uint32_t(src[i]) << (16 * (i % 2));
    };
    std::unique_ptr<V> v(new V(context(), "TOP"));
    v->bf16 = s.bf16;
    const size_t cycles = s.cycles(), total = n + cycles;
    std::vector<uint32_t> out(total * n);

    const auto t0 = std::chrono::steady_clock::now();
    for (size_t t = 0; t < total; t++) {
        const bool load = t < n;
        if (load) {
            pack(w_w, &s.w[size_t(n - 1 - t) * n]);
            put(v->w_in, w_w.data());
            put(v->a_in, zero.data());
        } else {
            pack(a_w, &s.a[(t - n) * n]);
            put(v->a_in, a_w.data());
        }
        v->w_en = load;
        v->clk = 0;
        v->eval();
        v->clk = 1;
        v->eval();
        for (uint32_t c = 0; c < n; c++)
            out[t * n + c] = word(v->p_out, c);
    }
    Run res;
    res.rate = double(total) /
               std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    v->final();

    Model m(n, s.bf16);
    const std::vector<uint16_t> none(n, 0);
    for (size_t t = 0; t < total && res.error.empty(); t++) {
        const bool load = t < n;
        m.step(load ? none.data() : &s.a[(t - n) * n],
               load ? &s.w[size_t(n - 1 - t) * n] : none.data(), load);
        for (uint32_t c = 0; c < n; c++)
            if (out[t * n + c] != m.p[size_t(n - 1) * n + c]) {
                char msg[160];
                std::snprintf(msg, sizeof msg, "%s, cycle %zu, column %u: 0x%08x, the model 0x%08x",
                              s.bf16 ? "bf16" : "int8", t, c, out[t * n + c],
                              m.p[size_t(n - 1) * n + c]);
                res.error = msg;
                break;
            }
    }
    return res;
}

struct Entry {
    uint32_t n;
    Run (*run)(const Stimulus &);
};
#define BENCH_FP_ENTRY(N) {N, run<Vfp_array_n##N>},
const Entry kArrays[] = {BENCH_FP_FOR_EACH_ARRAY(BENCH_FP_ENTRY)};
#undef BENCH_FP_ENTRY

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

int usage()
{
    std::fprintf(stderr, "usage: bench_fp [--array N,...] [--cycles C] [--repeat R] [--edges] "
                         "[--only int8|bf16]\n");
    return 2;
}

} // namespace

int main(int argc, char **argv)
{
    std::vector<uint32_t> arrays;
    for (const Entry &e : kArrays)
        arrays.push_back(e.n);
    unsigned long cycles = 200000, repeat = 5;
    bool edges = false, do8 = true, do16 = true;
    for (int i = 1; i < argc; i++) {
        const std::string arg = argv[i];
        if (arg == "--edges") {
            edges = true;
            continue;
        }
        if (i + 1 >= argc)
            return usage();
        const std::string val = argv[++i];
        char *end;
        if (arg == "--only") {
            if (val != "int8" && val != "bf16")
                return usage();
            do8 = val == "int8";
            do16 = val == "bf16";
            continue;
        }
        if (arg == "--array") {
            arrays.clear();
            for (size_t pos = 0; pos <= val.size();) {
                const size_t comma = std::min(val.find(',', pos), val.size());
                const unsigned long n =
                    std::strtoul(val.substr(pos, comma - pos).c_str(), &end, 10);
                if (*end || n == 0)
                    return usage();
                arrays.push_back(uint32_t(n));
                pos = comma + 1;
            }
            continue;
        }
        const unsigned long x = std::strtoul(val.c_str(), &end, 10);
        if (*end || x == 0)
            return usage();
        if (arg == "--cycles")
            cycles = x;
        else if (arg == "--repeat")
            repeat = std::min(x, 99ul);
        else
            return usage();
    }

    std::printf("fp_array: N x N multiply-add lanes, int8 vs bf16 (rtl/tpu_fp.vh), %lu cycles, "
                "%s data, median of %lu\n",
                cycles, edges ? "edge-value" : "random", repeat);
    std::printf("%5s %14s %14s %10s\n", "N", "int8 cyc/s", "bf16 cyc/s", "bf16/int8");
    for (uint32_t n : arrays) {
        const Entry *e = nullptr;
        for (const Entry &x : kArrays)
            if (x.n == n)
                e = &x;
        if (!e) {
            std::printf("%5u (not built)\n", n);
            continue;
        }
        const Stimulus s8 = make_stimulus(n, false, edges, cycles, 1),
                       s16 = make_stimulus(n, true, edges, cycles, 2);
        std::vector<double> r8, r16;
        for (unsigned long i = 0; i < repeat; i++)
            for (const Stimulus *s : {&s8, &s16}) {
                if (!(s->bf16 ? do16 : do8))
                    continue;
                const Run r = e->run(*s);
                if (!r.error.empty()) {
                    std::fprintf(stderr, "bench_fp: N = %u: the array differs from the model: %s\n",
                                 n, r.error.c_str());
                    return 1;
                }
                (s->bf16 ? r16 : r8).push_back(r.rate);
            }
        const double m8 = do8 ? median(r8) : 0, m16 = do16 ? median(r16) : 0;
        char ratio[16] = "";
        if (do8 && do16)
            std::snprintf(ratio, sizeof ratio, "%.1f%%", 100 * m16 / m8);
        std::printf("%5u %14.0f %14.0f %10s\n", n, m8, m16, ratio);
        std::fflush(stdout);
    }
    return 0;
}
