#include "sim/profile/profile_command.h"

#include <chrono>
#include <ctime>
#include <exception>
#include <optional>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "sim/cost/cost_error.h"
#include "sim/cost/operators_cost_model.h"
#include "sim/cost/presets.h"
#include "sim/cost/profile_cost_model.h"
#include "sim/output/atomic_file.h"
#include "sim/profile/operator_check.h"
#include "sim/profile/profile_table.h"
#if PAGESIM_HAVE_CUDA
#include "sim/profile/profile_measure.h"
#endif

namespace pagesim::sim {

namespace {

[[maybe_unused]] std::string utc_now() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string gemm_list(const std::vector<GemmShape>& gemms) {
  std::string s;
  for (const GemmShape& g : gemms) s += fmt::format("{}{} {}->{}", s.empty() ? "" : ", ", g.name, g.k, g.n);
  return s;
}

#if PAGESIM_HAVE_CUDA
// The operator check after the profile, or a line saying why it is skipped.
void run_operator_check(const ProfilePlan& plan, const ProfileOptions& o, const detail::ProfileDevice& device,
                        const std::string& command, std::ostream& out) {
  const std::optional<std::string> gpu = operator_check_gpu_preset(device.name);
  std::string skip;
  if (!plan.operator_check_skip.empty()) skip = plan.model.name + ": " + plan.operator_check_skip;
  else if (!gpu) skip = "no published operator tables describe " + device.name;
  else if (plan.operator_tables.empty())
    skip = default_operator_tables().string() + " does not exist (pass --operator-tables)";
  if (!skip.empty()) {
    out << "operator check: skipped: " << skip << "\n";
    return;
  }
  const std::vector<OperatorCheckPoint> points = operator_check_points(plan.model, o.grid.max_context);
  out << fmt::format("operator check against {}/{}: {} points\n", plan.operator_tables.string(),
                     *operator_table_gpu(*gpu), points.size());
  const std::vector<double> measured =
      detail::measure_operator_points(plan.model, points, o.grid.block_size, o.warmup, o.repeats, out);
  const std::vector<OperatorCheckRow> rows =
      operator_check_rows(plan.model, *gpu, plan.operator_tables, points, measured);
  const std::vector<std::string> comments = {
      "pagesim operator check: the operators cost.kind: operators reads, measured, beside the published tables",
      "device: " + device.describe(),
      "date: " + utc_now(),
      "command: " + command,
      fmt::format("model: {}, tensor parallel 1, bf16 weights and KV", plan.model.name),
      fmt::format("published: {}/{}/vllm-0.14.0 through OperatorsCostModel (the lookups a simulation makes), per "
                  "layer",
                  plan.operator_tables.string(), *operator_table_gpu(*gpu)),
      fmt::format("measured: CUDA events, {} warm-up runs, median of {} runs, L2 flushed before each run", o.warmup,
                  o.repeats),
      "gemm_layer: batch = tokens; one layer's cuBLAS bf16 GEMMs qkv, o_proj, gate_up (or up), down",
      "lm_head: batch = sampled sequences; the cuBLAS bf16 LM-head GEMM",
      fmt::format("context_attention: batch prompts of length tokens, no cached prefix; pagesim paged_prefill, block "
                  "size {} (published: vLLM's attention backend)",
                  o.grid.block_size),
      fmt::format("generation_attention: batch sequences reading length tokens of KV; pagesim paged_decode, block "
                  "size {} (published: vLLM's attention backend)",
                  o.grid.block_size),
      "ratio: measured / published",
  };
  write_file_atomically(plan.operators_out, operator_check_csv(comments, rows));
  out << fmt::format("wrote {} ({} rows)\n", plan.operators_out.string(), rows.size()) << operator_check_summary(rows);
}
#endif

}  // namespace

bool profile_has_cuda() {
#if PAGESIM_HAVE_CUDA
  return true;
#else
  return false;
#endif
}

bool profile_device_available(std::string* why) {
#if PAGESIM_HAVE_CUDA
  detail::ProfileDevice device;
  return detail::profile_device(&device, why);
#else
  if (why != nullptr) *why = "this pagesim was built without CUDA";
  return false;
#endif
}

std::string profile_command_line(const ProfileOptions& o) {
  const ProfileOptions d;
  const ProfileGridOptions& g = o.grid;
  const ProfileGridOptions& dg = d.grid;
  std::string s = fmt::format("pagesim profile --device {} --model {}", o.device, o.model);
  if (!o.out.empty()) s += " --out " + o.out.string();
  if (!o.operators_out.empty()) s += " --operators-out " + o.operators_out.string();
  if (!o.operator_tables.empty()) s += " --operator-tables " + o.operator_tables.string();
  if (o.warmup != d.warmup) s += fmt::format(" --warmup {}", o.warmup);
  if (o.repeats != d.repeats) s += fmt::format(" --repeats {}", o.repeats);
  if (g.max_tokens != dg.max_tokens) s += fmt::format(" --max-tokens {}", g.max_tokens);
  if (g.prefill_tokens != dg.prefill_tokens) s += fmt::format(" --prefill-tokens {}", g.prefill_tokens);
  if (g.max_decode_seqs != dg.max_decode_seqs) s += fmt::format(" --max-decode-seqs {}", g.max_decode_seqs);
  if (g.max_context != dg.max_context) s += fmt::format(" --max-context {}", g.max_context);
  if (g.block_size != dg.block_size) s += fmt::format(" --block-size {}", g.block_size);
  if (g.max_swap_blocks != dg.max_swap_blocks) s += fmt::format(" --max-swap-blocks {}", g.max_swap_blocks);
  if (g.swap_block_sizes != dg.swap_block_sizes) {
    s += fmt::format(" --swap-block-sizes {}", fmt::join(g.swap_block_sizes, ","));
  }
  return s;
}

std::vector<std::string> profile_header_comments(const ModelSpec& m, const ProfileOptions& o, const std::string& device,
                                                 const std::string& date_utc, const std::string& command) {
  const ProfileGridOptions& g = o.grid;
  std::vector<std::string> c = {
      "pagesim profile: measured seconds of each part of a forward pass (format: sim/cost/profile_cost_model.h)",
      "device: " + device,
      "date: " + date_utc,
      "command: " + command,
      fmt::format("model: {}: {} layers, hidden {}, {} query heads / {} KV heads, head_dim {}, ffn {}{}, vocab {}, "
                  "fp16; tensor parallel 1",
                  m.name, m.layers, m.hidden, m.heads, m.kv_heads, m.head_dim, m.ffn, m.gated_mlp ? " (gated)" : "",
                  m.vocab),
      m.moe_layers == 0
          ? fmt::format("method: CUDA events, {} warm-up runs, median of {} runs, L2 flushed before each run; "
                        "linear and attention rows are one layer's time x {} layers",
                        o.warmup, o.repeats, m.layers)
          : fmt::format("method: CUDA events, {} warm-up runs, median of {} runs, L2 flushed before each run; "
                        "linear, moe and attention rows are one layer's time x the layers that run it ({} layers, "
                        "{} of them MoE)",
                        o.warmup, o.repeats, m.layers, m.moe_layers),
      m.moe_layers == 0
          ? fmt::format("linear: x = tokens; cuBLAS fp16 GEMMs (fp32 compute) {}; norms, activations, embeddings, "
                        "communication and launch gaps between operators are not included",
                        gemm_list(layer_gemms(m)))
          : fmt::format("linear: x = tokens; cuBLAS fp16 GEMMs (fp32 compute), {} dense layers x ({}) + {} MoE "
                        "layers x ({}); norms, activations, embeddings, communication and launch gaps between "
                        "operators are not included",
                        m.layers - m.moe_layers, gemm_list(layer_gemms(m)), m.moe_layers,
                        gemm_list(attention_gemms(m))),
      fmt::format("attn_prefill: x = query-key pairs; paged_prefill, block size {}, batches of n fresh prompts of "
                  "L tokens (n = {} / L, or 1)",
                  g.block_size, g.prefill_tokens),
      fmt::format("attn_decode: x = sequences, y = context tokens per sequence; paged_decode (planner's v1/v2), "
                  "block size {}",
                  g.block_size),
      fmt::format("lm_head: x = sampled sequences; cuBLAS fp16 GEMM {}->{}", m.hidden, m.vocab),
      fmt::format("swap: x = blocks, y = block size; one cudaMemcpyAsync per block, layer and K/V between device "
                  "and pinned host memory, the slower direction; {} KV bytes per token",
                  m.kv_bytes_per_token_per_gpu(1)),
      "host: GPU work only; an engine's host time per step (scheduling, input preparation, sampling) is not "
      "included: add it with cost.iteration_overhead_s",
  };
  if (m.moe_layers > 0) {
    const MoeLayerShape s = moe_layer_shape(m);
    std::vector<GemmShape> gemms = {s.router, s.expert_gate_up, s.expert_down};
    gemms.insert(gemms.end(), s.shared.begin(), s.shared.end());
    c.insert(c.begin() + 7,
             fmt::format("moe: x = tokens; one MoE block x {} MoE layers: {} experts, top-{}, fp16 GEMMs {}; router "
                         "GEMM, top-k softmax, rows gathered by expert, cuBLAS per expert with tokens, SiLU-and-mul, "
                         "weighted combine{}; x tokens x top-{} assignments spread evenly over the experts "
                         "(ceil(x top-k / experts) tokens at most each)",
                         m.moe_layers, s.experts, s.top_k, gemm_list(gemms),
                         s.shared.empty() ? "" : " plus the shared experts' MLP on every token", s.top_k));
  }
  return c;
}

ProfilePlan plan_profile(const ProfileOptions& o) {
  if (o.device != "cuda") {
    throw std::invalid_argument(
        fmt::format("--device: '{}' is not supported; the profile measures a GPU: expected cuda", o.device));
  }
  if (o.model.empty()) {
    throw std::invalid_argument(
        fmt::format("--model: a model preset is required, one of: {}", fmt::join(model_preset_names(), ", ")));
  }
  if (o.repeats < 20) {
    throw std::invalid_argument(fmt::format("--repeats: at least 20 timed runs per point, got {}", o.repeats));
  }
  if (o.warmup < 0) throw std::invalid_argument(fmt::format("--warmup must be >= 0, got {}", o.warmup));
  ProfilePlan p;
  p.model = model_preset(o.model);
  p.grid = make_profile_grid(p.model, o.grid);
  p.out = o.out.empty() ? std::filesystem::path("profile-" + o.model + ".csv") : o.out;
  if (!o.operators_out.empty()) {
    p.operators_out = o.operators_out;
  } else {
    p.operators_out = p.out;
    p.operators_out.replace_filename(p.out.stem().string() + "-operators.csv");
  }
  if (p.operators_out == p.out)
    throw std::invalid_argument("--operators-out: " + p.operators_out.string() + " is also --out");
  std::error_code ec;
  if (!o.operator_tables.empty()) {
    if (!std::filesystem::is_directory(o.operator_tables, ec))
      throw std::invalid_argument("--operator-tables: " + o.operator_tables.string() +
                                  " is not a folder (expected sim/cost/operator_tables or a copy)");
    p.operator_tables = o.operator_tables;
  } else if (std::filesystem::is_directory(default_operator_tables(), ec)) {
    p.operator_tables = default_operator_tables();
  }
  p.operator_check_skip = operator_check_skip_reason(p.model);
  return p;
}

int run_profile_command(const ProfileOptions& options, std::ostream& out, std::ostream& err) {
  try {
    const ProfilePlan plan = plan_profile(options);
#if PAGESIM_HAVE_CUDA
    detail::ProfileDevice device;
    std::string why;
    if (!detail::profile_device(&device, &why)) {
      err << "error: pagesim profile: no usable CUDA device (" << why << "); run it on the GPU it describes\n";
      return 1;
    }
    const std::string command = options.command_line.empty() ? profile_command_line(options) : options.command_line;
    out << fmt::format("profiling {} on {}: {} points\n", plan.model.name, device.describe(), plan.grid.num_points());
    const ProfileTimings timings =
        detail::measure_profile(plan.model, plan.grid, options.grid, options.warmup, options.repeats, out);
    ProfileTable table;
    table.comments = profile_header_comments(plan.model, options, device.describe(), utc_now(), command);
    table.rows = profile_rows(plan.model, plan.grid, timings);
    write_profile_csv(plan.out, table);
    const ProfileCostModel check(plan.out);  // the file must read back, and fit the model
    check.check_model(plan.model);
    out << fmt::format("wrote {} ({} rows): {}\n", plan.out.string(), table.rows.size(), check.describe());
    run_operator_check(plan, options, device, command, out);
    return 0;
#else
    (void)plan;
    (void)out;
    err << "error: pagesim profile: this pagesim was built without CUDA (nvcc not found or "
           "PAGESIM_ENABLE_CUDA=OFF); build with CUDA and run it on the GPU it describes\n";
    return 1;
#endif
  } catch (const std::exception& e) {
    err << "error: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace pagesim::sim
