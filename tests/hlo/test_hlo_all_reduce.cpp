// test_hlo_all_reduce.cpp - all-reduce in the hlo layer: the module's device count, parsing and
// printing the op's attributes, the checker's rules, the evaluator without a hook (one device
// per group) and through one, and hlo_all_reduce_combine's order and rounding.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "hlo/hlo.h"
#include "tests/support/hlo_test.h"

namespace
{

using namespace hlo_test;

const std::string kAdd = "add {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n"
                         "  ROOT s = f32[] add(x, y)\n}\n";

// A module of `devices` partitions whose ENTRY all-reduces a f32[3] and a f32[] with `attrs`.
std::string module(int devices, const std::string &attrs)
{
    return "HloModule m, num_partitions=" + std::to_string(devices) + "\n" + kAdd +
           "ENTRY main {\n  a = f32[3] parameter(0)\n  b = f32[] parameter(1)\n"
           "  ROOT r = (f32[3], f32[]) all-reduce(a, b), to_apply=add" +
           attrs + "\n}\n";
}

TEST(HloAllReduce, ParsesChecksAndPrints)
{
    const std::string text = module(8, ", channel_id=1, replica_groups={{0,1,2,3},{4,5,6,7}}, "
                                       "use_global_device_ids=true, metadata={op_name=\"psum\"}");
    Parsed p(text);
    ASSERT_NE(p.m, nullptr) << p.err.msg;
    hlo_error err{};
    ASSERT_EQ(hlo_check(p.m, "t.hlo", &err), 0) << err.msg;
    EXPECT_EQ(p.m->replica_count, 1);
    EXPECT_EQ(p.m->num_partitions, 8);
    EXPECT_EQ(hlo_devices(p.m), 8);
    const hlo_computation &c = p.comp("main");
    const hlo_instr &in = c.instrs[c.root];
    ASSERT_EQ(in.opcode, HLO_OP_ALL_REDUCE);
    EXPECT_EQ(in.n_replica_groups, 2);
    EXPECT_EQ(in.channel_id, 1);
    EXPECT_TRUE(in.use_global_device_ids);
    EXPECT_EQ(hlo_all_reduce_group_size(p.m, &in), 4);
    hlo_text t{};
    hlo_print_computation(&t, p.m, p.m->entry, nullptr);
    EXPECT_NE(
        std::string(t.s).find("all-reduce(a, b), to_apply=add, channel_id=1, "
                              "replica_groups={{0,1,2,3},{4,5,6,7}}, use_global_device_ids=true"),
        std::string::npos)
        << t.s;
    hlo_text_free(&t);

    // XLA's iota form, and the header's replica_count.
    Parsed q("HloModule m, replica_count=4\n" + kAdd +
             "ENTRY main {\n  a = f32[3] parameter(0)\n"
             "  ROOT r = f32[3] all-reduce(a), replica_groups=[2,2]<=[4], to_apply=add\n}\n");
    ASSERT_NE(q.m, nullptr) << q.err.msg;
    ASSERT_EQ(hlo_check(q.m, "t.hlo", &err), 0) << err.msg;
    const hlo_instr &iq = q.comp("main").instrs[1];
    ASSERT_EQ(iq.n_replica_groups, 2);
    EXPECT_EQ(iq.replica_groups[1].v[0], 2);
    EXPECT_EQ(iq.replica_groups[1].v[1], 3);
    EXPECT_EQ(hlo_devices(q.m), 4);
}

TEST(HloAllReduce, CheckerRules)
{
    struct Case {
        std::string text, want;
    };
    const std::string r = "all-reduce: ";
    const std::vector<Case> cases = {
        {module(4, ", replica_groups={{0,1},{2}}"), "replica group 1 has 1 ids, group 0 has 2"},
        {module(4, ", replica_groups={{0,4}}"), "replica id 4, but the module runs on 4 devices"},
        {module(4, ", replica_groups={{0,1},{1,2}}"), "replica id 1 is in replica_groups twice"},
        {module(4, ", use_global_device_ids=true"), "use_global_device_ids needs a channel_id"},
        {"HloModule m\n" + kAdd +
             "ENTRY main {\n  a = f32[3] parameter(0)\n  b = s32[] parameter(1)\n"
             "  ROOT r = (f32[3], s32[]) all-reduce(a, b), to_apply=add\n}\n",
         "operand 1 is s32, operand 0 f32"},
        {"HloModule m\n" + kAdd +
             "ENTRY main {\n  a = f32[3] parameter(0)\n"
             "  ROOT r = f32[2] all-reduce(a), to_apply=add\n}\n",
         "result 0 is f32[2], must be its operand's f32[3]"},
    };
    for (const Case &c : cases) {
        Parsed p(c.text);
        ASSERT_NE(p.m, nullptr) << p.err.msg;
        hlo_error err{};
        EXPECT_EQ(hlo_check(p.m, "t.hlo", &err), -1) << c.text;
        EXPECT_EQ(err.msg, at(c.text, "r =") + r + c.want);
    }
}

TEST(HloAllReduce, EvaluatesAsIdentityOnlyForGroupsOfOne)
{
    auto params = [] {
        return std::vector<hlo_array *>{make(HLO_F32, {3}, {1, -2, 0.5}), make(HLO_F32, {}, {7})};
    };
    for (const std::string &text :
         {module(1, ""), module(4, ", replica_groups={{0},{1},{2},{3}}")}) {
        Result r = run(text, params());
        ASSERT_EQ(r.err, "") << text;
        expect_same(r.out[0], {1, -2, 0.5});
        expect_same(r.out[1], {7});
    }
    const std::string text = module(8, ", replica_groups={{0,1,2,3,4,5,6,7}}");
    EXPECT_EQ(run(text, params()).err,
              at(text, "r =") +
                  "all-reduce: groups of 8 devices, but nothing runs the other devices (no "
                  "all_reduce hook)");
}

// Stands in for the runtime: this device is replica 0 of three whose other operands are given.
struct Peers {
    const hlo_module *m;
    std::vector<std::vector<hlo_array *>> others;
};

int peers_hook(void *ctx, const hlo_instr *in, hlo_array *const *ops, int n_ops, hlo_array **outs,
               int n_outs, hlo_error *err)
{
    Peers *p = (Peers *)ctx;
    EXPECT_EQ(n_ops, n_outs);
    std::vector<hlo_array *const *> replicas = {ops};
    for (const auto &o : p->others)
        replicas.push_back(o.data());
    return hlo_all_reduce_combine(p->m, "t.hlo", in, replicas.data(), (int)replicas.size(), outs,
                                  err);
}

TEST(HloAllReduce, CombinesThroughTheHookInReplicaOrder)
{
    // f32: (1 + 2^-24) rounds to 1 (ties to even), then + 2^-24 again: 1; in another order the
    // two small ones would add first and give 1 + 2^-23. Subnormals flush as in the evaluator.
    const double e = 1.0 / (1 << 24), sub = 1e-40;
    const std::string text = module(3, "");
    Parsed p(text);
    ASSERT_NE(p.m, nullptr) << p.err.msg;
    Peers peers{p.m,
                {{make(HLO_F32, {3}, {e, 10, sub}), make(HLO_F32, {}, {2})},
                 {make(HLO_F32, {3}, {e, -20, sub}), make(HLO_F32, {}, {3})}}};
    hlo_eval_hooks hooks{};
    hooks.ctx = &peers;
    hooks.all_reduce = peers_hook;
    std::vector<hlo_array *> params = {make(HLO_F32, {3}, {1, 0.5, sub}), make(HLO_F32, {}, {1})};
    hlo_array **outs = nullptr;
    int n = 0;
    hlo_error err{};
    ASSERT_EQ(hlo_eval_with(p.m, "t.hlo", params.data(), 2, &hooks, &outs, &n, &err), 0) << err.msg;
    ASSERT_EQ(n, 2);
    expect_same(values(outs[0]), {1, -9.5, 0});
    expect_same(values(outs[1]), {6});
    hlo_arrays_free(outs, n);

    // A to_apply that is not a plain op runs through the evaluator: max(x, y) * 1.
    const std::string maxf = "mx {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n"
                             "  m = f32[] maximum(x, y)\n  one = f32[] constant(1)\n"
                             "  ROOT s = f32[] multiply(m, one)\n}\n";
    const std::string text2 = "HloModule m, replica_count=3\n" + maxf +
                              "ENTRY main {\n  a = f32[3] parameter(0)\n"
                              "  ROOT r = f32[3] all-reduce(a), to_apply=mx\n}\n";
    Parsed p2(text2);
    ASSERT_NE(p2.m, nullptr) << p2.err.msg;
    ASSERT_EQ(hlo_check(p2.m, "t.hlo", &err), 0) << err.msg;
    Peers peers2{p2.m, {{make(HLO_F32, {3}, {5, 0, -1})}, {make(HLO_F32, {3}, {2, 3, -4})}}};
    hooks.ctx = &peers2;
    hlo_array *a = make(HLO_F32, {3}, {1, 2, -3});
    ASSERT_EQ(hlo_eval_with(p2.m, "t.hlo", &a, 1, &hooks, &outs, &n, &err), 0) << err.msg;
    expect_same(values(outs[0]), {5, 3, -1});
    hlo_arrays_free(outs, n);
    hlo_array_free(a);
    for (auto *ps : {&peers, &peers2})
        for (auto &o : ps->others)
            for (hlo_array *x : o)
                hlo_array_free(x);
    for (hlo_array *x : params)
        hlo_array_free(x);
}

} // namespace
