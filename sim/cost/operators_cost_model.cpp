#include "sim/cost/operators_cost_model.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>
#include <set>
#include <system_error>
#include <utility>

#include <fmt/format.h>

#include "sim/cost/cost_error.h"

namespace pagesim::sim {

// Facts taken from ai-dynamo/aiconfigurator at 095f58a5 (sim/cost/operator_tables/README.md):
//   llama.py   aic-core/src/aiconfigurator_core/sdk/models/llama.py: qkv/proj/gate_ffn1/ffn2
//              GEMM shapes (lines 68-125), logits GEMM in bfloat16 (130-135), one embedding
//              all-reduce and two per layer of h elements per token (202-204)
//   blocks     aic-core/.../sdk/models/blocks/moe.py: router GEMM hidden → experts in bfloat16
//              (318-324), shared experts' gate_up / ffn2 at shared·moe_inter/tp (331-360), the
//              fused MoE op at (hidden, moe_inter, topk, experts, moe_tp, moe_ep) (388-400)
//   comm.rs    aic-core/rust/.../operators/communication.rs:69: message_size = tokens · hidden
//              (elements)

namespace {

constexpr std::string_view kGemmColumns[] = {"dtype", "m", "n", "k"};
constexpr std::string_view kContextColumns[] = {"kv_dtype", "head_dim", "num_heads", "num_kv_heads", "batch", "isl"};
constexpr std::string_view kGenerationColumns[] = {"kv_dtype",     "head_dim", "num_heads",
                                                   "num_kv_heads", "batch",    "kv_tokens"};
constexpr std::string_view kContextMlaColumns[] = {"kv_dtype", "num_heads", "batch", "isl"};
constexpr std::string_view kGenerationMlaColumns[] = {"kv_dtype", "num_heads", "batch", "kv_tokens"};
constexpr std::string_view kMoeColumns[] = {"dtype", "hidden", "inter", "topk", "experts", "moe_tp", "moe_ep", "num_tokens"};
constexpr std::string_view kAllreduceColumns[] = {"num_gpus", "message_elements"};

std::string join(const std::vector<std::string>& names) {
  return names.empty() ? std::string("(none)") : fmt::format("{}", fmt::join(names, ", "));
}

// The table dtype of weights of `bytes` bytes per element.
std::string weight_dtype(double bytes, std::string_view what) {
  if (bytes == 2) return "bfloat16";
  if (bytes == 1) return "fp8";
  throw CostModelError(fmt::format("operators cost model: {} of {} bytes per element have no measured GEMM or MoE "
                                   "table (the tables hold bfloat16 and fp8)",
                                   what, bytes));
}

// The table dtype of the model's KV cache (fp16 is priced as bf16: the same bytes read).
std::string kv_dtype_name(const ModelSpec& m) {
  switch (m.kv_dtype) {
    case KvDtype::kAuto:
      if (m.dtype_bytes == 1) return "fp8";
      if (m.dtype_bytes == 2) return "bfloat16";
      break;
    case KvDtype::kFp16:
    case KvDtype::kBf16: return "bfloat16";
    case KvDtype::kFp8: return "fp8";
    case KvDtype::kInt4: break;
  }
  throw CostModelError(fmt::format("operators cost model: the KV cache of {} ({}) has no measured attention table "
                                   "(the tables hold bfloat16 and fp8 KV)",
                                   m.name, m.kv_dtype == KvDtype::kInt4 ? "int4" : "dtype_bytes " + std::to_string(m.dtype_bytes)));
}

// Rows of `t` whose named text columns equal the given values.
std::vector<std::size_t> select(const OperatorTable& t,
                                std::initializer_list<std::pair<std::string_view, std::string>> equal,
                                const std::function<bool(std::size_t)>& extra = {}) {
  std::vector<std::pair<std::size_t, std::string>> cols;
  for (const auto& [name, value] : equal) cols.emplace_back(t.column(name), value);
  std::vector<std::size_t> rows;
  for (std::size_t r = 0; r < t.rows(); ++r) {
    bool ok = true;
    for (const auto& [c, v] : cols) ok = ok && t.text(r, c) == v;
    if (ok && (!extra || extra(r))) rows.push_back(r);
  }
  return rows;
}

// The distinct values of column `name` (in the given rows, or all rows), sorted.
std::vector<std::string> distinct(const OperatorTable& t, std::string_view name,
                                  const std::vector<std::size_t>* rows = nullptr) {
  std::set<std::string> seen;
  const std::size_t c = t.column(name);
  if (rows) {
    for (std::size_t r : *rows) seen.emplace(t.text(r, c));
  } else {
    for (std::size_t r = 0; r < t.rows(); ++r) seen.emplace(t.text(r, c));
  }
  return {seen.begin(), seen.end()};
}

OperatorTable read_table(const std::filesystem::path& folder, std::string_view file, std::string_view op,
                         std::span<const std::string_view> columns) {
  const std::filesystem::path path = folder / file;
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw CostModelError(fmt::format("operators cost model: operator {} has no table: {} does not exist", op,
                                     path.string()));
  return OperatorTable::read(path, columns);
}

// Why the tables' context_mla / generation_mla cannot price this model's latent attention
// ("" when they can). They were measured on DeepSeek-V3's shape (aiconfigurator's
// collector/vllm/fake_mla_hf_model/config.json), dense, bf16 or fp8 latents.
std::string mla_table_refusal(const ModelSpec& m, const std::filesystem::path& folder) {
  const LatentAttention& a = m.mla;
  if (a.sparse()) return "DeepSeek-V3.2's sparse attention and indexer are not in the tables";
  if (a.kv_lora_rank != 512 || a.qk_rope_head_dim != 64 || a.qk_nope_head_dim != 128 || a.v_head_dim != 128) {
    return fmt::format("the tables measure DeepSeek-V3's MLA shape (kv_lora_rank 512, qk_rope 64, qk_nope 128, "
                       "v 128), not {}'s ({}, {}, {}, {})",
                       m.name, a.kv_lora_rank, a.qk_rope_head_dim, a.qk_nope_head_dim, a.v_head_dim);
  }
  std::error_code ec;
  if (!std::filesystem::is_regular_file(folder / "context_mla.csv", ec) ||
      !std::filesystem::is_regular_file(folder / "generation_mla.csv", ec)) {
    return fmt::format("{} has no context_mla.csv and generation_mla.csv", folder.string());
  }
  return {};
}

void check_setting(bool ok, std::string_view name, double value, std::string_view expected) {
  if (!ok) throw CostModelError(fmt::format("operators cost model: {} = {}, expected {}", name, value, expected));
}

}  // namespace

struct OperatorsCostModel::GemmOp {
  std::string name;            // for describe() and errors
  double n = 0, k = 0;         // weight shape (k × n)
  double count = 0;            // calls per iteration (layers)
  bool lm_head = false;        // S rows, unpadded; else M rows
  const OperatorGrid* grid = nullptr;
};

// One attention table's lookup for a layer group: the grid over (prefix..., batch, length),
// the head coordinates, and the batch factor of folded kv heads (see the header).
struct AttentionLookup {
  std::unique_ptr<OperatorGrid> grid;
  std::vector<double> prefix;  // {n} for MHA, {n_kv, n} for GQA (after folding)
  double batch_fold = 1;       // f: the batch is looked up at f · batch
  bool folded = false;         // f > 1: every lookup is outside the measured kv heads
};

struct OperatorsCostModel::AttentionGroup {
  double layers = 0;
  double window = 0;           // W (sliding) or C (chunked local); 0: full
  AttentionLookup context;     // length axis: isl
  AttentionLookup generation;  // length axis: kv_tokens
};

// aiconfigurator's memory-op formula (operators/attention.rs mem_op_latency_ms; systems/*.yaml
// mem_bw_empirical_scaling_factor and mem_empirical_constant_latency, equal for every GPU).
constexpr double kMemoryOpBandwidthShare = 0.8;
constexpr double kMemoryOpFloorSeconds = 3e-6;

struct OperatorsCostModel::Tally {
  std::array<std::int64_t, kOps> lookups{};
  std::array<std::int64_t, kOps> extrapolated{};
};

OperatorsCostModel::~OperatorsCostModel() = default;

OperatorsCostModel::OperatorsCostModel(ModelSpec model, GpuSpec gpu, int tp, OperatorsCostParams settings)
    : model_(std::move(model)), gpu_(std::move(gpu)), tp_(tp), settings_(std::move(settings)) {
  model_.validate();
  gpu_.validate();
  model_.check_tensor_parallel(tp_);
  check_setting(std::isfinite(settings_.gpu_scale) && settings_.gpu_scale > 0, "gpu_scale", settings_.gpu_scale,
                "a finite factor > 0");
  check_setting(std::isfinite(settings_.host_step_s) && settings_.host_step_s >= 0, "host_step_s",
                settings_.host_step_s, "finite seconds >= 0");
  check_setting(std::isfinite(settings_.host_per_seq_s) && settings_.host_per_seq_s >= 0, "host_per_seq_s",
                settings_.host_per_seq_s, "finite seconds >= 0");
  swap_ = PcieSwapCost::of(model_, gpu_, tp_);

  // The folder: tables / gpu / engine, each level named when missing.
  std::error_code ec;
  if (!std::filesystem::is_directory(settings_.tables, ec))
    throw CostModelError(fmt::format("operators cost model: the operator tables folder {} does not exist",
                                     settings_.tables.string()));
  const std::filesystem::path gpu_dir = settings_.tables / settings_.gpu;
  if (settings_.gpu.empty() || !std::filesystem::is_directory(gpu_dir, ec))
    throw CostModelError(fmt::format("operators cost model: no operator tables for gpu '{}' in {}; measured GPUs: {}",
                                     settings_.gpu, settings_.tables.string(),
                                     join(operator_table_folders(settings_.tables))));
  folder_ = gpu_dir / settings_.engine;
  if (settings_.engine.empty() || !std::filesystem::is_directory(folder_, ec))
    throw CostModelError(fmt::format("operators cost model: no operator tables for engine '{}' of gpu '{}' in {}; "
                                     "measured engines: {}",
                                     settings_.engine, settings_.gpu, gpu_dir.string(),
                                     join(operator_table_folders(gpu_dir))));

  const std::vector<ModelLayerGroup> groups = model_.layer_groups_or_uniform();
  for (const ModelLayerGroup& g : groups)
    if (g.kind == alloc::LayerGroupKind::kCrossAttention || g.kind == alloc::LayerGroupKind::kRecurrent)
      throw CostModelError(fmt::format(
          "operators cost model: {} has {} {} layers, an operator the tables do not measure (they hold GEMMs, "
          "causal self-attention, fused MoE and all-reduce)",
          model_.name, g.layers, alloc::to_string(g.kind)));

  const double t = tp_;
  const double hidden = static_cast<double>(model_.hidden);
  const double layers = static_cast<double>(model_.layers);
  const double n_q = static_cast<double>(model_.heads_per_gpu(tp_));
  const double n_kv = static_cast<double>(model_.kv_heads_per_gpu(tp_));
  const double head_dim = static_cast<double>(model_.head_dim);

  // ---- GEMMs ----
  const OperatorTable gemm = read_table(folder_, "gemm.csv", "gemm", kGemmColumns);
  const std::vector<std::string> gemm_dtypes = distinct(gemm, "dtype");
  auto gemm_grid = [&](const std::string& dtype, std::string_view what) -> const OperatorGrid* {
    const std::vector<std::size_t> rows = select(gemm, {{"dtype", dtype}});
    if (rows.empty())
      throw CostModelError(fmt::format("operators cost model: operator gemm ({}) has no {} rows in {}; its dtypes: {}",
                                       what, dtype, gemm.source(), join(gemm_dtypes)));
    gemm_grids_.push_back(std::make_unique<OperatorGrid>(
        gemm, rows, std::vector<GridAxis>{{gemm.column("n")}, {gemm.column("k")}, {gemm.column("m")}}));
    return gemm_grids_.back().get();
  };
  const double block_bytes =
      model_.block_weight_bytes > 0 ? model_.block_weight_bytes : static_cast<double>(model_.dtype_bytes);
  const OperatorGrid* weights = gemm_grid(weight_dtype(block_bytes, "weights"), "linear layers");
  const OperatorGrid* bf16 = weight_dtype(block_bytes, "weights") == "bfloat16"
                                 ? weights
                                 : gemm_grid("bfloat16", "lm head and router");
  const double dense_layers = layers - static_cast<double>(model_.moe_layers);
  if (model_.mla.enabled()) {
    mla_roofline_why_ = mla_table_refusal(model_, folder_);
    // The tables' MLA operator includes kv_b (prefill's up-projection, decode's absorption).
    add_mla_gemms(weights, /*with_kv_b=*/!mla_roofline_why_.empty());
  } else {
    gemms_.push_back({"qkv", (n_q + 2 * n_kv) * head_dim, hidden, layers, false, weights});
    gemms_.push_back({"o_proj", hidden, n_q * head_dim, layers, false, weights});
  }
  if (dense_layers > 0) {
    const double ffn = static_cast<double>(model_.ffn) / t;
    gemms_.push_back({model_.gated_mlp ? "gate_up" : "up", (model_.gated_mlp ? 2 : 1) * ffn, hidden, dense_layers,
                      false, weights});
    gemms_.push_back({"down", hidden, ffn, dense_layers, false, weights});
  }
  if (model_.moe_layers > 0) {
    moe_layers_ = static_cast<double>(model_.moe_layers);
    gemms_.push_back({"router", static_cast<double>(model_.experts), hidden, moe_layers_, false, bf16});
    if (model_.shared_experts > 0) {
      const double shared = static_cast<double>(model_.shared_experts * model_.expert_ffn) / t;
      gemms_.push_back({"shared_gate_up", 2 * shared, hidden, moe_layers_, false, weights});
      gemms_.push_back({"shared_down", hidden, shared, moe_layers_, false, weights});
    }
  }
  gemms_.push_back({"lm_head", static_cast<double>(model_.vocab) / t, hidden, 1, true, bf16});

  // ---- attention, per attending layer group ----
  // MLA: the tables' context_mla / generation_mla over (num_heads, batch, length), every layer,
  // where they measured the model's shape; else the roofline's MLA terms (mla_table_refusal).
  if (model_.mla.enabled() && !mla_roofline_why_.empty()) {
    mla_roofline_ = std::make_unique<RooflineCostModel>(model_, gpu_, tp_);
  } else if (model_.mla.enabled()) {
    const std::string kv = kv_dtype_name(model_);
    const double heads = static_cast<double>(model_.heads_per_gpu(tp_));
    auto grid = [&](std::string_view file, std::string_view op, std::span<const std::string_view> columns,
                    std::string_view length) {
      const OperatorTable table = read_table(folder_, file, op, columns);
      const std::vector<std::size_t> rows = select(table, {{"kv_dtype", kv}});
      if (rows.empty()) {
        throw CostModelError(fmt::format("operators cost model: operator {} has no rows for kv_dtype {} in {}; the "
                                         "table has kv_dtype {}",
                                         op, kv, table.source(), join(distinct(table, "kv_dtype"))));
      }
      AttentionLookup out;
      out.grid = std::make_unique<OperatorGrid>(
          table, rows,
          std::vector<GridAxis>{{table.column("num_heads")},
                                {table.column("batch")},
                                {table.column(length), length == "isl" ? AxisBlend::kSqrt : AxisBlend::kLinear}});
      out.prefix = {heads};
      return out;
    };
    AttentionGroup a;
    a.layers = static_cast<double>(model_.layers);
    a.context = grid("context_mla.csv", "context_mla", kContextMlaColumns, "isl");
    a.generation = grid("generation_mla.csv", "generation_mla", kGenerationMlaColumns, "kv_tokens");
    attention_.push_back(std::move(a));
  }
  const std::string kv = model_.mla.enabled() ? std::string() : kv_dtype_name(model_);
  const OperatorTable context = read_table(folder_, "context_attention.csv", "context_attention", kContextColumns);
  const OperatorTable generation =
      read_table(folder_, "generation_attention.csv", "generation_attention", kGenerationColumns);
  for (const ModelLayerGroup& g : groups) {
    if (model_.mla.enabled()) break;
    AttentionGroup a;
    a.layers = static_cast<double>(g.layers);
    if (g.kind == alloc::LayerGroupKind::kSlidingWindow || g.kind == alloc::LayerGroupKind::kChunkedLocal)
      a.window = static_cast<double>(g.window_tokens);
    const std::int64_t g_kv = ModelSpec::kv_heads_per_gpu(g.kv_heads, tp_);
    const std::int64_t g_q = model_.heads_per_gpu(tp_);
    const bool mha = g_kv == g_q;
    auto grid = [&](const OperatorTable& table, std::string_view op, std::string_view length) {
      const std::size_t heads = table.column("num_heads");
      const std::size_t kv_heads = table.column("num_kv_heads");
      const std::vector<std::size_t> rows =
          select(table, {{"kv_dtype", kv}, {"head_dim", std::to_string(g.head_dim)}},
                 [&](std::size_t r) { return (table.text(r, heads) == table.text(r, kv_heads)) == mha; });
      if (rows.empty()) {
        const std::vector<std::size_t> of_kv = select(table, {{"kv_dtype", kv}});
        throw CostModelError(fmt::format(
            "operators cost model: operator {} has no rows for kv_dtype {}, head_dim {}, {} in {}; the table has "
            "kv_dtype {} and, for {}, head_dim {}",
            op, kv, g.head_dim, mha ? "MHA (num_heads == num_kv_heads)" : "GQA", table.source(),
            join(distinct(table, "kv_dtype")), kv, join(distinct(table, "head_dim", &of_kv))));
      }
      std::vector<GridAxis> axes;
      if (!mha) axes.push_back({kv_heads});
      axes.push_back({heads});
      axes.push_back({table.column("batch")});
      // Prefill latency grows ~quadratically in the sequence: blended in sqrt space.
      axes.push_back({table.column(length), length == "isl" ? AxisBlend::kSqrt : AxisBlend::kLinear});
      AttentionLookup out;
      out.grid = std::make_unique<OperatorGrid>(table, rows, std::move(axes));
      // The outer axis is the kv heads (num_heads for MHA rows). More kv heads than measured
      // fold into the batch: (n, n_kv, b) → (n/f, n_kv/f, f·b) with f = n_kv / the most
      // measured, the same KV bytes, FLOPs and (sequence, kv head) work items.
      const double most = out.grid->outer_values().back();
      const double kv_heads_here = static_cast<double>(g_kv);
      out.batch_fold = kv_heads_here > most ? kv_heads_here / most : 1;
      out.folded = out.batch_fold > 1;
      const double f = out.batch_fold;
      out.prefix = mha ? std::vector<double>{static_cast<double>(g_q) / f}
                       : std::vector<double>{kv_heads_here / f, static_cast<double>(g_q) / f};
      return out;
    };
    a.context = grid(context, "context_attention", "isl");
    a.generation = grid(generation, "generation_attention", "kv_tokens");
    attention_.push_back(std::move(a));
  }

  // ---- MoE ----
  if (model_.moe_layers > 0) {
    const double expert_bytes =
        model_.expert_weight_bytes > 0 ? model_.expert_weight_bytes : static_cast<double>(model_.dtype_bytes);
    const std::string dtype = weight_dtype(expert_bytes, "expert weights");
    const OperatorTable moe = read_table(folder_, "moe.csv", "moe", kMoeColumns);
    const std::vector<std::size_t> rows =
        select(moe, {{"dtype", dtype},
                     {"hidden", std::to_string(model_.hidden)},
                     {"inter", std::to_string(model_.expert_ffn)},
                     {"topk", std::to_string(model_.active_experts)},
                     {"experts", std::to_string(model_.experts)},
                     {"moe_tp", std::to_string(tp_)},
                     {"moe_ep", "1"}});
    std::vector<std::size_t> transferred;
    if (rows.empty()) transferred = transfer_moe_shape(moe, dtype);
    if (rows.empty() && transferred.empty()) {
      std::set<std::string> shapes;
      for (std::size_t r = 0; r < moe.rows(); ++r)
        if (moe.text(r, moe.column("dtype")) == dtype)
          shapes.insert(fmt::format("{}/{}/{}/{} tp {}", moe.text(r, moe.column("hidden")), moe.text(r, moe.column("inter")),
                                    moe.text(r, moe.column("topk")), moe.text(r, moe.column("experts")),
                                    moe.text(r, moe.column("moe_tp"))));
      throw CostModelError(fmt::format(
          "operators cost model: operator moe has no rows for {} experts of hidden {}, inter {}, top-{} of {}, "
          "moe_tp {}, moe_ep 1 in {}, nor a shape of that dtype and moe_tp within 10% of its top-k/experts share "
          "to scale from; measured hidden/inter/topk/experts and moe_tp: {}",
          dtype, model_.hidden, model_.expert_ffn, model_.active_experts, model_.experts, tp_, moe.source(),
          join({shapes.begin(), shapes.end()})));
    }
    moe_grid_ = std::make_unique<OperatorGrid>(moe, rows.empty() ? transferred : rows,
                                               std::vector<GridAxis>{{moe.column("num_tokens")}});
  }

  // ---- all-reduce ----
  if (tp_ > 1) {
    const OperatorTable ar = read_table(folder_, "allreduce.csv", "allreduce", kAllreduceColumns);
    const std::vector<std::size_t> rows = select(ar, {{"num_gpus", std::to_string(tp_)}});
    if (rows.empty())
      throw CostModelError(fmt::format("operators cost model: operator allreduce has no rows for num_gpus {} in {}; "
                                       "measured num_gpus: {}",
                                       tp_, ar.source(), join(distinct(ar, "num_gpus"))));
    allreduce_grid_ =
        std::make_unique<OperatorGrid>(ar, rows, std::vector<GridAxis>{{ar.column("message_elements")}});
    allreduces_ = 2 * layers + 1;
  }

  // ---- memory-bound ops (aiconfigurator's ElementWise and Embedding) ----
  if (settings_.memory_ops) {
    const double ffn = static_cast<double>(model_.ffn) / t;
    const double act_in = (model_.gated_mlp ? 2 : 1) * ffn;
    memory_op_calls_ = 2 * layers + dense_layers + 1;
    memory_op_bytes_per_token_ = layers * 2 * (8 * hidden) + dense_layers * (2 * act_in + 2 * ffn) + 2 * hidden;
  }
}

void OperatorsCostModel::add_mla_gemms(const OperatorGrid* weights, bool with_kv_b) {
  // vLLM's DeepseekV2MLAAttention: fused_qkv_a_proj (hidden → q_lora_rank + rank + rope,
  // replicated) then q_b_proj (column-parallel), or q_proj and kv_a_proj_with_mqa without query
  // compression; kv_b_proj (rank → heads/t × (nope + v)) for the prefill's new tokens, the same
  // weights as the absorbed bmm of decode; o_proj (row-parallel). The indexer's wq_b and
  // wk + weights_proj are replicated.
  const LatentAttention& a = model_.mla;
  const double hidden = static_cast<double>(model_.hidden);
  const double layers = static_cast<double>(model_.layers);
  const double hq = static_cast<double>(model_.heads_per_gpu(tp_));
  const double qk = static_cast<double>(a.qk_nope_head_dim + a.qk_rope_head_dim);
  const double cached = static_cast<double>(a.cached_dim());
  if (a.q_lora_rank > 0) {
    gemms_.push_back({"fused_qkv_a", static_cast<double>(a.q_lora_rank) + cached, hidden, layers, false, weights});
    gemms_.push_back({"q_b", hq * qk, static_cast<double>(a.q_lora_rank), layers, false, weights});
  } else {
    gemms_.push_back({"q", hq * qk, hidden, layers, false, weights});
    gemms_.push_back({"kv_a", cached, hidden, layers, false, weights});
  }
  if (with_kv_b) {
    gemms_.push_back({"kv_b", hq * static_cast<double>(a.qk_nope_head_dim + a.v_head_dim),
                      static_cast<double>(a.kv_lora_rank), layers, false, weights});
  }
  gemms_.push_back({"o_proj", hidden, hq * static_cast<double>(a.v_head_dim), layers, false, weights});
  if (a.sparse()) {
    gemms_.push_back({"indexer_wq_b", static_cast<double>(a.index_n_heads * a.index_head_dim),
                      static_cast<double>(a.q_lora_rank), layers, false, weights});
    gemms_.push_back({"indexer_wk", static_cast<double>(a.index_head_dim + a.index_n_heads), hidden, layers, false,
                      weights});
  }
}

std::vector<std::size_t> OperatorsCostModel::transfer_moe_shape(const OperatorTable& moe, const std::string& dtype) {
  // The fused-MoE kernel reads the weights of the experts a batch touches and multiplies each
  // token by its top-k experts. Two shapes with the same share top-k / experts touch the same
  // share of their experts for a given token count, so both their weight reads (memory-bound
  // decode) and their FLOPs (compute-bound prefill) scale with the bytes of all experts,
  // experts · hidden · inter. So an unmeasured shape takes the measured one of its dtype and
  // moe_tp (moe_ep 1) whose share is nearest (then whose expert bytes are), scaled by the ratio
  // of expert bytes; every lookup of it counts as extrapolated.
  const auto num = [&](std::size_t r, const char* c) { return moe.number(r, moe.column(c)); };
  const auto text = [&](std::size_t r, const char* c) { return std::string(moe.text(r, moe.column(c))); };
  const double want_share = static_cast<double>(model_.active_experts) / static_cast<double>(model_.experts);
  const double want_bytes = static_cast<double>(model_.experts) * static_cast<double>(model_.hidden) *
                            static_cast<double>(model_.expert_ffn);
  const std::string tp = std::to_string(tp_);
  std::optional<std::size_t> best;  // a row of the nearest shape
  double best_score[2] = {1e300, 1e300};
  for (std::size_t r = 0; r < moe.rows(); ++r) {
    if (text(r, "dtype") != dtype || text(r, "moe_tp") != tp || text(r, "moe_ep") != "1") continue;
    const double share = num(r, "topk") / num(r, "experts");
    const double bytes = num(r, "experts") * num(r, "hidden") * num(r, "inter");
    const double score[2] = {std::abs(std::log(share / want_share)), std::abs(std::log(bytes / want_bytes))};
    if (score[0] < best_score[0] - 1e-12 || (std::abs(score[0] - best_score[0]) <= 1e-12 && score[1] < best_score[1])) {
      best_score[0] = score[0];
      best_score[1] = score[1];
      best = r;
    }
  }
  // Shares apart by more than 10% touch different shares of their experts: no transfer.
  if (!best || best_score[0] > std::log(1.1)) return {};
  const std::size_t b = *best;
  moe_transfer_scale_ = want_bytes / (num(b, "experts") * num(b, "hidden") * num(b, "inter"));
  moe_transfer_from_ = fmt::format("{}/{}/{}/{} (share {:.4g}; expert bytes × {:.4g})", text(b, "hidden"),
                                   text(b, "inter"), text(b, "topk"), text(b, "experts"),
                                   num(b, "topk") / num(b, "experts"), moe_transfer_scale_);
  return select(moe, {{"dtype", dtype},
                      {"hidden", text(b, "hidden")},
                      {"inter", text(b, "inter")},
                      {"topk", text(b, "topk")},
                      {"experts", text(b, "experts")},
                      {"moe_tp", tp},
                      {"moe_ep", "1"}});
}

GridLookup OperatorsCostModel::lookup(const OperatorGrid& grid, std::span<const double> coords, Operator op,
                                      Tally& tally) const {
  const GridLookup out = grid(coords);
  const auto i = static_cast<std::size_t>(op);
  ++tally.lookups[i];
  tally.extrapolated[i] += out.extrapolated ? 1 : 0;
  return out;
}

OperatorsBreakdown OperatorsCostModel::breakdown(const BatchShape& batch) const {
  OperatorsBreakdown out;
  if (batch.empty()) return out;
  Tally tally;
  out.tokens = batch.total_tokens();
  out.padded_tokens = settings_.cuda_graphs.padded_tokens(out.tokens);
  const double m = static_cast<double>(out.padded_tokens);
  const double sampled = static_cast<double>(batch.sampling_seqs());

  for (const GemmOp& g : gemms_) {
    const double rows = g.lm_head ? sampled : m;
    if (rows <= 0) continue;
    const double coords[] = {g.n, g.k, rows};
    const double s = g.count * lookup(*g.grid, coords, Operator::kGemm, tally).seconds;
    (g.lm_head ? out.lm_head_seconds : out.gemm_seconds) += s;
  }

  for (const AttentionGroup& a : attention_) {
    // (prefix..., batch · fold, length) of one attention lookup.
    auto attention = [&](const AttentionLookup& l, double seqs, double length, Operator op) {
      std::array<double, 4> coords{};
      std::copy(l.prefix.begin(), l.prefix.end(), coords.begin());
      const std::size_t p = l.prefix.size();
      coords[p] = seqs * l.batch_fold;
      coords[p + 1] = length;
      GridLookup r = lookup(*l.grid, std::span<const double>(coords.data(), p + 2), op, tally);
      if (l.folded && !r.extrapolated) ++tally.extrapolated[static_cast<std::size_t>(op)];
      return r.seconds;
    };
    if (batch.prefill_seqs > 0) {
      const double chunks = static_cast<double>(batch.prefill_seqs);
      double length = static_cast<double>(batch.prefill_context_tokens) / chunks;
      double pairs = batch.prefill_attention_pairs;
      if (a.window > 0) {
        length = std::min(length, a.window);
        pairs = std::min(pairs, static_cast<double>(batch.prefill_tokens) * a.window);
      }
      const double equivalent_pairs = chunks * length * (length + 1) / 2;
      out.context_attention_seconds += a.layers *
                                       attention(a.context, chunks, length, Operator::kContextAttention) *
                                       (pairs / equivalent_pairs);
    }
    if (batch.decode_seqs > 0) {
      const double seqs = static_cast<double>(batch.decode_seqs);
      double length = static_cast<double>(batch.decode_context_tokens) / seqs;
      if (a.window > 0) length = std::min(length, a.window);
      out.generation_attention_seconds +=
          a.layers * attention(a.generation, seqs, length, Operator::kGenerationAttention);
    }
  }

  if (mla_roofline_) {
    const RooflineBreakdown r = mla_roofline_->breakdown(batch);
    out.context_attention_seconds += r.prefill_attention.seconds();
    out.generation_attention_seconds += r.decode_attention.seconds();
  }
  if (moe_grid_) {
    const double coords[] = {m};
    const GridLookup moe = lookup(*moe_grid_, coords, Operator::kMoe, tally);
    // A transferred shape is extrapolated at every point (transfer_moe_shape).
    if (moe_transfer_scale_ > 0 && !moe.extrapolated) ++tally.extrapolated[static_cast<std::size_t>(Operator::kMoe)];
    out.moe_seconds = moe_layers_ * moe.seconds * (moe_transfer_scale_ > 0 ? moe_transfer_scale_ : 1.0);
  }
  if (allreduce_grid_) {
    const double coords[] = {m * static_cast<double>(model_.hidden)};
    out.allreduce_seconds = allreduces_ * lookup(*allreduce_grid_, coords, Operator::kAllreduce, tally).seconds;
  }

  if (memory_op_calls_ > 0)
    out.memory_op_seconds = memory_op_calls_ * kMemoryOpFloorSeconds +
                            memory_op_bytes_per_token_ * m / (kMemoryOpBandwidthShare * gpu_.hbm_bytes_per_s);

  out.gpu_seconds = settings_.gpu_scale * (out.gemm_seconds + out.lm_head_seconds + out.context_attention_seconds +
                                           out.generation_attention_seconds + out.moe_seconds + out.allreduce_seconds +
                                           out.memory_op_seconds);
  out.host_seconds = settings_.host_step_s +
                     settings_.host_per_seq_s * static_cast<double>(batch.prefill_seqs + batch.decode_seqs);
  for (std::size_t i = 0; i < kOps; ++i) {
    if (tally.lookups[i]) lookups_[i].fetch_add(tally.lookups[i], std::memory_order_relaxed);
    if (tally.extrapolated[i]) extrapolated_[i].fetch_add(tally.extrapolated[i], std::memory_order_relaxed);
  }
  return out;
}

double OperatorsCostModel::swap_seconds(std::int64_t blocks, std::int64_t block_size) const {
  return swap_.seconds(blocks, block_size);
}

std::string OperatorsCostModel::describe() const {
  return fmt::format(
      "operators(model={}, gpu={}, tables={}/{}, tp={}, cuda_graph_max_size={}, gpu_scale={}, host_step_s={}, "
      "host_per_seq_s={}, memory_ops={})",
      model_.name, gpu_.name, settings_.gpu, settings_.engine, tp_, settings_.cuda_graphs.max_size(),
      settings_.gpu_scale, settings_.host_step_s, settings_.host_per_seq_s, settings_.memory_ops) +
         (moe_transfer_from_.empty() ? std::string() : "; moe from the measured shape " + moe_transfer_from_) +
         (mla_roofline_ ? "; mla attention priced by the roofline (" + mla_roofline_why_ + ")"
                        : model_.mla.enabled() ? "; mla attention from the tables' context_mla / generation_mla"
                                               : std::string());
}

CostNotes OperatorsCostModel::notes() const {
  CostNotes n;
  for (std::size_t i = 0; i < kOps; ++i) {
    n.lookups.emplace_back(kOperatorNames[i], lookups_[i].load(std::memory_order_relaxed));
    n.extrapolated_lookups.emplace_back(kOperatorNames[i], extrapolated_[i].load(std::memory_order_relaxed));
  }
  return n;
}

std::optional<std::string_view> operator_table_gpu(std::string_view gpu_preset) {
  static constexpr std::pair<std::string_view, std::string_view> kMap[] = {
      {"h100-sxm", "h100_sxm"}, {"h200", "h200_sxm"}, {"a100-80gb", "a100_sxm"}, {"l40s", "l40s"}};
  for (const auto& [preset, folder] : kMap)
    if (preset == gpu_preset) return folder;
  return std::nullopt;
}

std::vector<std::string> operator_table_folders(const std::filesystem::path& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec))
    if (e.is_directory(ec)) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

std::filesystem::path default_operator_tables() { return PAGESIM_OPERATOR_TABLES_DIR; }

}  // namespace pagesim::sim
