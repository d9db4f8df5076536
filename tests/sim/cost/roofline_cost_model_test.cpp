#include "sim/cost/roofline_cost_model.h"

#include <gtest/gtest.h>

#include <cstring>

#include <cstdio>
#include <functional>
#include <memory>
#include <string_view>
#include <vector>

#include "sim/cost/cost_error.h"
#include "sim/cost/presets.h"

namespace pagesim::sim {
namespace {

BatchShape decode_batch(std::int64_t seqs, std::int64_t context) {
  BatchShape b;
  for (std::int64_t i = 0; i < seqs; ++i) b.add_decode_seq(context);
  return b;
}

BatchShape prefill_batch(std::int64_t tokens) {
  BatchShape b;
  b.add_prefill_chunk(tokens, 0, true);
  return b;
}

GpuSpec without_overhead(GpuSpec g) {
  g.iteration_overhead_seconds = 0;
  return g;
}

// A toy model and GPU with round numbers, every term computed by hand.
ModelSpec toy_model() {
  ModelSpec m;
  m.name = "toy";
  m.layers = 2;
  m.hidden = 8;
  m.heads = 2;
  m.kv_heads = 2;
  m.head_dim = 4;
  m.ffn = 16;
  m.vocab = 10;
  m.dtype_bytes = 2;
  m.max_seq_len = 100;
  return m;
}

GpuSpec toy_gpu() {
  GpuSpec g;
  g.name = "toy";
  g.hbm_bytes = 1 << 20;
  g.peak_flops = 1000;
  g.hbm_bytes_per_s = 100;
  g.pcie_bytes_per_s = 10;
  g.nvlink_bytes_per_s = 50;
  g.compute_efficiency = 1;
  g.memory_efficiency = 1;
  g.nvlink_efficiency = 1;
  g.iteration_overhead_seconds = 0.5;
  g.allreduce_latency_seconds = 0.25;
  g.swap_block_overhead_seconds = 0.125;
  return g;
}

TEST(CostRoofline, HandComputedTermsOfAToyModel) {
  const ModelSpec m = toy_model();
  ASSERT_EQ(m.nonembedding_params(), 1064);  // 2·(256 attn + 256 mlp + 16 norms) + 8
  const RooflineCostModel r(m, toy_gpu());
  const RooflineBreakdown b = r.breakdown(decode_batch(1, 10));
  EXPECT_DOUBLE_EQ(b.overhead_seconds, 0.5);
  EXPECT_DOUBLE_EQ(b.allreduce_seconds, 0);
  EXPECT_DOUBLE_EQ(b.linear.compute_seconds, 2 * 1064 / 1000.0);
  // weights 1064·2 B + activations 2 layers·96 elements·2 B
  EXPECT_DOUBLE_EQ(b.linear.memory_seconds, (1064 * 2 + 2 * 96 * 2) / 100.0);
  EXPECT_DOUBLE_EQ(b.decode_attention.compute_seconds, 4 * 2 * 2 * 4 * 10 / 1000.0);
  // KV 64 B/token × (10 read + 1 written) + Q and O 2·2 layers·8·2 B
  EXPECT_DOUBLE_EQ(b.decode_attention.memory_seconds, (64 * 11 + 64) / 100.0);
  EXPECT_DOUBLE_EQ(b.prefill_attention.seconds(), 0);
  EXPECT_DOUBLE_EQ(b.lm_head.compute_seconds, 2 * 8 * 10 / 1000.0);
  EXPECT_DOUBLE_EQ(b.lm_head.memory_seconds, (8 * 10 * 2 + (8 + 10) * 2) / 100.0);
  EXPECT_NEAR(r.iteration_seconds(decode_batch(1, 10)), 0.5 + 25.12 + 7.68 + 1.96, 1e-12);

  BatchShape p;
  p.add_prefill_chunk(3, 2, false);  // pairs 3·2 + 6 = 12, KV read 5, written 3, no LM head
  const RooflineBreakdown bp = r.breakdown(p);
  EXPECT_DOUBLE_EQ(bp.prefill_attention.compute_seconds, 64 * 12 / 1000.0);
  EXPECT_DOUBLE_EQ(bp.prefill_attention.memory_seconds, (64 * 8 + 3 * 64) / 100.0);
  EXPECT_DOUBLE_EQ(bp.lm_head.seconds(), 0);

  // tp = 2: ring all-reduce, 2 per layer, of 8·2 B per token: 2·2·(0.25 + 2·½·16/50).
  const RooflineCostModel r2(m, toy_gpu(), 2);
  EXPECT_DOUBLE_EQ(r2.breakdown(decode_batch(1, 10)).allreduce_seconds, 4 * (0.25 + 16 / 50.0));
  EXPECT_DOUBLE_EQ(r2.breakdown(decode_batch(1, 10)).linear.compute_seconds,
                   2 * 1064 / 2 / 1000.0);
}

// The toy model split into two one-layer groups: per layer and token 32 B of KV (2 · 2 heads
// · 4 dims · 2 B), Q + O 32 B, 4 · 1 layer · 8 = 32 FLOPs per query-key pair.
ModelSpec toy_with_groups(alloc::LayerGroupKind first_kind, std::int64_t window, std::int64_t encoder) {
  ModelSpec m = toy_model();
  ModelLayerGroup a;
  a.kind = first_kind;
  a.layers = 1;
  a.kv_heads = 2;
  a.head_dim = 4;
  a.window_tokens = window;
  a.encoder_tokens = encoder;
  ModelLayerGroup full = a;
  full.kind = alloc::LayerGroupKind::kFull;
  full.window_tokens = 0;
  full.encoder_tokens = 0;
  m.groups = {a, full};
  return m;
}

TEST(CostRoofline, SlidingWindowGroupReadsAtMostWKeys) {
  const RooflineCostModel r(toy_with_groups(alloc::LayerGroupKind::kSlidingWindow, 4, 0), toy_gpu());
  const RooflineBreakdown b = r.breakdown(decode_batch(1, 10));
  // Full layer: 10 pairs, 10 keys read + 1 written; windowed layer: 4 pairs, 4 read + 1.
  EXPECT_DOUBLE_EQ(b.decode_attention.compute_seconds, (10 + 4) * 32 / 1000.0);
  EXPECT_DOUBLE_EQ(b.decode_attention.memory_seconds, (11 * 32 + 32 + 5 * 32 + 32) / 100.0);
  // Within the window both layers read alike: the uniform model's numbers.
  const RooflineBreakdown inside = r.breakdown(decode_batch(1, 3));
  const RooflineBreakdown uniform = RooflineCostModel(toy_model(), toy_gpu()).breakdown(decode_batch(1, 3));
  EXPECT_DOUBLE_EQ(inside.decode_attention.memory_seconds, uniform.decode_attention.memory_seconds);
  EXPECT_DOUBLE_EQ(inside.decode_attention.compute_seconds, uniform.decode_attention.compute_seconds);
  // Prefill of 3 new tokens after 6 cached (pairs 3·6 + 6 = 24): the windowed layer's queries
  // at 6, 7, 8 attend 4 keys each (12 pairs) and read keys 3..8 (6) + write 3.
  BatchShape p;
  p.add_prefill_chunk(3, 6, false);
  const RooflineBreakdown bp = r.breakdown(p);
  EXPECT_DOUBLE_EQ(bp.prefill_attention.compute_seconds, (24 + 12) * 32 / 1000.0);
  EXPECT_DOUBLE_EQ(bp.prefill_attention.memory_seconds, (12 * 32 + 96 + 9 * 32 + 96) / 100.0);
}

TEST(CostRoofline, KvDtypeScalesKvTrafficNotQueries) {
  ModelSpec m = toy_with_groups(alloc::LayerGroupKind::kSlidingWindow, 4, 0);
  m.kv_dtype = KvDtype::kFp8;  // 16 B per layer and token
  const RooflineBreakdown b = RooflineCostModel(m, toy_gpu()).breakdown(decode_batch(1, 10));
  EXPECT_DOUBLE_EQ(b.decode_attention.memory_seconds, (11 * 16 + 32 + 5 * 16 + 32) / 100.0);
  ModelSpec u = toy_model();
  u.kv_dtype = KvDtype::kFp8;
  EXPECT_DOUBLE_EQ(RooflineCostModel(u, toy_gpu()).breakdown(decode_batch(1, 10)).decode_attention.memory_seconds,
                   (32 * 11 + 64) / 100.0);
}

TEST(CostRoofline, CrossAttentionReadsEncoderKeysAndRecurrentStateOncePerSequence) {
  const RooflineCostModel cross(toy_with_groups(alloc::LayerGroupKind::kCrossAttention, 0, 5), toy_gpu());
  const RooflineBreakdown b = cross.breakdown(decode_batch(2, 10));
  // Full: 20 pairs, 20 read + 2 written; cross: 2 · 5 encoder keys, nothing written.
  EXPECT_DOUBLE_EQ(b.decode_attention.compute_seconds, (20 + 10) * 32 / 1000.0);
  EXPECT_DOUBLE_EQ(b.decode_attention.memory_seconds, (22 * 32 + 64 + 10 * 32 + 64) / 100.0);

  ModelSpec rec = toy_model();
  ModelLayerGroup state;
  state.kind = alloc::LayerGroupKind::kRecurrent;
  state.layers = 1;
  state.state_elements = 10;  // 20 B per sequence, read and written
  state.mixer_params = 100;
  ModelLayerGroup full;
  full.layers = 1;
  full.kv_heads = 2;
  full.head_dim = 4;
  rec.groups = {state, full};
  const RooflineBreakdown br = RooflineCostModel(rec, toy_gpu()).breakdown(decode_batch(2, 10));
  EXPECT_DOUBLE_EQ(br.decode_attention.compute_seconds, 20 * 32 / 1000.0);
  EXPECT_DOUBLE_EQ(br.decode_attention.memory_seconds, (22 * 32 + 64 + 2 * 2 * 20) / 100.0);
}

TEST(CostRoofline, EmptyBatchCostsNothing) {
  const RooflineCostModel r(model_preset("opt-13b"), gpu_preset("a100-40gb"));
  EXPECT_EQ(r.iteration_seconds(BatchShape{}), 0.0);
  EXPECT_EQ(r.swap_seconds(0, 16), 0.0);
}

TEST(CostRoofline, SmallDecodeIsMemoryBoundAtWeightsOverBandwidth) {
  const ModelSpec m = model_preset("opt-13b");
  const GpuSpec g = without_overhead(gpu_preset("a100-40gb"));
  const RooflineCostModel r(m, g);
  const RooflineBreakdown b = r.breakdown(decode_batch(1, 512));
  EXPECT_FALSE(b.linear.compute_bound());
  EXPECT_FALSE(b.decode_attention.compute_bound());
  EXPECT_FALSE(b.lm_head.compute_bound());
  const double weights_over_bw =
      static_cast<double>(m.weight_bytes()) / g.achieved_hbm_bytes_per_s();
  const double t = b.total_seconds();
  std::printf("opt-13b/a100-40gb decode 1x512: %.3f ms, weights/bw %.3f ms\n", t * 1e3,
              weights_over_bw * 1e3);
  EXPECT_GT(t, 0.99 * weights_over_bw);
  EXPECT_LT(t, 1.03 * weights_over_bw);  // + 0.4 GB of KV
}

TEST(CostRoofline, LargePrefillIsComputeBoundAtFlopsOverPeak) {
  const ModelSpec m = model_preset("opt-13b");
  const GpuSpec g = without_overhead(gpu_preset("a100-40gb"));
  const RooflineCostModel r(m, g);
  const BatchShape p = prefill_batch(2048);
  const RooflineBreakdown b = r.breakdown(p);
  EXPECT_TRUE(b.linear.compute_bound());
  EXPECT_TRUE(b.prefill_attention.compute_bound());
  const double flops = 2.0 * static_cast<double>(m.nonembedding_params()) * 2048 +
                       4.0 * 40 * 40 * 128 * p.prefill_attention_pairs + 2.0 * 5120 * 50272;
  const double flops_over_peak = flops / g.achieved_flops();
  const double t = b.total_seconds();
  std::printf("opt-13b/a100-40gb prefill 2048: %.3f ms, flops/peak %.3f ms (%.4g FLOP)\n",
              t * 1e3, flops_over_peak * 1e3, flops);
  EXPECT_GT(t, flops_over_peak * 0.999);
  EXPECT_LT(t, flops_over_peak * 1.01);  // + the LM head's weight read
}

TEST(CostRoofline, Opt13bOnA100DecodeBatch32IsTensOfMilliseconds) {
  const RooflineCostModel r(model_preset("opt-13b"), gpu_preset("a100-40gb"));
  std::printf("%s\n", r.describe().c_str());
  const auto show = [&](const char* what, const BatchShape& s) {
    const RooflineBreakdown b = r.breakdown(s);
    std::printf(
        "  %-18s %8.3f ms = overhead %.3f + linear %.3f (%s) + prefill attn %.3f + decode attn "
        "%.3f (%s) + lm head %.3f\n",
        what, b.total_seconds() * 1e3, b.overhead_seconds * 1e3, b.linear.seconds() * 1e3,
        b.linear.compute_bound() ? "compute" : "memory", b.prefill_attention.seconds() * 1e3,
        b.decode_attention.seconds() * 1e3,
        b.decode_attention.compute_bound() ? "compute" : "memory", b.lm_head.seconds() * 1e3);
    return b.total_seconds();
  };
  show("decode 1 x 512", decode_batch(1, 512));
  const double t32 = show("decode 32 x 512", decode_batch(32, 512));
  show("decode 128 x 512", decode_batch(128, 512));
  show("prefill 2048", prefill_batch(2048));
  BatchShape mixed = decode_batch(64, 700);
  mixed.add_prefill_chunk(512, 0, true);
  show("512 + decode 64x700", mixed);
  EXPECT_GT(t32, 0.010);
  EXPECT_LT(t32, 0.100);
}

TEST(CostRoofline, MonotoneInEveryInput) {
  for (const char* model : {"opt-13b", "llama-3-8b"}) {
    const RooflineCostModel r(model_preset(model), gpu_preset("a100-40gb"));
    BatchShape base = decode_batch(8, 300);
    base.add_prefill_chunk(100, 50, true);
    const std::vector<std::function<void(BatchShape&)>> grow = {
        [](BatchShape& b) { b.add_decode_seq(1); },
        [](BatchShape& b) { b.decode_context_tokens += 1000; },
        [](BatchShape& b) { b.add_prefill_chunk(1, 0, false); },
        [](BatchShape& b) { b.add_prefill_chunk(4000, 0, true); },
        [](BatchShape& b) { b.prefill_tokens += 10; },
        [](BatchShape& b) { b.prefill_attention_pairs += 1e7; },
        [](BatchShape& b) { b.prefill_context_tokens += 10000; },
        [](BatchShape& b) { b.prefill_sampling_seqs += 1; },
    };
    for (std::size_t i = 0; i < grow.size(); ++i) {
      BatchShape s = base;
      double before = r.iteration_seconds(s);
      for (int step = 0; step < 20; ++step) {
        grow[i](s);
        const double after = r.iteration_seconds(s);
        EXPECT_GT(after, before) << model << " input " << i << " step " << step;
        before = after;
      }
    }
    // From an empty batch, any work costs more than nothing.
    EXPECT_GT(r.iteration_seconds(decode_batch(1, 1)), 0.0);
  }
}

// A decode run's price with its constant terms computed once is iteration_seconds()' bit for
// bit, on every preset (latent attention, sliding windows, recurrent state included), at tp 1
// and 2, and on the toy models with cross-attention and sliding-window groups.
TEST(CostRoofline, DecodeRunPriceIsIterationSecondsBitForBit) {
  std::vector<std::unique_ptr<RooflineCostModel>> models;
  for (std::string_view name : model_preset_names()) {
    const ModelSpec m = model_preset(name);
    models.push_back(std::make_unique<RooflineCostModel>(m, gpu_preset("h100-sxm")));
    try {
      models.push_back(std::make_unique<RooflineCostModel>(m, gpu_preset("h100-sxm"), 2));
    } catch (const CostModelError&) {  // a model that does not split over 2 GPUs
    }
  }
  models.push_back(std::make_unique<RooflineCostModel>(toy_with_groups(alloc::LayerGroupKind::kCrossAttention, 0, 5), toy_gpu()));
  models.push_back(std::make_unique<RooflineCostModel>(toy_with_groups(alloc::LayerGroupKind::kSlidingWindow, 4, 0), toy_gpu(), 2));
  ASSERT_GE(models.size(), 20u);
  for (const auto& model : models) {
    const RooflineCostModel& r = *model;
    SCOPED_TRACE(r.describe());
    for (const std::int64_t seqs : {1, 3, 64}) {
      BatchShape b = decode_batch(seqs, 17 * seqs);
      const DecodeRunConstant c = r.decode_run_constant(b);
      EXPECT_TRUE(c.varies);
      for (int step = 0; step < 300; ++step) {
        b.decode_context_tokens += step < 200 ? seqs : 997 * seqs;
        const double whole = r.iteration_seconds(b), run = r.decode_run_seconds(b, c);
        ASSERT_EQ(std::memcmp(&whole, &run, sizeof whole), 0) << whole << " vs " << run << " at step " << step;
      }
    }
    // A batch with a prefill is priced whole.
    BatchShape mixed = decode_batch(2, 40);
    mixed.add_prefill_chunk(100, 0, true);
    EXPECT_FALSE(r.decode_run_constant(mixed).varies);
    EXPECT_EQ(r.decode_run_seconds(mixed, r.decode_run_constant(mixed)), r.iteration_seconds(mixed));
  }
}

// A deferred run's chunk, priced at once (decode_repeat_seconds), is each repeat's
// decode_run_seconds() plus the added seconds, bit for bit: on every preset, at tp 1 and 2, on
// the toy models with cross-attention and sliding-window groups, and with verified proposals
// (which take the general path).
TEST(CostRoofline, RepeatsPricedAtOnceAreEachRepeatsPriceBitForBit) {
  std::vector<std::unique_ptr<RooflineCostModel>> models;
  for (std::string_view name : model_preset_names()) {
    models.push_back(std::make_unique<RooflineCostModel>(model_preset(name), gpu_preset("a100-40gb")));
    try {
      models.push_back(std::make_unique<RooflineCostModel>(model_preset(name), gpu_preset("a100-40gb"), 2));
    } catch (const CostModelError&) {  // a model that does not split over 2 GPUs
    }
  }
  models.push_back(std::make_unique<RooflineCostModel>(toy_with_groups(alloc::LayerGroupKind::kCrossAttention, 0, 5), toy_gpu()));
  models.push_back(std::make_unique<RooflineCostModel>(toy_with_groups(alloc::LayerGroupKind::kSlidingWindow, 4, 0), toy_gpu(), 2));
  for (const auto& model : models) {
    const RooflineCostModel& r = *model;
    SCOPED_TRACE(r.describe());
    for (const std::int64_t seqs : {1, 5, 64}) {
      for (const std::int64_t verify : {0, 3}) {
        BatchShape b = decode_batch(seqs, 31 * seqs);
        if (verify > 0) {
          b.add_decode_seq(40);
          b.add_verified_tokens(verify, 40);
        }
        const DecodeRunConstant c = r.decode_run_constant(b);
        for (const double add_s : {0.0, 1.7e-5}) {
          std::vector<double> chunk(257);
          r.decode_repeat_seconds(b, c, add_s, chunk);
          BatchShape repeat = b;
          for (std::size_t i = 0; i < chunk.size(); ++i) {
            repeat.decode_context_tokens += repeat.decode_seqs;
            const double one = r.decode_run_seconds(repeat, c) + add_s;
            ASSERT_EQ(std::memcmp(&one, &chunk[i], sizeof one), 0) << one << " vs " << chunk[i] << " at repeat " << i;
          }
        }
      }
    }
  }
}

TEST(CostRoofline, TensorParallelReducesTime) {
  const ModelSpec opt = model_preset("opt-13b");
  const GpuSpec a100 = gpu_preset("a100-40gb");
  for (const BatchShape& s : {decode_batch(1, 512), decode_batch(32, 512), prefill_batch(2048)}) {
    const double t1 = RooflineCostModel(opt, a100, 1).iteration_seconds(s);
    const double t2 = RooflineCostModel(opt, a100, 2).iteration_seconds(s);
    const double t4 = RooflineCostModel(opt, a100, 4).iteration_seconds(s);
    std::printf("opt-13b tokens %lld: tp1 %.3f ms, tp2 %.3f ms, tp4 %.3f ms\n",
                static_cast<long long>(s.total_tokens()), t1 * 1e3, t2 * 1e3, t4 * 1e3);
    EXPECT_LT(t2, t1);
    EXPECT_LT(t4, t2);
  }
  const ModelSpec l70 = model_preset("llama-2-70b");
  const GpuSpec a80 = gpu_preset("a100-80gb");
  const BatchShape s = decode_batch(64, 1024);
  EXPECT_LT(RooflineCostModel(l70, a80, 8).iteration_seconds(s),
            RooflineCostModel(l70, a80, 4).iteration_seconds(s));
  // The all-reduce term appears only with tp > 1.
  EXPECT_EQ(RooflineCostModel(l70, a80, 1).breakdown(s).allreduce_seconds, 0.0);
  EXPECT_GT(RooflineCostModel(l70, a80, 4).breakdown(s).allreduce_seconds, 0.0);
}

TEST(CostRoofline, FasterGpuIsFaster) {
  const ModelSpec m = model_preset("llama-2-13b");
  const BatchShape s = decode_batch(32, 1024);
  const double a40 = RooflineCostModel(m, gpu_preset("a100-40gb")).iteration_seconds(s);
  const double a80 = RooflineCostModel(m, gpu_preset("a100-80gb")).iteration_seconds(s);
  const double h100 = RooflineCostModel(m, gpu_preset("h100-sxm")).iteration_seconds(s);
  const double h200 = RooflineCostModel(m, gpu_preset("h200")).iteration_seconds(s);
  EXPECT_LT(a80, a40);
  EXPECT_LT(h100, a80);
  EXPECT_LT(h200, h100);
}

TEST(CostRoofline, GroupedQueryAttentionReadsFewerKvBytes) {
  const GpuSpec g = gpu_preset("h100-sxm");
  const BatchShape s = decode_batch(64, 2048);
  const RooflineBreakdown mha = RooflineCostModel(model_preset("llama-2-7b"), g).breakdown(s);
  const RooflineBreakdown gqa = RooflineCostModel(model_preset("llama-3-8b"), g).breakdown(s);
  EXPECT_DOUBLE_EQ(mha.decode_attention.compute_seconds, gqa.decode_attention.compute_seconds);
  EXPECT_NEAR(gqa.decode_attention.memory_seconds / mha.decode_attention.memory_seconds, 0.25,
              0.01);
}

TEST(CostRoofline, SwapIsBytesOverPciePlusPerBlockOverhead) {
  const ModelSpec m = model_preset("opt-13b");
  const GpuSpec g = gpu_preset("a100-40gb");
  const RooflineCostModel r(m, g);
  for (std::int64_t blocks : {1, 10, 983}) {
    const double expected = static_cast<double>(blocks) * 16 * 819200 / 25e9 +
                            static_cast<double>(blocks) * g.swap_block_overhead_seconds;
    EXPECT_NEAR(r.swap_seconds(blocks, 16), expected, expected * 1e-12);
  }
  EXPECT_DOUBLE_EQ(RooflineCostModel(toy_model(), toy_gpu()).swap_seconds(3, 4),
                   3 * 4 * 64 / 10.0 + 3 * 0.125);
  // Under TP each GPU swaps its share over its own link.
  EXPECT_NEAR(RooflineCostModel(m, g, 2).swap_seconds(10, 16),
              10.0 * 16 * 819200 / 2 / 25e9 + 10 * g.swap_block_overhead_seconds, 1e-12);
}

TEST(CostRoofline, RejectsBadSettings) {
  EXPECT_THROW(RooflineCostModel(model_preset("opt-66b"), gpu_preset("a100-80gb"), 16),
               CostModelError);
  EXPECT_THROW(RooflineCostModel(model_preset("opt-13b"), gpu_preset("a100-80gb"), 0),
               CostModelError);
  GpuSpec g = gpu_preset("a100-40gb");
  g.compute_efficiency = 0;
  EXPECT_THROW(RooflineCostModel(model_preset("opt-13b"), g), CostModelError);
  ModelSpec m = model_preset("opt-13b");
  m.layers = -1;
  EXPECT_THROW(RooflineCostModel(m, gpu_preset("a100-40gb")), CostModelError);
}

}  // namespace
}  // namespace pagesim::sim
