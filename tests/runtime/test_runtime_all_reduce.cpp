// test_runtime_all_reduce.cpp - a data-parallel package (num_partitions = R) on a chip of R
// cores: each replica's GEMM on its core, the all-reduce's sums on the cores against a fold done
// here in replica order and against the host's (edge values), bit-identical replicas,
// reproducible cycles, the all-reduce's layer; a maximum combined on the host; a replica that
// ends without an all-reduce releases its peers with an error; the package's replica count
// against the chip's cores and the batches given.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "compiler/tpuc.h"
#include "runtime/tpurt.h"
#include "sim/tpusim.h"

namespace
{

bool has_chip(uint32_t n, uint32_t cores)
{
    uint32_t arrays[64], chip_cores[64];
    const int count = tpusim_chips(arrays, chip_cores, 64);
    for (int i = 0; i < count; i++)
        if (arrays[i] == n && chip_cores[i] == cores)
            return true;
    return false;
}

// tpuc's bf16 package of text for an array of 4 (the test fails when it does not compile).
struct Compiled {
    tpub_package pkg{};
    bool ok = false;
    explicit Compiled(const std::string &text)
    {
        char dir[] = "/tmp/test_runtime_all_reduce.XXXXXX";
        EXPECT_NE(mkdtemp(dir), nullptr);
        const std::string path = std::string(dir) + "/m.hlo";
        FILE *f = fopen(path.c_str(), "w");
        EXPECT_NE(f, nullptr);
        fputs(text.c_str(), f);
        fclose(f);
        tpuc_options o = {};
        o.hlo_path = path.c_str();
        o.array_n = 4;
        o.precision = TPUC_BF16;
        hlo_error err{};
        ok = tpuc_compile(&o, &pkg, &err) == 0;
        EXPECT_TRUE(ok) << err.msg;
        remove(path.c_str());
        rmdir(dir);
    }
    ~Compiled()
    {
        if (ok)
            tpub_free(&pkg);
    }
};

struct Runtime {
    tpusim_config device{};
    tpurt *rt = nullptr;
    char err[512] = "";
    tpurt_status st;
    Runtime(const tpub_package &pkg, uint32_t cores)
    {
        tpurt_options o;
        tpurt_options_default(&o);
        device.cores = cores;
        o.device = &device;
        st = tpurt_open(&pkg, &o, &rt, err, sizeof err);
    }
    ~Runtime() { tpurt_close(rt); }
};

const std::string kAdd = "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
                         "  ROOT s = f32[] add(a, b)\n}\n";

// Each replica's GEMM d = x w, then the all-reduce of (d, x): outputs d and both sums.
std::string step(uint32_t replicas)
{
    return "HloModule m, num_partitions=" + std::to_string(replicas) + "\n" + kAdd +
           "ENTRY e {\n  x = f32[4,8] parameter(0)\n  w = f32[8,4] parameter(1)\n"
           "  d = f32[4,4] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
           "  r = (f32[4,4], f32[4,8]) all-reduce(d, x), channel_id=1, replica_groups={}, "
           "use_global_device_ids=true, to_apply=add\n"
           "  r0 = f32[4,4] get-tuple-element(r), index=0\n"
           "  r1 = f32[4,8] get-tuple-element(r), index=1\n"
           "  ROOT t = (f32[4,4], f32[4,4], f32[4,8]) tuple(d, r0, r1)\n}\n";
}

// R batches: inputs x (varying per replica, with values whose order of addition matters) and
// w; outputs d, sum of d, sum of x.
struct Batches {
    std::vector<std::vector<float>> x, w, d, sd, sx;
    tpurt_status run(tpurt *rt, uint32_t n)
    {
        x.assign(n, std::vector<float>(32));
        w.assign(n, std::vector<float>(32));
        d.assign(n, std::vector<float>(16));
        sd = d;
        sx = x;
        std::vector<std::vector<const void *>> in(n);
        std::vector<std::vector<void *>> out(n);
        std::vector<const void *const *> ins(n);
        std::vector<void *const *> outs(n);
        for (uint32_t i = 0; i < n; i++) {
            for (int k = 0; k < 32; k++) {
                x[i][k] = (k % 3 == 0 ? 1e8f : 1.0f) * (float)((int)(i * 7 + k) % 11 - 5) + 0.375f;
                w[i][k] = 0.25f * (float)((k + (int)i) % 5 - 2);
            }
            in[i] = {x[i].data(), w[i].data()};
            out[i] = {d[i].data(), sd[i].data(), sx[i].data()};
            ins[i] = in[i].data();
            outs[i] = out[i].data();
        }
        return tpurt_run_batches(rt, n, ins.data(), 2, outs.data(), 3);
    }
};

// The fold in replica order: ((v0 + v1) + v2) + ... in float.
std::vector<float> fold(const std::vector<std::vector<float>> &v)
{
    std::vector<float> s = v[0];
    for (size_t r = 1; r < v.size(); r++)
        for (size_t k = 0; k < s.size(); k++)
            s[k] += v[r][k];
    return s;
}

bool same_bits(const std::vector<float> &a, const std::vector<float> &b)
{
    return a.size() == b.size() && !std::memcmp(a.data(), b.data(), a.size() * sizeof(float));
}

class RuntimeAllReduce : public ::testing::TestWithParam<uint32_t>
{
};

TEST_P(RuntimeAllReduce, ReplicasSumInOrderAndAgree)
{
    const uint32_t R = GetParam();
    if (!has_chip(4, R))
        GTEST_SKIP() << "no 4x" << R << " chip built";
    Compiled c(step(R));
    ASSERT_TRUE(c.ok);
    Runtime rt(c.pkg, R);
    ASSERT_EQ(rt.st, TPURT_OK) << rt.err;
    EXPECT_EQ(tpurt_replicas(rt.rt), R);
    Batches b;
    ASSERT_EQ(b.run(rt.rt, R), TPURT_OK) << tpurt_last_error(rt.rt);
    const std::vector<float> sd = fold(b.d), sx = fold(b.x);
    for (uint32_t i = 0; i < R; i++) {
        EXPECT_TRUE(same_bits(b.sd[i], sd)) << "replica " << i;
        EXPECT_TRUE(same_bits(b.sx[i], sx)) << "replica " << i;
    }
    // The replicas' GEMMs ran on their cores side by side, and so did the all-reduce's slices
    // (48 elements, 12 rows of 4: one slice per core); the cycles repeat.
    const uint32_t per_core = R > 1 ? 2 : 1;
    tpurt_stats s1, s2;
    ASSERT_EQ(tpurt_get_stats(rt.rt, &s1), TPURT_OK);
    EXPECT_EQ(s1.submissions, per_core * R);
    for (uint32_t k = 0; k < R; k++) {
        tpurt_core_stats cs;
        ASSERT_EQ(tpurt_get_core_stats(rt.rt, k, &cs), TPURT_OK);
        EXPECT_EQ(cs.submissions, per_core) << "core " << k;
    }
    ASSERT_EQ(b.run(rt.rt, R), TPURT_OK) << tpurt_last_error(rt.rt);
    ASSERT_EQ(tpurt_get_stats(rt.rt, &s2), TPURT_OK);
    EXPECT_EQ(s2.device_cycles, 2 * s1.device_cycles);
    // The sums are the cores' work, a layer of their own after the GEMM: none on the host. One
    // replica has nothing to add: its all-reduce is a copy on the host, and no layer.
    ASSERT_EQ(tpurt_n_layers(rt.rt), R > 1 ? 2u : 1u);
    if (R > 1) {
        tpurt_layer l;
        ASSERT_EQ(tpurt_get_layer(rt.rt, 1, &l), TPURT_OK);
        EXPECT_EQ(l.kind, TPURT_ALL_REDUCE);
        EXPECT_STREQ(l.name, "r");
        EXPECT_EQ(l.m, R);
        EXPECT_EQ(l.n, 16u + 32u);
        EXPECT_EQ(l.flags, uint32_t{TPU_REDUCE_F32});
        EXPECT_EQ(l.submissions, 2u * R);
        EXPECT_GT(l.cycles, 0u);
        EXPECT_EQ(l.bytes, (16u + 32u) * 4 * (R + 1)); // R reads and one write of each element
        EXPECT_GT(l.bound_cycles, 0.0);
    }
    for (uint32_t i = 0; i < tpurt_n_host_ops(rt.rt); i++) {
        tpurt_host_op op;
        ASSERT_EQ(tpurt_get_host_op(rt.rt, i, &op), TPURT_OK);
        if (R > 1) {
            EXPECT_STRNE(op.opcode, "all-reduce");
        }
    }

    // Exactly R batches.
    if (R > 1) {
        EXPECT_EQ(b.run(rt.rt, 1), TPURT_E_ARG);
        EXPECT_NE(strstr(tpurt_last_error(rt.rt), "the package runs as"), nullptr)
            << tpurt_last_error(rt.rt);
    }
}

INSTANTIATE_TEST_SUITE_P(Chips, RuntimeAllReduce, ::testing::Values(1u, 2u, 4u, 8u),
                         [](const ::testing::TestParamInfo<uint32_t> &p) {
                             return "R" + std::to_string(p.param);
                         });

// An R-replica package of no device segment: one all-reduce (to_apply op) of a 257-element
// f32 vector (a short last row); run once on inputs x, its outputs in y.
std::string sum_text(const std::string &op, uint32_t R)
{
    return "HloModule m, num_partitions=" + std::to_string(R) +
           "\nf {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] " + op +
           "(a, b)\n}\nENTRY e {\n  x = f32[257] parameter(0)\n"
           "  ROOT r = f32[257] all-reduce(x), replica_groups={}, to_apply=f\n}\n";
}

struct Sum {
    Compiled c;
    Runtime rt;
    std::vector<std::vector<float>> y;
    Sum(const std::string &op, uint32_t R, const std::vector<std::vector<float>> &x)
        : c(sum_text(op, R)), rt(c.pkg, R), y(R, std::vector<float>(257))
    {
        EXPECT_EQ(rt.st, TPURT_OK) << rt.err;
        std::vector<const void *> in(R);
        std::vector<void *> out(R);
        std::vector<const void *const *> ins(R);
        std::vector<void *const *> outs(R);
        for (uint32_t i = 0; i < R; i++) {
            in[i] = x[i].data();
            out[i] = y[i].data();
            ins[i] = &in[i];
            outs[i] = &out[i];
        }
        if (rt.rt) {
            EXPECT_EQ(tpurt_run_batches(rt.rt, R, ins.data(), 1, outs.data(), 1), TPURT_OK)
                << tpurt_last_error(rt.rt);
        }
    }
};

// fp32 edge values (+-0, +-inf, NaNs, subnormals, the largest finite values, cancelling pairs)
// summed on the cores: the host's fold (hlo_all_reduce_combine) bit for bit, but that every NaN
// is the canonical 7FC00000, the device's (docs/isa.md "Floating point").
TEST(RuntimeAllReduceSums, EdgeValuesAsTheHostFolds)
{
    const uint32_t R = 8;
    if (!has_chip(4, R))
        GTEST_SKIP() << "no 4x8 chip built";
    const uint32_t edges[] = {0x00000000u, 0x80000000u, 0x7f800000u, 0xff800000u,
                              0x7fc00001u, 0xffc00000u, 0x7f800001u, 0x00000001u,
                              0x807fffffu, 0x00800000u, 0x7f7fffffu, 0xff7fffffu,
                              0x3f800000u, 0xbf800000u, 0x33800000u, 0x4b800000u};
    std::vector<std::vector<float>> x(R, std::vector<float>(257));
    uint64_t seed = 5;
    for (uint32_t i = 0; i < R; i++)
        for (uint32_t e = 0; e < 257; e++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            const uint32_t bits = edges[(seed >> 33) % 16] ^ (i % 2 && e % 3 ? 0x80000000u : 0);
            std::memcpy(&x[i][e], &bits, 4);
        }
    Sum run("add", R, x);
    ASSERT_NE(run.rt.rt, nullptr);
    // The host's fold of the same module's all-reduce.
    const std::string text = sum_text("add", R);
    hlo_error err{};
    hlo_module *m = hlo_parse(text.c_str(), text.size(), "t", &err);
    ASSERT_NE(m, nullptr) << err.msg;
    ASSERT_EQ(hlo_check(m, "t", &err), 0) << err.msg;
    const hlo_computation *entry = hlo_entry(m);
    const int64_t dims[1] = {257};
    std::vector<hlo_array *> arrays(R);
    std::vector<hlo_array *const *> replicas(R);
    for (uint32_t i = 0; i < R; i++) {
        arrays[i] = hlo_array_new(HLO_F32, 1, dims);
        std::memcpy(arrays[i]->data, x[i].data(), 257 * 4);
        replicas[i] = &arrays[i];
    }
    hlo_array *sum = nullptr;
    EXPECT_EQ(hlo_all_reduce_combine(m, "t", &entry->instrs[entry->root], replicas.data(), (int)R,
                                     &sum, &err),
              0)
        << err.msg;
    for (uint32_t i = 0; sum && i < R; i++)
        for (uint32_t e = 0; e < 257; e++) {
            uint32_t want, got;
            std::memcpy(&want, static_cast<const float *>(sum->data) + e, 4);
            std::memcpy(&got, &run.y[i][e], 4);
            if ((want & 0x7f800000u) == 0x7f800000u && (want & 0x7fffffu))
                want = 0x7fc00000u;
            ASSERT_EQ(got, want) << "replica " << i << ", element " << e;
        }
    tpurt_layer l;
    EXPECT_EQ(tpurt_n_layers(run.rt.rt), 1u);
    EXPECT_EQ(tpurt_get_layer(run.rt.rt, 0, &l), TPURT_OK);
    EXPECT_EQ(l.kind, TPURT_ALL_REDUCE);
    EXPECT_EQ(l.submissions, R);
    hlo_array_free(sum);
    for (hlo_array *a : arrays)
        hlo_array_free(a);
    hlo_module_free(m);
}

// A maximum is no sum: the host combines it, as host work.
TEST(RuntimeAllReduceSums, AMaximumStaysOnTheHost)
{
    if (!has_chip(4, 2))
        GTEST_SKIP() << "no 4x2 chip built";
    std::vector<std::vector<float>> x(2, std::vector<float>(257));
    for (uint32_t e = 0; e < 257; e++) {
        x[0][e] = (float)e;
        x[1][e] = 300.0f - (float)e;
    }
    Sum run("maximum", 2, x);
    ASSERT_NE(run.rt.rt, nullptr);
    for (uint32_t e = 0; e < 257; e++)
        EXPECT_EQ(run.y[1][e], e > 150 ? (float)e : 300.0f - (float)e);
    EXPECT_EQ(tpurt_n_layers(run.rt.rt), 0u);
    tpurt_host_op op;
    ASSERT_EQ(tpurt_n_host_ops(run.rt.rt), 1u);
    ASSERT_EQ(tpurt_get_host_op(run.rt.rt, 0, &op), TPURT_OK);
    EXPECT_STREQ(op.opcode, "all-reduce");
    EXPECT_EQ(op.count, 2u);
}

TEST(RuntimeAllReduceErrors, MoreReplicasThanCores)
{
    if (!has_chip(4, 2))
        GTEST_SKIP() << "no 4x2 chip built";
    Compiled c(step(8));
    ASSERT_TRUE(c.ok);
    Runtime rt(c.pkg, 2);
    EXPECT_EQ(rt.st, TPURT_E_PACKAGE);
    EXPECT_NE(strstr(rt.err, "the host program runs as 8 replicas, but the device has 2 cores"),
              nullptr)
        << rt.err;
}

TEST(RuntimeAllReduceErrors, AReplicaThatEndsReleasesItsPeers)
{
    if (!has_chip(4, 2))
        GTEST_SKIP() << "no 4x2 chip built";
    // Replica i all-reduces n_i times: with n = (2, 1), replica 1 ends while replica 0 waits
    // at its second all-reduce.
    Compiled c("HloModule m, num_partitions=2\n" + kAdd +
               "cond {\n  s = (s32[], s32[], f32[4]) parameter(0)\n"
               "  i = s32[] get-tuple-element(s), index=0\n"
               "  n = s32[] get-tuple-element(s), index=1\n"
               "  ROOT lt = pred[] compare(i, n), direction=LT\n}\n"
               "body {\n  s = (s32[], s32[], f32[4]) parameter(0)\n"
               "  i = s32[] get-tuple-element(s), index=0\n"
               "  n = s32[] get-tuple-element(s), index=1\n"
               "  x = f32[4] get-tuple-element(s), index=2\n"
               "  one = s32[] constant(1)\n  i2 = s32[] add(i, one)\n"
               "  x2 = f32[4] all-reduce(x), replica_groups={}, to_apply=add\n"
               "  ROOT t = (s32[], s32[], f32[4]) tuple(i2, n, x2)\n}\n"
               "ENTRY e {\n  x = f32[4] parameter(0)\n  n = s32[] parameter(1)\n"
               "  zero = s32[] constant(0)\n"
               "  s = (s32[], s32[], f32[4]) tuple(zero, n, x)\n"
               "  w = (s32[], s32[], f32[4]) while(s), condition=cond, body=body\n"
               "  ROOT y = f32[4] get-tuple-element(w), index=2\n}\n");
    ASSERT_TRUE(c.ok);
    Runtime rt(c.pkg, 2);
    ASSERT_EQ(rt.st, TPURT_OK) << rt.err;
    const float x[2][4] = {{1, 2, 3, 4}, {10, 20, 30, 40}};
    auto run = [&](int32_t n0, int32_t n1, float(*y)[4]) {
        const int32_t n[2] = {n0, n1};
        const void *in0[2] = {x[0], &n[0]}, *in1[2] = {x[1], &n[1]};
        void *out0[1] = {y[0]}, *out1[1] = {y[1]};
        const void *const *ins[2] = {in0, in1};
        void *const *outs[2] = {out0, out1};
        return tpurt_run_batches(rt.rt, 2, ins, 2, outs, 1);
    };
    float y[2][4];
    ASSERT_EQ(run(2, 2, y), TPURT_OK) << tpurt_last_error(rt.rt);
    for (int r = 0; r < 2; r++)
        EXPECT_EQ(y[r][3], 88.0f); // (4 + 40) twice
    EXPECT_EQ(run(2, 1, y), TPURT_E_EVAL);
    EXPECT_NE(strstr(tpurt_last_error(rt.rt), "all-reduce: replica 1 ended without reaching it"),
              nullptr)
        << tpurt_last_error(rt.rt);
    // The runtime stays usable.
    ASSERT_EQ(run(1, 1, y), TPURT_OK) << tpurt_last_error(rt.rt);
    EXPECT_EQ(y[0][0], 11.0f);
}

} // namespace
