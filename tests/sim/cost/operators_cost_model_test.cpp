#include "sim/cost/operators_cost_model.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <functional>
#include <string>

#include "sim/cost/cost_error.h"
#include "sim/cost/presets.h"
#include "sim/cost/roofline_cost_model.h"
#include "temp_dir_test.h"

namespace pagesim::sim {
namespace {

const std::filesystem::path kTables = std::filesystem::path(PAGESIM_SOURCE_DIR) / "sim/cost/operator_tables";

OperatorsCostParams settings(std::string gpu = "h100_sxm") {
  OperatorsCostParams s;
  s.tables = kTables;
  s.gpu = std::move(gpu);
  return s;
}

OperatorsCostModel model(const std::string& preset, int tp = 1, OperatorsCostParams s = settings()) {
  return OperatorsCostModel(model_preset(preset), gpu_preset("h100-sxm"), tp, std::move(s));
}

BatchShape decode(std::int64_t seqs, std::int64_t context) {
  BatchShape b;
  for (std::int64_t i = 0; i < seqs; ++i) b.add_decode_seq(context);
  return b;
}

double empty_batch_memory_ops(const OperatorsCostModel& m) { return m.breakdown(BatchShape{}).memory_op_seconds; }

BatchShape prefill(std::int64_t tokens, std::int64_t cached = 0) {
  BatchShape b;
  b.add_prefill_chunk(tokens, cached, true);
  return b;
}

std::int64_t count(const std::vector<std::pair<std::string, std::int64_t>>& v, std::string_view name) {
  for (const auto& [k, n] : v)
    if (k == name) return n;
  ADD_FAILURE() << "no count for " << name;
  return -1;
}

// Mixtral-8x7B (mistralai/Mixtral-8x7B-v0.1 config.json: 32 layers, hidden 4096, 32 heads,
// 8 kv heads, head_dim 128, 8 experts top-2 of intermediate 14336, vocab 32000, every layer
// MoE).
ModelSpec mixtral() {
  ModelSpec m = model_preset("llama-3-8b");
  m.name = "mixtral-8x7b";
  m.vocab = 32000;
  m.ffn = 14336;
  m.moe_layers = 32;
  m.experts = 8;
  m.active_experts = 2;
  m.expert_ffn = 14336;
  m.max_seq_len = 32768;
  return m;
}

// The committed decode-attention row at (kv bf16, head_dim 128, 32 heads, 8 kv heads,
// batch 16, 1024 KV tokens), read from the table itself.
double generation_row_seconds() {
  constexpr std::string_view cols[] = {"kv_dtype", "head_dim", "num_heads", "num_kv_heads", "batch", "kv_tokens"};
  const OperatorTable t = OperatorTable::read(kTables / "h100_sxm/vllm-0.14.0/generation_attention.csv", cols);
  for (std::size_t r = 0; r < t.rows(); ++r)
    if (t.text(r, 0) == "bfloat16" && t.text(r, 1) == "128" && t.text(r, 2) == "32" && t.text(r, 3) == "8" &&
        t.text(r, 4) == "16" && t.text(r, 5) == "1024")
      return t.latency_us(r) * 1e-6;
  ADD_FAILURE() << "no such row";
  return 0;
}

TEST(OperatorsCost, ExactAtAMeasuredPoint) {
  // llama-3-8b at tp 1: 32 query and 8 kv heads per GPU, head_dim 128: one decode-attention
  // lookup per iteration, at a measured point when 16 sequences read 1024 tokens each.
  const OperatorsCostModel m = model("llama-3-8b");
  const OperatorsBreakdown b = m.breakdown(decode(16, 1024));
  EXPECT_EQ(b.generation_attention_seconds, 32 * generation_row_seconds());
  EXPECT_EQ(count(m.notes().extrapolated_lookups, "generation_attention"), 0);
}

TEST(OperatorsCost, GemmExactAtAMeasuredShapeAndMidwayBetweenNeighbours) {
  // llama-2-7b's o_proj is 4096 × 4096, on the grid; with graphs off a prefill of m tokens
  // runs every GEMM at m rows. Compare o_proj alone through a grid over the committed table.
  constexpr std::string_view cols[] = {"dtype", "m", "n", "k"};
  const OperatorTable t = OperatorTable::read(kTables / "h100_sxm/vllm-0.14.0/gemm.csv", cols);
  std::vector<std::size_t> rows;
  for (std::size_t r = 0; r < t.rows(); ++r)
    if (t.text(r, 0) == "bfloat16") rows.push_back(r);
  const OperatorGrid g(t, rows, {{t.column("n")}, {t.column("k")}, {t.column("m")}});
  double at2048 = 0, at4096 = 0;
  for (std::size_t r : rows)
    if (t.text(r, 2) == "4096" && t.text(r, 3) == "4096") {
      if (t.text(r, 1) == "2048") at2048 = t.latency_us(r) * 1e-6;
      if (t.text(r, 1) == "4096") at4096 = t.latency_us(r) * 1e-6;
    }
  const double exact[] = {4096, 4096, 2048};
  EXPECT_EQ(g(exact).seconds, at2048);
  const double mid[] = {4096, 4096, 3072};
  EXPECT_DOUBLE_EQ(g(mid).seconds, (at2048 + at4096) / 2);
  EXPECT_FALSE(g(mid).extrapolated);
}

TEST(OperatorsCost, MonotoneInTokensAndInContextWhereTheDataIs) {
  const OperatorsCostModel m = model("llama-3-8b");
  double last = 0;
  for (std::int64_t tokens = 512; tokens <= 8192; tokens += 256) {
    const double s = m.iteration_seconds(prefill(tokens));
    EXPECT_GE(s, last) << tokens << " prefill tokens";
    last = s;
  }
  last = 0;
  for (std::int64_t context = 1024; context <= 16384; context += 512) {
    const double s = m.breakdown(decode(16, context)).generation_attention_seconds;
    EXPECT_GE(s, last) << "context " << context;
    last = s;
  }
}

TEST(OperatorsCost, ExtrapolatedLookupsAreCountedPerOperator) {
  const OperatorsCostModel m = model("llama-3-8b");
  m.iteration_seconds(decode(16, 1024));
  CostNotes n = m.notes();
  EXPECT_EQ(count(n.lookups, "generation_attention"), 1);
  EXPECT_EQ(count(n.lookups, "context_attention"), 0);
  // qkv, o_proj, gate_up, down, lm_head; llama-3's LM head (n = 128256) is wider than the
  // widest measured GEMM (65536).
  EXPECT_EQ(count(n.lookups, "gemm"), 5);
  EXPECT_EQ(count(n.extrapolated_lookups, "gemm"), 1);
  // 10000 prefill tokens: M above the largest measured m (8192) for the four layer GEMMs.
  m.iteration_seconds(prefill(10000));
  n = m.notes();
  EXPECT_EQ(count(n.lookups, "gemm"), 10);
  EXPECT_EQ(count(n.extrapolated_lookups, "gemm"), 1 + 5);
  EXPECT_EQ(count(n.lookups, "context_attention"), 1);
  EXPECT_EQ(count(n.lookups, "moe"), 0);
  EXPECT_EQ(count(n.lookups, "allreduce"), 0);
  // llama-2-7b is MHA with 32 kv heads; decode attention was measured up to 8: extrapolated.
  const OperatorsCostModel mha = model("llama-2-7b");
  mha.iteration_seconds(decode(16, 600));
  EXPECT_EQ(count(mha.notes().extrapolated_lookups, "generation_attention"), 1);
  EXPECT_EQ(count(mha.notes().extrapolated_lookups, "gemm"), 0);
}

TEST(OperatorsCost, EmptyBatchCostsNothingAndCountsNothing) {
  const OperatorsCostModel m = model("llama-2-7b");
  EXPECT_EQ(m.iteration_seconds(BatchShape{}), 0.0);
  EXPECT_EQ(count(m.notes().lookups, "gemm"), 0);
}

TEST(OperatorsCost, CudaGraphsPadTheGemmTokensNotTheAttention) {
  OperatorsCostParams s = settings();
  s.cuda_graphs = CudaGraphSizes::vllm_default(512, 8192);
  const OperatorsCostModel graphs = model("llama-2-7b", 1, s);
  const OperatorsCostModel eager = model("llama-2-7b");
  const OperatorsBreakdown b13 = graphs.breakdown(decode(13, 600));
  EXPECT_EQ(b13.padded_tokens, 16);
  EXPECT_EQ(b13.tokens, 13);
  EXPECT_EQ(b13.gemm_seconds, eager.breakdown(decode(16, 600)).gemm_seconds);
  EXPECT_EQ(b13.generation_attention_seconds, eager.breakdown(decode(13, 600)).generation_attention_seconds);
  EXPECT_EQ(b13.lm_head_seconds, eager.breakdown(decode(13, 600)).lm_head_seconds);
  // Above the largest capture size the batch runs eagerly at its own size.
  EXPECT_EQ(graphs.breakdown(prefill(600)).padded_tokens, 600);
  EXPECT_NE(graphs.describe().find("cuda_graph_max_size=512"), std::string::npos) << graphs.describe();
}

TEST(OperatorsCost, HostTimeAndGpuScale) {
  OperatorsCostParams s = settings();
  s.gpu_scale = 2;
  s.host_step_s = 1e-3;
  s.host_per_seq_s = 1e-5;
  const OperatorsCostModel scaled = model("llama-2-7b", 1, s);
  const OperatorsCostModel plain = model("llama-2-7b");
  const BatchShape b = decode(10, 700);
  const OperatorsBreakdown x = scaled.breakdown(b);
  EXPECT_DOUBLE_EQ(x.gpu_seconds, 2 * plain.breakdown(b).gpu_seconds);
  EXPECT_DOUBLE_EQ(x.host_seconds, 1e-3 + 10 * 1e-5);
  EXPECT_DOUBLE_EQ(scaled.iteration_seconds(b), x.gpu_seconds + x.host_seconds);
  EXPECT_THROW(model("llama-2-7b", 1, [] { OperatorsCostParams t = settings(); t.gpu_scale = 0; return t; }()),
               CostModelError);
  EXPECT_THROW(model("llama-2-7b", 1, [] { OperatorsCostParams t = settings(); t.host_step_s = -1; return t; }()),
               CostModelError);
}

TEST(OperatorsCost, MemoryOpsAreAiconfiguratorsFormulaPerLayerAndStep) {
  // Llama-2-7B (32 dense layers, hidden 4096, ffn 11008, gated) at TP 1: per layer two
  // add+norm calls (8·h bytes per token each) and the activation ((2·2·ffn + 2·ffn) bytes per
  // token), once the embedding (2·h): 97 calls of 3 µs plus the bytes at 0.8 · 3.35 TB/s.
  OperatorsCostParams off = settings();
  off.memory_ops = false;
  const OperatorsCostModel with = model("llama-2-7b");
  const OperatorsCostModel without = model("llama-2-7b", 1, off);
  const BatchShape b = decode(10, 700);  // no CUDA graphs: M = 10
  const double bytes_per_token = 32 * (2 * 8 * 4096.0 + 6 * 11008.0) + 2 * 4096.0;
  const double expected = 97 * 3e-6 + bytes_per_token * 10 / (0.8 * 3.35e12);
  const OperatorsBreakdown x = with.breakdown(b);
  EXPECT_NEAR(x.memory_op_seconds, expected, 1e-12);
  EXPECT_EQ(without.breakdown(b).memory_op_seconds, 0);
  EXPECT_NEAR(x.gpu_seconds - without.breakdown(b).gpu_seconds, expected, 1e-12);
  // It grows with the layer count: a 70B's 80 layers at TP 4 pay 2.5 times the 3 µs floors.
  const OperatorsCostModel big = model("llama-2-70b", 4);
  const double big_bytes = 80 * (2 * 8 * 8192.0 + 6 * 28672.0 / 4) + 2 * 8192.0;
  EXPECT_NEAR(big.breakdown(decode(1, 100)).memory_op_seconds, (3 * 80 + 1) * 3e-6 + big_bytes / (0.8 * 3.35e12),
              1e-12);
  // Mixtral's MoE layers have no separate activation: two calls per layer and the embedding.
  OperatorsCostParams s = settings();
  const OperatorsCostModel moe(mixtral(), gpu_preset("h100-sxm"), 2, s);
  const double moe_bytes = 32 * 2 * 8 * 4096.0 + 2 * 4096.0;
  EXPECT_NEAR(moe.breakdown(decode(1, 100)).memory_op_seconds, (2 * 32 + 1) * 3e-6 + moe_bytes / (0.8 * 3.35e12),
              1e-12);
  EXPECT_EQ(empty_batch_memory_ops(with), 0);
}

TEST(OperatorsCost, PrefillAfterACachedPrefixPaysOnlyItsPairs) {
  // One chunk of 512 after 1536 cached tokens: the 2048-token lookup scaled by the chunk's
  // share of the causal pairs, (512·1536 + 512·513/2) / (2048·2049/2).
  const OperatorsCostModel m = model("llama-3-8b");
  const double full = m.breakdown(prefill(2048)).context_attention_seconds;
  const double chunk = m.breakdown(prefill(512, 1536)).context_attention_seconds;
  EXPECT_NEAR(chunk, full * (512.0 * 1536 + 512.0 * 513 / 2) / (2048.0 * 2049 / 2), 1e-15);
}

TEST(OperatorsCost, Llama2_7bDecodeStepIsPlausible) {
  // vLLM's measured decode step for ~10 sequences of ~700 tokens on an H100 is about 7.2 ms
  // with host time (experiments/sim_to_real: TPOT 3.6 ms, two messages per token); the GPU's
  // share is most of it.
  OperatorsCostParams s = settings();
  s.cuda_graphs = CudaGraphSizes::vllm_default(512, 8192);
  const OperatorsCostModel m = model("llama-2-7b", 1, s);
  for (std::int64_t seqs : {1, 16, 64}) {
    const OperatorsBreakdown b = m.breakdown(decode(seqs, 600));
    std::printf("llama-2-7b h100_sxm tp1 decode batch %lld @ context 600 (M=%lld): gemm %.3f ms, lm_head %.3f ms, "
                "decode attention %.3f ms, gpu %.3f ms\n",
                static_cast<long long>(seqs), static_cast<long long>(b.padded_tokens), b.gemm_seconds * 1e3,
                b.lm_head_seconds * 1e3, b.generation_attention_seconds * 1e3, b.gpu_seconds * 1e3);
  }
  const double gpu = m.breakdown(decode(10, 700)).gpu_seconds;
  std::printf("llama-2-7b h100_sxm tp1 decode batch 10 @ context 700: gpu %.3f ms\n", gpu * 1e3);
  EXPECT_GT(gpu, 4e-3);
  EXPECT_LT(gpu, 7.3e-3);
  // Reading 13.5 GB of weights takes at least the roofline's time at the HBM peak.
  const RooflineCostModel roof(model_preset("llama-2-7b"), gpu_preset("h100-sxm"), 1);
  EXPECT_GT(m.breakdown(decode(10, 700)).gemm_seconds, roof.breakdown(decode(10, 700)).linear.memory_seconds * 0.8);
}

TEST(OperatorsCost, MixtralAtTensorParallel2) {
  OperatorsCostParams s = settings();
  s.cuda_graphs = CudaGraphSizes::vllm_default(512, 8192);
  const OperatorsCostModel m(mixtral(), gpu_preset("h100-sxm"), 2, s);
  const OperatorsBreakdown d = m.breakdown(decode(16, 600));
  std::printf("mixtral-8x7b h100_sxm tp2 decode batch 16 @ 600: gemm %.3f ms, moe %.3f ms, decode attention %.3f ms, "
              "allreduce %.3f ms, lm_head %.3f ms, gpu %.3f ms\n",
              d.gemm_seconds * 1e3, d.moe_seconds * 1e3, d.generation_attention_seconds * 1e3,
              d.allreduce_seconds * 1e3, d.lm_head_seconds * 1e3, d.gpu_seconds * 1e3);
  EXPECT_GT(d.moe_seconds, 0);
  EXPECT_GT(d.allreduce_seconds, 0);
  EXPECT_GT(d.moe_seconds, d.gemm_seconds);  // the experts dominate the weights read
  EXPECT_GT(d.gpu_seconds, 5e-3);
  EXPECT_LT(d.gpu_seconds, 30e-3);
  const CostNotes n = m.notes();
  EXPECT_EQ(count(n.lookups, "moe"), 1);
  EXPECT_EQ(count(n.lookups, "allreduce"), 1);
  EXPECT_EQ(count(n.extrapolated_lookups, "moe"), 0);
  // A prefill of 4096 tokens costs more than the decode step, and more per token less.
  const OperatorsBreakdown p = m.breakdown(prefill(4096));
  EXPECT_GT(p.moe_seconds, d.moe_seconds);
  EXPECT_LT(p.gpu_seconds / 4096, d.gpu_seconds / 16);
}

TEST(OperatorsCost, SwapIsTheRooflinesPcieFormula) {
  const OperatorsCostModel m = model("llama-2-7b");
  const RooflineCostModel roof(model_preset("llama-2-7b"), gpu_preset("h100-sxm"), 1);
  EXPECT_EQ(m.swap_seconds(10, 16), roof.swap_seconds(10, 16));
  EXPECT_EQ(m.swap_seconds(0, 16), 0.0);
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const CostModelError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected CostModelError";
  return "";
}

TEST(OperatorsCost, RefusesAnUnknownGpuFolderListingTheMeasuredOnes) {
  const std::string e = error_of([] { model("llama-2-7b", 1, settings("h800")); });
  EXPECT_NE(e.find("gpu 'h800'"), std::string::npos) << e;
  EXPECT_NE(e.find("a100_sxm, h100_sxm, h200_sxm, l40s"), std::string::npos) << e;
}

TEST(OperatorsCost, RefusesAnUnknownEngineListingTheMeasuredOnes) {
  OperatorsCostParams s = settings();
  s.engine = "vllm-0.15.1";
  const std::string e = error_of([&] { model("llama-2-7b", 1, s); });
  EXPECT_NE(e.find("engine 'vllm-0.15.1'"), std::string::npos) << e;
  EXPECT_NE(e.find("vllm-0.14.0"), std::string::npos) << e;
}

TEST(OperatorsCost, RefusesAMissingTablesFolder) {
  OperatorsCostParams s = settings();
  s.tables = "/nonexistent/operator_tables";
  EXPECT_NE(error_of([&] { model("llama-2-7b", 1, s); }).find("/nonexistent/operator_tables"), std::string::npos);
}

TEST(OperatorsCost, RefusesAHeadDimTheTablesLack) {
  // gemma-2-9b: head_dim 256; the attention tables hold 128 only.
  const std::string e = error_of([] { model("gemma-2-9b"); });
  EXPECT_NE(e.find("context_attention"), std::string::npos) << e;
  EXPECT_NE(e.find("head_dim 256"), std::string::npos) << e;
  EXPECT_NE(e.find("context_attention.csv"), std::string::npos) << e;
}

TEST(OperatorsCost, AnUnmeasuredMoeShapeTakesTheNearestScaledByExpertBytes) {
  // Mixtral with experts of width 17920: no such measured shape; the measured 4096/14336/2/8
  // (the same top-k share) stands in, times 17920/14336 of its expert bytes, and every MoE
  // lookup counts as extrapolated.
  ModelSpec m = mixtral();
  m.expert_ffn = 17920;
  const OperatorsCostModel wide(m, gpu_preset("h100-sxm"), 1, settings());
  const OperatorsCostModel measured(mixtral(), gpu_preset("h100-sxm"), 1, settings());
  const BatchShape b = decode(16, 600);
  EXPECT_NEAR(wide.breakdown(b).moe_seconds, measured.breakdown(b).moe_seconds * 17920.0 / 14336.0, 1e-12);
  const CostNotes n = wide.notes();
  EXPECT_EQ(count(n.extrapolated_lookups, "moe"), count(n.lookups, "moe"));
  EXPECT_NE(wide.describe().find("moe from the measured shape 4096/14336/2/8"), std::string::npos)
      << wide.describe();
}

TEST(OperatorsCost, RefusesAnMoeShapeOrTpTheTablesLack) {
  // Top-2 of 3 experts: no measured shape within 10% of that share to scale from.
  ModelSpec three = mixtral();
  three.experts = 3;
  const std::string s = error_of([&] { OperatorsCostModel(three, gpu_preset("h100-sxm"), 1, settings()); });
  EXPECT_NE(s.find("within 10% of its top-k/experts share"), std::string::npos) << s;
  EXPECT_NE(s.find("4096/14336/2/8"), std::string::npos) << s;  // lists the measured shapes
  // int4 KV has no attention table.
  ModelSpec k = model_preset("llama-2-7b");
  k.kv_dtype = KvDtype::kInt4;
  EXPECT_NE(error_of([&] { OperatorsCostModel(k, gpu_preset("h100-sxm"), 1, settings()); }).find("int4"),
            std::string::npos);
}

class OperatorsCostFiles : public testing::TempDirTest {};

TEST_F(OperatorsCostFiles, RefusesAMissingOperatorTableNamingIt) {
  // A GPU folder without moe.csv: a dense model runs, an MoE model is refused naming the file.
  const std::filesystem::path engine = dir_ / "h100_sxm" / "vllm-0.14.0";
  std::filesystem::create_directories(engine);
  for (const char* f : {"gemm.csv", "context_attention.csv", "generation_attention.csv", "allreduce.csv"})
    std::filesystem::copy_file(kTables / "h100_sxm/vllm-0.14.0" / f, engine / f);
  OperatorsCostParams s = settings();
  s.tables = dir_;
  EXPECT_NO_THROW(model("llama-2-7b", 1, s));
  const std::string e = error_of([&] { OperatorsCostModel(mixtral(), gpu_preset("h100-sxm"), 2, s); });
  EXPECT_NE(e.find("operator moe"), std::string::npos) << e;
  EXPECT_NE(e.find((engine / "moe.csv").string()), std::string::npos) << e;
}

TEST(OperatorsCost, GpuPresetsMapToTableFolders) {
  EXPECT_EQ(operator_table_gpu("h100-sxm"), "h100_sxm");
  EXPECT_EQ(operator_table_gpu("h200"), "h200_sxm");
  EXPECT_EQ(operator_table_gpu("a100-80gb"), "a100_sxm");
  EXPECT_EQ(operator_table_gpu("l40s"), "l40s");
  EXPECT_FALSE(operator_table_gpu("a100-40gb").has_value());
  EXPECT_EQ(default_operator_tables(), kTables);
}

}  // namespace
}  // namespace pagesim::sim
