// cnn_hlo.h - small CNNs as HLO text with their weights as literals, for the convolution tests
// of the compiler (compile only, on the golden model, on the device): convolutions in
// PyTorch/XLA's labels (NCHW, OIHW: bf01_oi01->bf01) or JAX's (NHWC, HWIO: b01f_01io->b01f),
// each with an optional bias, ReLU and max pooling (before or after the ReLU), then optionally
// flattened (JAX's NHWC transposed to NCHW first, as a port of a PyTorch model does) into a
// dense layer; or the same in integers (s8 x s8 -> s32), exact on the device. A layer may dilate
// its input (lhs_dilate: a transposed convolution, with negative padding at the bottom and right)
// and take a kernel computed at run time (the constant scaled, in integers bounded, by an element
// of the input), reversed in its spatial dimensions as an input gradient's is.
#ifndef TPU_TESTS_SUPPORT_CNN_HLO_H
#define TPU_TESTS_SUPPORT_CNN_HLO_H

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

namespace cnn_hlo
{

// One convolution and what follows it.
struct Layer {
    uint32_t cout, kh, kw;
    uint32_t sh = 1, sw = 1, pt = 0, pb = 0, pl = 0, pr = 0;
    uint32_t groups = 1, dh = 1, dw = 1; // feature_group_count, the kernel's dilation (rhs_dilate)
    bool bias = true, relu = true;
    uint32_t ph = 0, pw = 0, psh = 0, psw = 0; // max pooling when ph > 0
    bool pool_first = false;                   // pooling before the ReLU
    uint32_t lh = 1, lw = 1;                   // the input's dilation (lhs_dilate)
    uint32_t cut = 0;     // taken off the bottom and right padding (negative below 0)
    bool runtime = false; // the kernel computed at run time from the input
    bool reverse = false; // (with runtime) reversed in its spatial dimensions
    // batch_group_count, as a weight gradient's: the batch splits into this many groups, output
    // channel o reading group o / (cout / batch_groups) of it; the result's batch is one group's.
    uint32_t batch_groups = 1;
    // Batch norm in inference after the bias, as torch-mlir spells it: (y - mean) * rsqrt(var +
    // eps) * gamma + beta, each a per-channel constant (float nets only).
    bool bn = false;
};

struct Net {
    uint32_t batch, h, w, c;
    std::vector<Layer> layers;
    bool nchw = false;    // PyTorch's labels, else JAX's
    uint32_t dense = 0;   // a dot of the flattened result to this many outputs (0: none)
    bool to_nchw = false; // JAX's labels: the result transposed to NCHW before flattening
    bool integer = false; // s8 inputs and kernels, s32 results; integer layers go back to s8
                          // (convert) before the next one; no dense layer
    bool one_d = false;   // 1-D convolutions over w (h = 1 and kh = 1, no height dimension:
                          // [batch, c, w] or [batch, w, c])
};

// A named net and the tolerance of its float results (of the largest reference magnitude).
struct Case {
    std::string name;
    Net net;
    double tol;
};

// The nets every convolution suite runs, for the array size n: odd sizes, stride 2, padding on
// every side, 1x1 kernels, a kernel as large as the padded input, channels 1, 3, n - 1, n + 1,
// batch 1 and 5, bias/ReLU/pooling chains in both orders, both labels, flattened into a dot.
inline std::vector<Case> cases(uint32_t n)
{
    std::vector<Case> c;
    Layer l;
    // JAX: a padded 3x3 convolution, bias, ReLU, 2x2 pooling, flattened into a dot.
    l = {5, 3, 3};
    l.pt = l.pb = l.pl = l.pr = 1;
    l.ph = l.pw = l.psh = l.psw = 2;
    c.push_back({"jax_conv_pool_dense", {2, 7, 9, 3, {l}, false, 4}, 0.05});
    // PyTorch's MNIST net in small: two convolutions on the device, the second pooled, the NCHW
    // flatten read in place by the dot.
    Layer a = {4, 3, 3}, b = {6, 3, 3};
    b.ph = b.pw = b.psh = b.psw = 2;
    c.push_back({"torch_two_convs_flatten", {2, 12, 12, 1, {a, b}, true, 5}, 0.08});
    // JAX's port of it: NHWC transposed to NCHW before the flatten.
    Net j = {2, 12, 12, 1, {a, b}, false, 5};
    j.to_nchw = true;
    c.push_back({"jax_transpose_flatten", j, 0.08});
    // NCHW input of 3 channels (a permuted transfer), stride 2 with padding, n + 1 outputs.
    l = {n + 1, 3, 3};
    l.sh = l.sw = 2;
    l.pt = l.pb = l.pl = l.pr = 1;
    c.push_back({"torch_rgb_stride2", {2, 9, 11, 3, {l}, true}, 0.04});
    // Asymmetric padding on all sides, a 3x2 kernel, strides 2x1, n - 1 channels, bias only.
    l = {3, 3, 2};
    l.sh = 2;
    l.pt = 2;
    l.pb = 1;
    l.pr = 3;
    l.relu = false;
    c.push_back({"jax_asymmetric_padding", {2, 11, 8, n - 1, {l}}, 0.04});
    // A 1x1 kernel, n + 1 channels in, n - 1 out, batch 5.
    l = {n - 1, 1, 1};
    c.push_back({"torch_pointwise_batch5", {5, 6, 5, n + 1, {l}, true}, 0.04});
    // A kernel as large as the padded input: one output pixel.
    l = {3, 6, 7};
    l.pt = 1;
    l.pb = 0;
    l.pl = 2;
    l.pr = 1;
    c.push_back({"jax_kernel_covers_input", {3, 5, 4, 2, {l}}, 0.04});
    // Pooling before the ReLU, overlapping 3x3 windows with step 2, no bias.
    l = {n, 3, 3};
    l.bias = false;
    l.ph = l.pw = 3;
    l.psh = l.psw = 2;
    l.pool_first = true;
    c.push_back({"torch_pool_before_relu", {2, 13, 10, 2, {l}, true}, 0.05});
    // Batch 1, one channel, a 5x5 kernel padded by 2, pooled 2x1, three convolutions in a row.
    Layer p = {n + 1, 5, 5}, q = {4, 3, 3}, r = {6, 1, 1};
    p.pt = p.pb = p.pl = p.pr = 2;
    p.ph = 2;
    p.pw = 1;
    p.psh = 2;
    p.psw = 1;
    q.sh = 2;
    c.push_back({"jax_three_convs_batch1", {1, 10, 7, 1, {p, q, r}, false, 3}, 0.1});
    // Integers: exact, the pooling on the host (s32), the next layer's input converted.
    Layer i1 = {n + 1, 3, 3}, i2 = {3, 2, 2};
    i1.pt = i1.pl = 1;
    i1.ph = i1.pw = i1.psh = i1.psw = 2;
    Net in = {2, 9, 8, 3, {i1, i2}, true};
    in.integer = true;
    c.push_back({"torch_integer", in, 0});
    // Depthwise (groups = channels = n + 1), padded 3x3, then a pointwise convolution.
    Layer dw = {n + 1, 3, 3}, pw = {5, 1, 1};
    dw.groups = n + 1;
    dw.pt = dw.pb = dw.pl = dw.pr = 1;
    c.push_back({"jax_depthwise_separable", {2, 8, 7, n + 1, {dw, pw}}, 0.05});
    // 1 < groups < channels, two outputs per group, stride 2, in integers (exact).
    Layer gr = {6, 3, 2};
    gr.groups = 3;
    gr.sh = gr.sw = 2;
    Net gi = {2, 9, 8, 6, {gr}, true};
    gi.integer = true;
    c.push_back({"torch_grouped_integer", gi, 0});
    // Dilation 2 and 3 (padded like "same"), then dilation 3x1 with 2 groups, pooled.
    Layer d2 = {4, 3, 3}, d3 = {4, 2, 3};
    d2.dh = d2.dw = 2;
    d2.pt = d2.pb = d2.pl = d2.pr = 2;
    d3.dh = 3;
    d3.groups = 2;
    d3.ph = d3.pw = d3.psh = d3.psw = 2;
    c.push_back({"jax_dilated", {2, 12, 10, 2, {d2, d3}, false, 3}, 0.08});
    // 1-D: a padded, dilated kernel of 5 over a sequence of 20, pooled by 2, then a depthwise
    // one and a dense layer (JAX's labels b0f); and PyTorch's Conv1d (bf0), strided.
    Layer s1 = {n + 1, 1, 5}, s2 = {n + 1, 1, 3};
    s1.pl = s1.pr = 4;
    s1.dw = 2;
    s1.ph = 1;
    s1.pw = s1.psw = 2;
    s1.psh = 1;
    s2.groups = n + 1;
    Net seq = {3, 1, 20, 3, {s1, s2}, false, 4};
    seq.one_d = true;
    c.push_back({"jax_conv1d_sequence", seq, 0.08});
    Layer t1 = {6, 1, 4};
    t1.sw = 3;
    t1.pl = 1;
    Net tseq = {2, 1, 17, n - 1, {t1}, true, 3};
    tseq.one_d = true;
    c.push_back({"torch_conv1d_strided", tseq, 0.05});
    // Transposed convolutions: input dilation 2 on odd sizes with one-sided padding, then 3x2
    // with negative padding (cut) and a run-time kernel reversed, as an input gradient's.
    Layer t2 = {n + 1, 3, 3}, t3 = {3, 3, 2};
    t2.lh = t2.lw = 2;
    t2.pt = 2;
    t2.pl = 1;
    t3.lh = 3;
    t3.lw = 2;
    t3.pt = t3.pb = t3.pl = t3.pr = 1;
    t3.cut = 2;
    t3.runtime = t3.reverse = true;
    c.push_back({"jax_transposed", {2, 5, 7, 3, {t2, t3}, false, 3}, 0.1});
    // Run-time kernels in integers: exact, grouped and dilated, reversed, the input dilated.
    Layer r1 = {4, 3, 2}, r2 = {n + 1, 2, 3};
    r1.groups = 2;
    r1.dh = 2;
    r1.runtime = r1.reverse = true;
    r2.lh = r2.lw = 2;
    r2.pb = r2.pr = 1;
    r2.runtime = true;
    Net ri = {2, 7, 6, 4, {r1, r2}, true};
    ri.integer = true;
    c.push_back({"torch_runtime_kernels_integer", ri, 0});
    // Batch groups (batch_group_count), as a grouped convolution's weight gradient has them: a
    // batch of 4 in 2 groups, each feeding half of the output channels, pooled, into a dot.
    Layer bg = {4, 3, 3};
    bg.batch_groups = 2;
    bg.pt = bg.pb = bg.pl = bg.pr = 1;
    bg.ph = bg.pw = bg.psh = bg.psw = 2;
    c.push_back({"jax_batch_groups", {4, 7, 6, 3, {bg}, false, 3}, 0.05});
    // A depthwise weight gradient's in integers: as many batch groups as images, one output
    // channel each, the kernel computed at run time (exact).
    Layer dg = {6, 2, 3};
    dg.batch_groups = 6;
    dg.runtime = true;
    Net dgi = {6, 7, 8, 2, {dg}, true};
    dgi.integer = true;
    c.push_back({"torch_depthwise_weight_gradient_integer", dgi, 0});
    // Batch norm after a bias (one scale of either sign per channel), ReLU, pooled, into a dot.
    Layer bn = {n + 1, 3, 3};
    bn.bn = true;
    bn.pt = bn.pb = bn.pl = bn.pr = 1;
    bn.ph = bn.pw = bn.psh = bn.psw = 2;
    c.push_back({"torch_batch_norm", {2, 8, 9, 2, {bn}, true, 4}, 0.05});
    return c;
}

// First layers of few input channels, which tpuc packs (their receptive fields gathered into K)
// at every array size n >= 4: odd sizes, padding on one side, a stride beyond the kernel, a
// 2-tap kernel, several K tiles packed, a dilated input and kernel, groups, pooling, integers.
inline std::vector<Case> packing_cases(uint32_t n)
{
    std::vector<Case> c;
    Layer l = {5, 5, 5};
    l.ph = l.pw = l.psh = l.psw = 2;
    c.push_back({"one_channel_5x5_pooled", {3, 11, 9, 1, {l}, false, 4}, 0.05});
    l = {n + 1, 3, 3};
    l.pt = 1;
    l.pl = 2;
    c.push_back({"one_channel_3x3_padded_on_one_side", {2, 7, 8, 1, {l}, true}, 0.04});
    l = {3, 2, 2};
    l.sh = 3;
    l.sw = 4;
    c.push_back({"stride_beyond_kernel", {2, 10, 13, 1, {l}}, 0.04});
    l = {4, 2, 1};
    c.push_back({"two_taps", {1, 5, 3, 1, {l}}, 0.04});
    l = {n - 1, 3, 3};
    l.pt = l.pb = l.pl = l.pr = 1;
    Layer next = {4, 3, 3};
    c.push_back({"rgb_padded_then_in_place", {2, 9, 7, 3, {l, next}, true, 3}, 0.08});
    l = {n + 1, 3, 3};
    l.lh = l.lw = 2;
    l.pt = 2;
    l.cut = 1;
    l.dw = 2;
    c.push_back({"dilated_input_and_kernel", {2, 5, 6, 1, {l}}, 0.05});
    l = {4, 5, 5};
    l.groups = 2;
    l.pr = 2;
    c.push_back({"two_groups", {2, 8, 9, 2, {l}, true}, 0.05});
    l = {n + 1, 5, 5};
    l.sh = 2;
    l.pb = 3;
    Net in = {2, 11, 10, 1, {l}, false};
    in.integer = true;
    c.push_back({"integer_strided", in, 0});
    return c;
}

// A literal of dims with values from u, as HLO text.
inline std::string literal(std::mt19937 &rng, const std::vector<int64_t> &dims, bool integer,
                           double lo, double hi, size_t level = 0)
{
    std::uniform_real_distribution<double> u(lo, hi);
    std::string s = "{";
    for (int64_t i = 0; i < dims[level]; i++) {
        if (i)
            s += ", ";
        if (level + 1 < dims.size()) {
            s += literal(rng, dims, integer, lo, hi, level + 1);
            continue;
        }
        char b[32];
        if (integer)
            snprintf(b, sizeof b, "%ld", std::lround(u(rng)));
        else
            snprintf(b, sizeof b, "%.6g", u(rng));
        s += b;
    }
    return s + "}";
}

inline std::string shape(const char *type, const std::vector<int64_t> &dims)
{
    std::string s = std::string(type) + "[";
    for (size_t i = 0; i < dims.size(); i++)
        s += (i ? "," : "") + std::to_string(dims[i]);
    return s + "]";
}

// The extent of a kernel of k taps dilated by d.
inline uint32_t span(uint32_t k, uint32_t d) { return (k - 1) * d + 1; }

// An activation's dims: [batch, c, h, w] or [batch, h, w, c] (without h for a 1-D net), of the
// net's batch or of b.
inline std::vector<int64_t> act_dims(const Net &n, uint64_t h, uint64_t w, uint64_t c,
                                     int64_t b = -1)
{
    if (b < 0)
        b = n.batch;
    std::vector<int64_t> d = n.nchw ? std::vector<int64_t>{b, (int64_t)c, (int64_t)h, (int64_t)w}
                                    : std::vector<int64_t>{b, (int64_t)h, (int64_t)w, (int64_t)c};
    if (n.one_d)
        d.erase(d.begin() + (n.nchw ? 2 : 1));
    return d;
}

// The input's dims.
inline std::vector<int64_t> input_dims(const Net &n) { return act_dims(n, n.h, n.w, n.c); }

// A window attribute's "a x b" over the spatial dimensions (w alone for a 1-D net).
inline std::string spatial(const Net &n, uint32_t y, uint32_t x, const char *sep = "x")
{
    return n.one_d ? std::to_string(x) : std::to_string(y) + sep + std::to_string(x);
}

// The module: parameter 0 the input, everything else literals.
inline std::string hlo(const Net &n, std::mt19937 &rng)
{
    const char *f = n.integer ? "s32" : "f32", *in = n.integer ? "s8" : "f32";
    std::string t = std::string("HloModule cnn\n\nmaxf {\n  a = ") + f +
                    "[] parameter(0)\n  b = " + f + "[] parameter(1)\n  ROOT m = " + f +
                    "[] maximum(a, b)\n}\n\n" + "ENTRY main {\n  x = " + shape(in, input_dims(n)) +
                    " parameter(0)\n" + "  zero = " + f + "[] constant(0)\n  low = " + f +
                    "[] constant(" + (n.integer ? "-2147483648" : "-inf") + ")\n";
    std::string v = "x";
    uint64_t h = n.h, w = n.w, c = n.c;
    int64_t batch = n.batch;                     // after batch-grouped layers, one group's
    const int cf = n.nchw ? 1 : n.one_d ? 2 : 3; // the feature dimension
    auto dims = [&](uint64_t hh, uint64_t ww, uint64_t cc) {
        return act_dims(n, hh, ww, cc, batch);
    };
    for (size_t i = 0; i < n.layers.size(); i++) {
        const Layer &l = n.layers[i];
        const std::string s = std::to_string(i);
        if (n.integer && i) {
            t += "  q" + s + " = " + shape("s8", dims(h, w, c)) + " convert(" + v + ")\n";
            v = "q" + s;
        }
        const uint64_t oh =
            (span((uint32_t)h, l.lh) + l.pt + l.pb - l.cut - span(l.kh, l.dh)) / l.sh + 1;
        const uint64_t ow =
            (span((uint32_t)w, l.lw) + l.pl + l.pr - l.cut - span(l.kw, l.dw)) / l.sw + 1;
        const int64_t cg = (int64_t)c / l.groups; // the kernel's input features
        std::vector<int64_t> k = n.nchw ? std::vector<int64_t>{l.cout, cg, l.kh, l.kw}
                                        : std::vector<int64_t>{l.kh, l.kw, cg, l.cout};
        if (n.one_d)
            k.erase(k.begin() + (n.nchw ? 2 : 0));
        const double bound = n.integer ? 127.0 : 1.0 / std::sqrt((double)(l.kh * l.kw * cg));
        const char *kt = n.integer ? "s8" : "f32";
        t += "  k" + s + " = " + shape(kt, k) + " constant(" +
             literal(rng, k, n.integer, -bound, bound) + ")\n";
        std::string kv = "k" + s;
        if (l.runtime) { // scaled by 1 + x0 / 4, or in integers at least x0 (an element of x)
            const size_t rank = input_dims(n).size();
            std::string sl;
            for (size_t d = 0; d < rank; d++)
                sl += std::string(d ? "," : "") + "[0:1]";
            t += "  x0" + s + " = " + shape(in, std::vector<int64_t>(rank, 1)) +
                 " slice(x), slice={" + sl + "}\n";
            t += "  s0" + s + " = " + in + "[] reshape(x0" + s + ")\n";
            if (n.integer) {
                t += "  sb" + s + " = " + shape(kt, k) + " broadcast(s0" + s + "), dimensions={}\n";
                t += "  kr" + s + " = " + shape(kt, k) + " maximum(k" + s + ", sb" + s + ")\n";
            } else {
                t += "  four" + s + " = f32[] constant(4)\n  one" + s + " = f32[] constant(1)\n";
                t += "  sq" + s + " = f32[] divide(s0" + s + ", four" + s + ")\n";
                t += "  sc" + s + " = f32[] add(sq" + s + ", one" + s + ")\n";
                t += "  sb" + s + " = " + shape(kt, k) + " broadcast(sc" + s + "), dimensions={}\n";
                t += "  kr" + s + " = " + shape(kt, k) + " multiply(k" + s + ", sb" + s + ")\n";
            }
            kv = "kr" + s;
            if (l.reverse) {
                const std::string rd = n.one_d ? (n.nchw ? "2" : "0") : (n.nchw ? "2,3" : "0,1");
                t += "  kv" + s + " = " + shape(kt, k) + " reverse(" + kv + "), dimensions={" + rd +
                     "}\n";
                kv = "kv" + s;
            }
        }
        batch /= l.batch_groups;
        const std::string os = shape(f, dims(oh, ow, l.cout));
        const std::string pb = std::to_string((int)l.pb - (int)l.cut);
        const std::string pr = std::to_string((int)l.pr - (int)l.cut);
        t += "  c" + s + " = " + os + " convolution(" + v + ", " + kv +
             "), window={size=" + spatial(n, l.kh, l.kw) + " stride=" + spatial(n, l.sh, l.sw) +
             " pad=" + (n.one_d ? "" : std::to_string(l.pt) + "_" + pb + "x") +
             std::to_string(l.pl) + "_" + pr +
             (l.lh * l.lw > 1 ? " lhs_dilate=" + spatial(n, l.lh, l.lw) : "") +
             (l.dh * l.dw > 1 ? " rhs_dilate=" + spatial(n, l.dh, l.dw) : "") + "}, dim_labels=" +
             (n.one_d ? (n.nchw ? "bf0_oi0->bf0" : "b0f_0io->b0f")
                      : (n.nchw ? "bf01_oi01->bf01" : "b01f_01io->b01f")) +
             (l.groups > 1 ? ", feature_group_count=" + std::to_string(l.groups) : "") +
             (l.batch_groups > 1 ? ", batch_group_count=" + std::to_string(l.batch_groups) : "") +
             "\n";
        v = "c" + s;
        uint64_t ph = oh, pw = ow;
        if (l.ph) {
            ph = (oh - l.ph) / l.psh + 1;
            pw = (ow - l.pw) / l.psw + 1;
        }
        // The chain: bias, then ReLU and pooling in the order asked for.
        auto add_bias = [&](uint64_t hh, uint64_t ww) {
            const std::string sh = shape(f, dims(hh, ww, l.cout));
            t += "  b" + s + " = " + f + "[" + std::to_string(l.cout) + "] constant(" +
                 literal(rng, {l.cout}, n.integer, n.integer ? -20000 : -0.3,
                         n.integer ? 20000 : 0.3) +
                 ")\n";
            t += "  bb" + s + " = " + sh + " broadcast(b" + s + "), dimensions={" +
                 std::to_string(cf) + "}\n";
            t += "  a" + s + " = " + sh + " add(" + v + ", bb" + s + ")\n";
            v = "a" + s;
        };
        auto add_relu = [&](uint64_t hh, uint64_t ww) {
            const std::string sh = shape(f, dims(hh, ww, l.cout));
            t += "  z" + s + " = " + sh + " broadcast(zero), dimensions={}\n";
            t += "  r" + s + " = " + sh + " maximum(" + v + ", z" + s + ")\n";
            v = "r" + s;
        };
        auto add_pool = [&]() {
            const std::string win =
                n.nchw ? "1x1x" + spatial(n, l.ph, l.pw) : "1x" + spatial(n, l.ph, l.pw) + "x1";
            const std::string st =
                n.nchw ? "1x1x" + spatial(n, l.psh, l.psw) : "1x" + spatial(n, l.psh, l.psw) + "x1";
            t += "  p" + s + " = " + shape(f, dims(ph, pw, l.cout)) + " reduce-window(" + v +
                 ", low), window={size=" + win + " stride=" + st + "}, to_apply=maxf\n";
            v = "p" + s;
        };
        if (l.bias)
            add_bias(oh, ow);
        if (l.bn) { // per channel: subtract, multiply twice, add
            const std::string sh = shape(f, dims(oh, ow, l.cout));
            const char *ops[] = {"subtract", "multiply", "multiply", "add"};
            const double lo[] = {-0.2, 0.5, 0.5, -0.2}, hi[] = {0.2, 1.5, 1.5, 0.2};
            for (int k = 0; k < 4; k++) {
                const std::string id = s + "_" + std::to_string(k);
                t += "  n" + id + " = " + f + "[" + std::to_string(l.cout) + "] constant(" +
                     literal(rng, {l.cout}, false, k == 1 ? -hi[k] : lo[k], hi[k]) + ")\n";
                t += "  nb" + id + " = " + sh + " broadcast(n" + id + "), dimensions={" +
                     std::to_string(cf) + "}\n";
                t += "  bn" + id + " = " + sh + " " + ops[k] + "(" + v + ", nb" + id + ")\n";
                v = "bn" + id;
            }
        }
        if (l.ph && l.pool_first)
            add_pool();
        if (l.relu)
            add_relu(l.ph && l.pool_first ? ph : oh, l.ph && l.pool_first ? pw : ow);
        if (l.ph && !l.pool_first)
            add_pool();
        h = ph;
        w = pw;
        c = l.cout;
    }
    if (n.dense) {
        const int64_t features = (int64_t)(h * w * c);
        if (n.to_nchw) {
            Net to = n;
            to.nchw = true;
            t += "  t = " + shape(f, act_dims(to, h, w, c, batch)) + " transpose(" + v +
                 "), dimensions=" + (n.one_d ? "{0,2,1}" : "{0,3,1,2}") + "\n";
            v = "t";
        }
        t += "  flat = " + shape(f, {batch, features}) + " reshape(" + v + ")\n";
        const double bound = 1.0 / std::sqrt((double)features);
        t += "  wd = f32[" + std::to_string(features) + "," + std::to_string(n.dense) +
             "] constant(" + literal(rng, {features, n.dense}, false, -bound, bound) + ")\n";
        t += "  d = " + shape(f, {batch, n.dense}) +
             " dot(flat, wd), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n";
        t += "  bd = f32[" + std::to_string(n.dense) + "] constant(" +
             literal(rng, {n.dense}, false, -0.1, 0.1) + ")\n";
        t += "  bbd = " + shape(f, {batch, n.dense}) + " broadcast(bd), dimensions={1}\n";
        t += "  y = " + shape(f, {batch, n.dense}) + " add(d, bbd)\n";
        v = "y";
    }
    // The last instruction is the root.
    const size_t at = t.rfind("\n  " + v + " = ");
    t.insert(at + 3, "ROOT ");
    return t + "}\n";
}

// A random net for array size n: 1 to 3 layers of random kernels (1..5), strides (1..2),
// padding (0..2 on each side), channels (1, 3, n - 1, n + 1, ...), feature groups (a third of
// the layers: any divisor of the input channels, depthwise included), kernel dilation (1..3,
// a third of the layers), input dilation (2..3 in w, 1..3 in h, a quarter of the layers, with
// padding cut by up to 3), run-time kernels (a third, half of them reversed), 1-D nets (a
// quarter), bias, ReLU and pooling
// (before or after the ReLU), either labels, batch 1..5, sometimes a dense layer (float nets;
// every fourth net is integer).
inline Net random_net(std::mt19937 &rng, uint32_t n)
{
    auto u = [&](uint32_t lo, uint32_t hi) {
        return std::uniform_int_distribution<uint32_t>(lo, hi)(rng);
    };
    const uint32_t channels[] = {1, 2, 3, n - 1, n, n + 1};
    Net net = {u(1, 5), u(5, 14), u(5, 14), channels[u(0, 5)], {}, u(0, 1) == 1};
    net.integer = u(0, 3) == 0;
    net.one_d = u(0, 3) == 0;
    if (net.one_d) {
        net.h = 1;
        net.w *= 2;
    }
    uint32_t h = net.h, w = net.w, c = net.c;
    const uint32_t layers = u(1, 3);
    for (uint32_t i = 0; i < layers; i++) {
        Layer l = {channels[u(0, 5)] + u(0, 1) * n, u(1, 5), u(1, 5)};
        l.sh = u(1, 2);
        l.sw = u(1, 2);
        l.pt = u(0, 2), l.pb = u(0, 2), l.pl = u(0, 2), l.pr = u(0, 2);
        std::vector<uint32_t> divisors; // feature groups: 1 < groups <= c (depthwise: c)
        for (uint32_t d = 2; d <= c; d++)
            if (c % d == 0)
                divisors.push_back(d);
        if (!divisors.empty() && u(0, 2) == 0) {
            l.groups = divisors[u(0, (uint32_t)divisors.size() - 1)];
            l.cout = l.groups * u(1, 2);
        }
        if (u(0, 2) == 0) {
            l.dh = u(1, 3);
            l.dw = u(1, 3);
        }
        if (u(0, 3) == 0) {
            l.lh = u(1, 3);
            l.lw = u(2, 3);
            l.cut = u(0, 3);
        }
        l.runtime = u(0, 2) == 0;
        l.reverse = l.runtime && u(0, 1);
        if (net.one_d) {
            l.kh = l.sh = l.dh = l.lh = 1;
            l.pt = l.pb = 0;
        }
        l.cut = std::min({l.cut, span(h, l.lh) + l.pb - 1, span(w, l.lw) + l.pr - 1});
        while (l.kh > 1 && span(l.kh, l.dh) > span(h, l.lh) + l.pt + l.pb - l.cut)
            l.kh--;
        while (l.kw > 1 && span(l.kw, l.dw) > span(w, l.lw) + l.pl + l.pr - l.cut)
            l.kw--;
        l.bias = u(0, 3) != 0;
        l.relu = u(0, 3) != 0;
        const uint32_t oh = (span(h, l.lh) + l.pt + l.pb - l.cut - span(l.kh, l.dh)) / l.sh + 1;
        const uint32_t ow = (span(w, l.lw) + l.pl + l.pr - l.cut - span(l.kw, l.dw)) / l.sw + 1;
        h = oh;
        w = ow;
        c = l.cout;
        if (u(0, 1) && (oh >= 2 || net.one_d) && ow >= 2) {
            l.ph = u(1, std::min(oh, 3u));
            l.pw = u(1, std::min(ow, 3u));
            l.psh = net.one_d ? 1 : u(1, 2);
            l.psw = u(1, 2);
            l.pool_first = u(0, 1) == 1;
            h = (oh - l.ph) / l.psh + 1;
            w = (ow - l.pw) / l.psw + 1;
        }
        net.layers.push_back(l);
    }
    if (!net.integer && u(0, 1)) {
        net.dense = u(1, 6);
        net.to_nchw = !net.nchw && u(0, 1);
    }
    return net;
}

} // namespace cnn_hlo

#endif
