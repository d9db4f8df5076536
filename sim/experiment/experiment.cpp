#include "sim/experiment/experiment.h"

#include <algorithm>
#include <atomic>
#include <cassert>
#include <cctype>
#include <chrono>
#include <cmath>
#include <exception>
#include <filesystem>
#include <limits>
#include <mutex>
#include <new>
#include <optional>
#include <system_error>
#include <thread>
#include <unordered_set>

#include <fmt/format.h>

#include "allocator/make_allocator.h"
#include "allocator/paged/paged_allocator.h"
#include "sim/cluster/router.h"
#include "sim/config/config_error.h"
#include "sim/config/enum_names.h"
#include "sim/config/input_path.h"
#include "sim/config/kind_rules.h"
#include "sim/config/sweep.h"
#include "sim/cost/cost_error.h"
#include "sim/cost/cuda_graph_sizes.h"
#include "sim/cost/kv_capacity.h"
#include "sim/cost/operators_cost_model.h"
#include "sim/cost/presets.h"
#include "sim/cost/speculative_cost_model.h"
#include "sim/experiment/result_folder.h"
#include "sim/metrics/client_stream_metrics.h"
#include "sim/metrics/cluster_summary.h"
#include "sim/metrics/metrics.h"
#include "sim/metrics/slo.h"
#include "sim/metrics/speculative_metrics.h"
#include "sim/metrics/step_recorder.h"
#include "sim/metrics/timeline.h"
#include "sim/output/atomic_file.h"
#include "sim/output/build_info.h"
#include "sim/output/created_folder.h"
#include "sim/validate/batch_sampler.h"
#include "sim/cost/lora_adapter_bytes.h"
#include "traces/adapter_assignment.h"
#include "traces/make_source.h"
#include "traces/trace_error.h"

namespace pagesim::sim {
namespace {

// The workload's source, its files opened at their portable paths (input_path.h) and named
// by them, so that summary.json and errors show the same text from any working directory.
std::unique_ptr<traces::RequestSource> open_workload(const traces::WorkloadSpec& w) {
  traces::WorkloadSpec opened = w;
  opened.trace.name = w.trace.path;
  opened.trace.path = input_file(w.trace.path).string();
  opened.lengths.name = w.lengths.path;
  opened.lengths.path = input_file(w.lengths.path).string();
  return traces::make_source(opened);
}

// Runs `build`, turning a component's own error into a ConfigError on `key` (or, for a
// workload spec's error, on the field it names: workload.arrival.rate, ...) at the line the
// config's origin recorded for it.
template <class F>
auto in_section(const ConfigOrigin& origin, const std::string& key, F&& build) {
  try {
    return build();
  } catch (const ConfigError&) {
    throw;
  } catch (const traces::TraceError&) {
    throw;  // names the trace file and line itself
  } catch (const traces::SpecError& e) {
    // The workload's seed is the experiment's top-level `seed` (parse_experiment copies it).
    const std::string path = key == "workload" && e.field() == "seed" ? "seed" : key + "." + e.field();
    std::string message = e.what();
    if (message.rfind(e.field() + ": ", 0) == 0) message.erase(0, e.field().size() + 2);
    throw origin.error(path, message);
  } catch (const std::bad_alloc&) {
    throw;  // build_run names the setting that sized what did not fit
  } catch (const std::exception& e) {
    throw origin.error(key, e.what());
  }
}

// Block ids are 32-bit (allocator/block.h): a pool of more blocks cannot be built.
constexpr std::int64_t kMaxBlocks = std::numeric_limits<alloc::BlockId>::max();

// The key a KV pool size came from: kv.slots when the file gives it, else the settings
// that derive it.
std::string capacity_key(const ExperimentConfig& c) { return c.kv.slots > 0 ? "kv.slots" : "kv.gpu_memory_utilization"; }

// A warning located like an error: "file:line: key: message".
std::string warning(const ConfigOrigin& origin, const std::string& key, const std::string& message) {
  return origin.error(key, message).what();
}

double gib(double bytes) { return bytes / std::pow(2.0, 30); }

// The distinct LoRA adapters the arriving requests name (a trace's adapter column). Reads
// arrivals only, so the engine's fast paths stay on.
struct TraceAdapters final : IterationObserver {
  std::unordered_set<alloc::AdapterId> seen;
  bool holds_requests() const override { return false; }
  bool reads_iterations() const override { return false; }
  bool reads_replica_order() const override { return false; }
  void on_arrival(const Request& r) override {
    if (r.adapter >= 0) seen.insert(r.adapter);
  }
};

// The config key a speculative drafter's size comes from, for errors.
std::string drafter_key(const ExperimentConfig& c) {
  return c.speculative.settings.method == SpeculativeMethod::kEagle ? "speculative.eagle_layers"
                                                                    : "speculative.draft_model";
}

// What to change for a request that can never be scheduled, by the key that keeps it out.
std::string unschedulable_hint(const ExperimentConfig& c, const Run& run, const std::string& key) {
  const alloc::AllocatorSpec& as = run.allocator_spec;
  std::string hint;
  if (key == "allocator.max_seq_len" && as.reservation.kind() == alloc::ReservationPolicy::Kind::kMax &&
      as.max_seq_len > as.capacity_slots)
    hint = fmt::format("reservation max reserves allocator.max_seq_len = {} slots for every request, more than the "
                       "KV pool's {}; lower allocator.max_seq_len, raise kv.slots, or use another "
                       "allocator.reservation (pow2, oracle, fixed:N)",
                       as.max_seq_len, as.capacity_slots);
  else if (key == "allocator.max_seq_len")
    hint = fmt::format("the contiguous allocator admits at most allocator.max_seq_len = {} tokens per sequence; "
                       "raise it (up to the model's context length)",
                       as.max_seq_len);
  else if (key == "allocator.max_chunk_blocks")
    hint = fmt::format("the buddy placement's largest range is allocator.max_chunk_blocks × allocator.block_size = "
                       "{} × {} = {} slots{}; raise allocator.max_chunk_blocks or allocator.block_size",
                       as.max_chunk_blocks, as.block_size, as.max_chunk_blocks * as.block_size,
                       as.max_chunk_blocks * as.block_size < as.max_seq_len
                           ? fmt::format(", shorter than allocator.max_seq_len = {} (with a block_size below 16, "
                                         "128 blocks hold fewer than 2048 tokens)",
                                         as.max_seq_len)
                           : std::string());
  else if (key == "max_model_len")
    hint = fmt::format("{} serves at most {} tokens per request, prompt + output (max_model_len: {}; the "
                       "model's context length is {}); set max_model_len: off to replay the trace as if "
                       "served by a longer-context model",
                       run.model.name, run.max_model_len, format_max_model_len(c.max_model_len),
                       run.model.max_seq_len);
  else if (key == "scheduler.max_num_batched_tokens")
    hint = fmt::format("raise scheduler.max_num_batched_tokens (now {}), or use a chunked-prefill scheduler "
                       "(scheduler.kind: sarathi)",
                       c.scheduler.max_num_batched_tokens);
  else if (alloc::is_layer_group_kind(as.kind))
    hint = fmt::format("the {} pool holds {} bytes of KV per GPU; raise kv.slots (or, with kv.slots: 0, "
                       "kv.gpu_memory_utilization)",
                       alloc::to_string(as.kind), as.pool_bytes);
  else if (key == "lora.max_loras")
    hint = "lower lora.max_loras or lora.rank, use lora.placement: unified, or raise kv.slots";
  else
    hint = fmt::format("the KV pool holds {} slots; raise kv.slots", as.capacity_slots);
  // The shares of the pool's memory that are not the target's KV, so that the user sees where
  // the memory went rather than only the pool that is left.
  if (run.draft_kv_slots > 0)
    hint += fmt::format(" (speculative decoding's draft KV took {} slots of the same memory: speculative.draft_kv: "
                        "shared; none, or a smaller drafter, gives them back)",
                        run.draft_kv_slots);
  if (run.draft_own_pool_slots > 0)
    hint += fmt::format(" (the draft's own pool took {} slots of the same memory: speculative.draft_kv: own_pool)",
                        run.draft_own_pool_slots);
  if (run.draft_weight_bytes > 0 && c.kv.slots == 0)
    hint += fmt::format(" (the drafter's weights took {:.2f} GiB per GPU of it: {})",
                        gib(static_cast<double>(run.draft_weight_bytes)), drafter_key(c));
  return hint + "; or set workload.oversize: drop (skip such requests) or truncate (cut their prompts), "
                "counted in summary.json";
}

// config.resolved.yaml's text: the config with the limits the run's allocator was built
// with (they follow the model unless the file sets them); --resume compares it byte for
// byte with a kept point's.
std::string resolved_config_text(const ExperimentConfig& c, const Run& run) {
  ExperimentConfig used = c;
  used.allocator.max_seq_len = run.allocator_spec.max_seq_len;
  used.allocator.max_chunk_blocks = run.allocator_spec.max_chunk_blocks;
  // The roofline's efficiencies and overhead as used (the GPU preset's unless overridden), not
  // -1 for "the preset's": the file says what ran. Only for roofline: under profile
  // iteration_overhead_s means host time added (none unless set), and the other kinds refuse
  // these keys.
  if (c.cost.kind == CostModelKind::roofline) {
    used.cost.compute_efficiency = run.gpu.compute_efficiency;
    used.cost.memory_efficiency = run.gpu.memory_efficiency;
    used.cost.iteration_overhead_s = run.gpu.iteration_overhead_seconds;
  }
  YAML::Emitter resolved;
  resolved << to_yaml(used);
  return std::string(resolved.c_str()) + "\n";
}

// The stages client_metrics.json reports: an inference_perf workload's, else one stage of
// every request.
std::vector<ClientStage> client_stages(const ExperimentConfig& c) {
  if (c.workload.kind != traces::WorkloadKind::kInferencePerf)
    return {ClientStage{std::nullopt, std::nullopt, 0, std::numeric_limits<std::uint64_t>::max()}};
  const auto plan = in_section(c.origin, "workload",
                               [&] { return traces::inference_perf_stages(c.workload.inference_perf); });
  std::vector<ClientStage> stages;
  for (const traces::InferencePerfStagePlan& p : plan) stages.push_back({p.rate, p.duration_s, p.first_id, p.count});
  return stages;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

}  // namespace

// Called only on that error path: it re-reads the workload without one filter at a time (each
// read stops at the first request it yields; a trace whose requests all fail a filter was
// read in full anyway).
ConfigError no_request_error(const ExperimentConfig& c, std::uint64_t oversize_dropped) {
  const traces::WorkloadSpec& w = c.workload;
  const std::string check = "check workload.duration_s, workload.max_total_tokens and the trace";
  if (oversize_dropped > 0)
    return c.origin.error("workload.oversize",
                          fmt::format("it dropped all {} requests of the workload (none can ever be scheduled): "
                                      "see the limits named by a run with workload.oversize: error",
                                      oversize_dropped));
  auto first = [&](traces::WorkloadSpec spec) { return open_workload(spec)->next(); };
  traces::WorkloadSpec bare = w;
  bare.max_total_tokens = 0;
  bare.duration_s = 0;
  bare.max_requests = 0;
  if (w.kind == traces::WorkloadKind::kTrace && !first(bare))
    return c.origin.error("workload.trace.path", fmt::format("the trace '{}' holds no request", w.trace.path));
  if (w.max_total_tokens > 0) {
    traces::WorkloadSpec unfiltered = w;
    unfiltered.max_total_tokens = 0;
    if (first(unfiltered))
      return c.origin.error("workload.max_total_tokens",
                            fmt::format("no request has prompt + output below max_total_tokens = {}",
                                        w.max_total_tokens));
  }
  if (w.duration_s > 0) {
    traces::WorkloadSpec unlimited = w;
    unlimited.duration_s = 0;
    unlimited.max_requests = 1;  // only the first is read; a generator needs a bound
    if (const auto r = first(unlimited))
      return c.origin.error("workload.duration_s",
                            fmt::format("the first request arrives at {} s, not before duration_s = {} s",
                                        r->arrival_s, w.duration_s));
  }
  return c.origin.error("workload", "the workload gave no request to simulate: " + check);
}

std::string point_folder(std::size_t index, const std::string& label) {
  std::string safe;
  for (char ch : label) safe += (std::isalnum(static_cast<unsigned char>(ch)) || ch == '.' || ch == '-' || ch == '=' || ch == '_') ? ch : '_';
  std::string name = fmt::format("{:02}-{}", index, safe);
  // File systems refuse names past 255 bytes (NAME_MAX), which a long label or a grid of many
  // axes reaches: such a name keeps its first bytes and ends in a hash of the whole (FNV-1a,
  // stable everywhere), so it stays unique and the same on every run; sweep.csv keeps the label.
  constexpr std::size_t kMaxName = 255;
  if (name.size() > kMaxName) {
    std::uint64_t h = 0xcbf29ce484222325ULL;
    for (unsigned char ch : name) h = (h ^ ch) * 0x100000001b3ULL;
    const std::string tail = fmt::format("~{:016x}", h);
    name = name.substr(0, kMaxName - tail.size()) + tail;
  }
  return name;
}

namespace {

// The layer-group pools' sizes (allocator.kind uniform, hybrid, jenga, vattention): the
// model's layer groups per GPU, and the pool in bytes. With kv.slots derived the pool is
// kv_capacity's kv_bytes (what is left of the GPU after weights and the reserve); with
// kv.slots given it is kv.slots × the model's uniform KV bytes per token per GPU — the pool a
// paged run of kv.slots would have, so `paged` and `uniform` runs of one config compare on
// one pool. vattention's page comes from allocator.vattention.page_kib.
// The KV pool the kv section derives from GPU memory (kv.slots: 0), for run's model and GPU;
// a CostModelError is the kv section's.
// Under a vLLM kv.engine the pool is vLLM's profiled budget (vllm_kv_budget.h), its profile
// run sized by the scheduler's max_num_batched_tokens and max_num_seqs; its terms go to
// run.kv_budget when `budget` is given.
ModelSpec draft_model_of(const ExperimentConfig& c, const ModelSpec& target);

// The drafter's weights on one GPU (bytes): a draft model's every weight, sharded as the
// target (vLLM's draft_tensor_parallel_size defaults to the target's); an EAGLE head's decoder
// layers and its fc (2·hidden → hidden), the embedding and LM head being the target's (vLLM
// v1/spec_decode/eagle.py load_model shares them). 0 for n-gram and without speculation.
std::int64_t draft_weight_bytes_per_gpu(const ExperimentConfig& c, const ModelSpec& target) {
  const SpeculativeMethod m = c.speculative.settings.method;
  if (m != SpeculativeMethod::kDraftModel && m != SpeculativeMethod::kEagle) return 0;
  const ModelSpec draft = draft_model_of(c, target);
  const std::int64_t tp = c.tensor_parallel;
  if (m == SpeculativeMethod::kDraftModel) return (draft.weight_bytes() + tp - 1) / tp;
  const std::int64_t fc = 2 * draft.hidden * draft.hidden * draft.dtype_bytes;
  return (draft.nonembedding_weight_bytes() + fc + tp - 1) / tp;
}

KvCapacity derived_kv_capacity(const ExperimentConfig& c, const Run& run, std::optional<VllmKvBudget>* budget = nullptr) {
  if (run.draft_weight_bytes > 0) {
    // The drafter's weights come out of the same memory: when they alone leave no room for
    // the pool, the drafter is what to change, so its key is named.
    Run alone;
    alone.model = run.model;
    alone.gpu = run.gpu;
    alone.max_model_len = run.max_model_len;
    const KvCapacity without = derived_kv_capacity(c, alone);
    const std::int64_t block_bytes = without.kv_bytes_per_token * c.allocator.block_size;
    if (run.draft_weight_bytes > without.kv_bytes - block_bytes)
      throw c.origin.error(
          drafter_key(c),
          fmt::format("the drafter's weights take {:.2f} GiB per GPU, and {} on {} (tensor_parallel = {}) leaves {:.2f} "
                      "GiB for them and the KV pool together: expected a drafter that leaves room for at least one "
                      "KV block; choose a smaller one",
                      gib(static_cast<double>(run.draft_weight_bytes)), run.model.name, run.gpu.name,
                      c.tensor_parallel, gib(static_cast<double>(without.kv_bytes))));
  }
  return in_section(c.origin, "kv", [&] {
    if (c.kv.engine == KvSizing::kVllm) {
      VllmProfileSettings vs;
      vs.engine = vllm_family(c.vllm_version);
      vs.gpu_memory_utilization = c.kv.gpu_memory_utilization;
      vs.max_num_batched_tokens = c.scheduler.max_num_batched_tokens;
      vs.max_num_seqs = c.scheduler.max_num_seqs;
      vs.block_size = c.allocator.block_size;
      vs.max_model_len = run.max_model_len > 0 ? run.max_model_len : run.model.max_seq_len;
      vs.activation_override_bytes = static_cast<std::int64_t>(c.kv.activation_reserve_gib * std::pow(2.0, 30));
      vs.draft_weight_bytes = run.draft_weight_bytes;
      const VllmKvBudget b = vllm_kv_budget(run.model, run.gpu, c.tensor_parallel, vs);
      if (budget) *budget = b;
      KvCapacity k;
      k.usable_bytes = b.requested_bytes;
      k.weight_bytes = b.weight_bytes;
      k.activation_reserve_bytes = b.activation_bytes + b.non_torch_bytes + b.cuda_graph_bytes;
      k.kv_bytes = b.kv_bytes;
      k.kv_bytes_per_token = b.kv_bytes_per_token;
      k.blocks = b.blocks;
      k.slots = b.tokens;
      return k;
    }
    KvCapacitySettings ks;
    ks.gpu_memory_utilization = c.kv.gpu_memory_utilization;
    ks.activation_reserve_bytes = static_cast<std::int64_t>(c.kv.activation_reserve_gib * std::pow(2.0, 30));
    ks.block_size = c.allocator.block_size;
    ks.draft_weight_bytes = run.draft_weight_bytes;
    return kv_capacity(run.model, run.gpu, c.tensor_parallel, ks);
  });
}

void fill_layer_group_pool(const ExperimentConfig& c, const Run& run, alloc::AllocatorSpec& as) {
  const ConfigOrigin& origin = c.origin;
  as.layer_groups = in_section(origin, "model", [&] { return layer_groups(run.model, c.tensor_parallel); });
  if (c.kv.slots > 0) {
    as.pool_bytes = c.kv.slots * run.model.kv_bytes_per_token_per_gpu(c.tensor_parallel);
  } else {
    as.pool_bytes = derived_kv_capacity(c, run).kv_bytes;
  }
  as.vattention.page_bytes = c.allocator.vattention_page_kib * 1024;
}

// cost.kind operators' settings from the config: the tables of the source tree (or, without
// it, of the installed package's bundled data) unless cost.operators.tables names others, the
// GPU's folder from the gpu preset unless cost.operators.gpu names it, vLLM's CUDA-graph sizes
// for the scheduler's limits.
OperatorsCostSettings operators_settings(const ExperimentConfig& c) {
  const OperatorsCostConfig& k = c.cost.operators;
  OperatorsCostSettings s;
  std::error_code ec;
  const std::filesystem::path built_in = std::filesystem::is_directory(default_operator_tables(), ec)
                                             ? default_operator_tables()
                                             : input_file("sim/cost/operator_tables");
  s.tables = k.tables.empty() ? built_in : input_file(k.tables);
  s.engine = k.engine;
  s.gpu = k.gpu;
  if (s.gpu.empty()) {
    const std::optional<std::string_view> folder = operator_table_gpu(c.gpu);
    if (!folder)
      throw c.origin.error("gpu", fmt::format("cost.kind operators has no measured operator tables for gpu '{}'; set "
                                              "cost.operators.gpu to one of the GPUs of {}: {}",
                                              c.gpu, s.tables.string(),
                                              fmt::join(operator_table_folders(s.tables), ", ")));
    s.gpu = std::string(*folder);
  }
  const std::int64_t max_size = k.cuda_graph_max_size == -1
                                    ? CudaGraphSizes::vllm_default_max_size(c.scheduler.max_num_seqs)
                                    : k.cuda_graph_max_size;
  s.cuda_graphs = CudaGraphSizes::vllm_default(max_size, c.scheduler.max_num_batched_tokens);
  s.gpu_scale = k.gpu_scale;
  s.memory_ops = k.memory_ops;
  s.host_step_s = c.cost.host.step_s;
  s.host_per_seq_s = c.cost.host.per_seq_s;
  return s;
}

// summary.json's "cost" object: the cost models' notes summed over replicas; null when none
// keeps notes (every kind but operators), so other runs' summaries keep their bytes.
nlohmann::ordered_json cost_notes_json(const std::vector<const Run*>& parts) {
  CostNotes sum;
  for (const Run* part : parts) sum.merge(part->cost->notes());
  if (sum.empty()) return nullptr;
  nlohmann::ordered_json j;
  for (const auto& [name, count] : sum.lookups) j["lookups"][name] = count;
  for (const auto& [name, count] : sum.extrapolated_lookups) j["extrapolated_lookups"][name] = count;
  return j;
}

// A latent-attention model (ModelSpec::mla) with settings that cannot hold it: errors naming
// the key, and a warning for pages FlashMLA does not read.
void check_latent_attention(const ExperimentConfig& c, const ServingKinds& kinds, Run& run) {
  const ConfigOrigin& origin = c.origin;
  if (c.kv_dtype == KvDtype::kInt4)
    throw origin.error("kv_dtype", fmt::format("int4 for {}, whose KV is a latent (MLA) cache: expected auto, bf16, fp16 "
                                               "or fp8 (vLLM stores MLA's latent in bf16, fp8 or fp8_ds_mla)",
                                               run.model.name));
  if (const AllocatorDescriptor& pool = allocator_kind(kinds, c.allocator.kind); !pool.no_latent_attention.empty())
    throw origin.error("allocator.kind",
                       fmt::format("{} cannot hold {}'s latent (MLA) cache: {}; expected {}", pool.name, run.model.name,
                                   pool.no_latent_attention,
                                   kind_names(kinds.allocators,
                                              [](const AllocatorDescriptor& k) { return k.no_latent_attention.empty(); })));
  if (c.allocator.block_size % kFlashMlaPageTokens != 0)
    run.warnings.push_back(warning(
        origin, "allocator.block_size",
        fmt::format("{} tokens per block for {}: FlashMLA reads pages of {} tokens and vLLM forces block_size {} for "
                    "it (vllm/platforms/cuda.py); the run simulates the smaller blocks, with less rounding than an "
                    "engine has",
                    c.allocator.block_size, run.model.name, kFlashMlaPageTokens, kFlashMlaPageTokens)));
}

// The workload, each request naming a LoRA adapter when lora.adapters > 0.
std::unique_ptr<traces::RequestSource> open_run_workload(const ExperimentConfig& c) {
  std::unique_ptr<traces::RequestSource> source = open_workload(c.workload);
  if (!c.lora.enabled || c.lora.adapters == 0) return source;
  return std::make_unique<traces::AdapterAssignmentSource>(
      std::move(source), static_cast<std::int32_t>(c.lora.adapters),
      c.lora.popularity == LoraPopularity::kZipf ? traces::AdapterPopularity::kZipf : traces::AdapterPopularity::kUniform,
      c.lora.zipf_alpha, c.seed);
}

// The adapters' bytes (run.lora_*) and, for vLLM's placement, the region of max_loras slots
// the KV pool gives up (as.adapter_region_blocks).
void configure_lora(const ExperimentConfig& c, Run& run, alloc::AllocatorSpec& as) {
  const ConfigOrigin& origin = c.origin;
  const LoraSettings& l = c.lora;
  try {
    run.lora_adapter_bytes =
        static_cast<double>(lora_adapter_bytes(run.model, l.target_modules, l.rank, c.tensor_parallel));
    run.lora_slot_bytes =
        static_cast<double>(lora_adapter_bytes(run.model, lora_all_modules(run.model), l.rank, c.tensor_parallel));
  } catch (const std::invalid_argument& e) {
    throw origin.error(run.model.mla.enabled() ? "model" : "lora.target_modules", e.what());
  }
  if (!(run.gpu.pcie_bytes_per_s > 0))
    throw origin.error("gpu", fmt::format("{} has no host-to-device bandwidth (pcie) to load LoRA adapters at",
                                          run.gpu.name));
  if (l.placement != LoraPlacement::kVllm) return;
  const double block_bytes = static_cast<double>(run.model.kv_bytes_per_token_per_gpu(c.tensor_parallel)) *
                             static_cast<double>(as.block_size);
  const auto slot_blocks = static_cast<std::int64_t>(std::ceil(run.lora_slot_bytes / block_bytes));
  const std::int64_t blocks = as.capacity_slots / as.block_size;
  if (l.max_loras * slot_blocks >= blocks)
    throw origin.error("lora.max_loras",
                       fmt::format("{} slots of {:.1f} MiB (rank {} over every LoRA-capable layer of {}, as vLLM "
                                   "reserves them) take {} KV blocks, and the pool holds {}: expected fewer slots, a "
                                   "lower lora.rank or a larger pool",
                                   l.max_loras, run.lora_slot_bytes / (1 << 20), l.rank, run.model.name,
                                   l.max_loras * slot_blocks, blocks));
  as.adapter_region_blocks = l.max_loras * slot_blocks;
}

// The draft of speculative decoding as a model: the draft model's preset, or an EAGLE head of
// `layers` of the target's decoder layers (dense, full attention: EAGLE's head is a Llama
// decoder layer over the target's hidden states, with the target's embedding and LM head).
ModelSpec draft_model_of(const ExperimentConfig& c, const ModelSpec& target) {
  if (c.speculative.settings.method == SpeculativeMethod::kDraftModel) {
    ModelSpec draft = in_section(c.origin, "speculative.draft_model", [&] { return model_preset(c.speculative.draft_model); });
    draft.kv_dtype = c.kv_dtype;
    return draft;
  }
  ModelSpec head = target;
  head.name = target.name + "-eagle";
  head.layers = c.speculative.eagle_layers;
  head.groups.clear();
  head.moe_layers = head.experts = head.active_experts = head.shared_experts = head.expert_ffn = 0;
  if (head.ffn == 0) head.ffn = 4 * head.hidden;  // a MoE target's head gets a dense MLP
  return head;
}

// Speculative decoding's settings for replica `run` (its pool in run.kv_slots): the lookahead
// slots, the draft's KV, a pool carved for it (draft_kv shared), and the check that a step's
// slots fit a request's block table. Errors name the key.
void plan_speculation(const ExperimentConfig& c, Run& run) {
  SpeculativeSettings s = c.speculative.settings;
  const ConfigOrigin& origin = c.origin;
  s.seed = c.seed;
  // vLLM v1 reserves lookahead slots for EAGLE's proposals only (num_lookahead_tokens).
  s.lookahead = s.method == SpeculativeMethod::kEagle ? s.k : 0;
  const std::int64_t step_slots = 1 + s.k + s.lookahead;
  const std::int64_t max_len = c.max_model_len == kMaxModelLenOfModel ? run.model.max_seq_len : c.max_model_len;
  const std::int64_t B = c.allocator.block_size;
  if ((max_len > 0 && step_slots > max_len) || (step_slots + B - 1) / B > run.kv_slots / B)
    throw origin.error("speculative.num_speculative_tokens",
                       fmt::format("a step holds 1 + {} proposed{} slots beyond a request's tokens, more than its block "
                                   "table can hold (max_model_len = {} tokens, a pool of {} blocks of {}): lower "
                                   "num_speculative_tokens",
                                   s.k, s.lookahead > 0 ? fmt::format(" + {} lookahead", s.lookahead) : std::string(),
                                   max_len, run.kv_slots / B, B));
  if (s.method == SpeculativeMethod::kDraftModel || s.method == SpeculativeMethod::kEagle) {
    const ModelSpec draft = draft_model_of(c, run.model);
    const double target_bytes = static_cast<double>(run.model.kv_bytes_per_token_per_gpu(c.tensor_parallel));
    s.draft_kv_ratio = static_cast<double>(draft.kv_bytes_per_token_per_gpu(c.tensor_parallel)) / target_bytes;
    if (s.draft_kv == DraftKvPlacement::kOwnPool) run.draft_kv_bytes_per_slot = s.draft_kv_ratio * target_bytes;
  }
  if (s.draft_kv == DraftKvPlacement::kNone) s.draft_kv_ratio = 0;
  const bool own_pool_from_memory = s.draft_kv == DraftKvPlacement::kOwnPool && c.kv.slots == 0;
  if ((s.draft_kv == DraftKvPlacement::kShared || own_pool_from_memory) && s.k > 0 && s.draft_kv_ratio > 0) {
    // vLLM sizes every attention layer's cache, the draft's included, with one number of
    // blocks from the one KV budget (vllm/v1/worker/gpu_model_runner.py initialize_kv_cache):
    // a block of B tokens costs B·(1 + ratio) target slots of memory. A pool of its own,
    // carved from a derived budget, must hold the draft's KV of every target slot: the same
    // memory, kept apart from the target's pool (and its memory classes).
    const auto blocks = static_cast<std::int64_t>(static_cast<double>(run.kv_slots) /
                                                  (static_cast<double>(B) * (1.0 + s.draft_kv_ratio)));
    (own_pool_from_memory ? run.draft_own_pool_slots : run.draft_kv_slots) = run.kv_slots - blocks * B;
    run.kv_slots = blocks * B;
  }
  run.speculative = s;
}

// One replica's parts from its settings; the workload source too when `with_source`.
Run build_replica(const ExperimentConfig& c, bool with_source, const ServingKinds& kinds) {
  const ConfigOrigin& origin = c.origin;
  const SchedulerDescriptor& policy = scheduler_kind(kinds, c.scheduler.kind);
  const AllocatorDescriptor& pool_kind = allocator_kind(kinds, c.allocator.kind);
  Run run;
  run.model = in_section(origin, model_error_key(c.custom_model), [&] { return model_of(c.model, c.custom_model); });
  run.model.kv_dtype = c.kv_dtype;
  // A measured profile timed the kernels at the model's own dtype: its attention times do not
  // follow kv_dtype (the capacity does).
  if (c.kv_dtype != KvDtype::kAuto && c.cost.kind == CostModelKind::profile)
    run.warnings.push_back(warning(origin, "kv_dtype",
                                   fmt::format("kv_dtype {} sets the KV capacity, but cost.kind profile keeps the "
                                               "attention timings it measured at the model's dtype",
                                               enum_name(kKvDtypeNames, c.kv_dtype))));
  if (run.model.mla.enabled()) check_latent_attention(c, kinds, run);
  run.gpu = in_section(origin, "gpu", [&] { return gpu_preset(c.gpu); });
  in_section(origin, "tensor_parallel", [&] {
    run.model.check_tensor_parallel(c.tensor_parallel);
    return 0;
  });
  if (c.cost.compute_efficiency >= 0) run.gpu.compute_efficiency = c.cost.compute_efficiency;
  if (c.cost.memory_efficiency >= 0) run.gpu.memory_efficiency = c.cost.memory_efficiency;
  if (c.cost.iteration_overhead_s >= 0) run.gpu.iteration_overhead_seconds = c.cost.iteration_overhead_s;

  run.draft_weight_bytes = draft_weight_bytes_per_gpu(c, run.model);
  if (c.kv.slots > 0 && run.draft_weight_bytes > 0) {
    // A given pool is the user's to size, but a drafter whose weights and the target's do
    // not fit the GPU at all means nothing.
    const double weights = static_cast<double>((run.model.weight_bytes() + c.tensor_parallel - 1) / c.tensor_parallel);
    const double draft = static_cast<double>(run.draft_weight_bytes);
    if (weights <= static_cast<double>(run.gpu.hbm_bytes) && weights + draft > static_cast<double>(run.gpu.hbm_bytes))
      throw origin.error(drafter_key(c),
                         fmt::format("the drafter's weights ({:.2f} GiB per GPU) and {}'s ({:.2f} GiB) exceed the "
                                     "{:.2f} GiB of one {} before any KV cache: expected a drafter that fits beside "
                                     "the target",
                                     gib(draft), run.model.name, gib(weights),
                                     gib(static_cast<double>(run.gpu.hbm_bytes)), run.gpu.name));
  }
  run.kv_slots = c.kv.slots;
  if (run.kv_slots == 0) {
    run.max_model_len = c.max_model_len == kMaxModelLenOfModel ? run.model.max_seq_len : c.max_model_len;
    run.kv_slots = derived_kv_capacity(c, run, &run.kv_budget).slots;
  }
  // A pool of whole blocks holds kv.slots rounded down to them (a derived capacity is whole
  // blocks already): the run simulates and reports that pool (summary.json's kv_slots, the
  // cluster's sum), and says so once.
  run.kv_slots = c.allocator.pool_slots(run.kv_slots);
  if (c.kv.slots > 0 && run.kv_slots != c.kv.slots) {
    const std::int64_t blocks = run.kv_slots / c.allocator.block_size;
    run.warnings.push_back(warning(
        origin, "kv.slots",
        fmt::format("{} slots are not a whole number of blocks of allocator.block_size = {}: the {} pool holds "
                    "{} blocks = {} slots, which the run simulates and reports as kv_slots ({} or {} would be "
                    "whole blocks)",
                    c.kv.slots, c.allocator.block_size, alloc::to_string(c.allocator.kind), blocks, run.kv_slots,
                    run.kv_slots, run.kv_slots + c.allocator.block_size)));
  }

  const double kv_bytes_per_token = static_cast<double>(run.model.kv_bytes_per_token_per_gpu(c.tensor_parallel));
  if (run.kv_slots / c.allocator.block_size > kMaxBlocks)
    throw origin.error(capacity_key(c),
                       fmt::format("{} slots are {} blocks of allocator.block_size = {}, more than the {} block ids "
                                   "the allocator has (32-bit); for {} that pool would need {:.0f} GiB of KV per GPU",
                                   run.kv_slots, run.kv_slots / c.allocator.block_size, c.allocator.block_size,
                                   kMaxBlocks, run.model.name, gib(kv_bytes_per_token * static_cast<double>(run.kv_slots))));
  if (c.kv.slots > 0) {
    const double kv_bytes = kv_bytes_per_token * static_cast<double>(run.kv_slots);
    if (kv_bytes > static_cast<double>(run.gpu.hbm_bytes))
      run.warnings.push_back(warning(
          origin, "kv.slots",
          fmt::format("{} slots need {:.1f} GiB of KV cache per GPU for {} (tensor_parallel = {}), more than the "
                      "{:.1f} GiB of one {}: the run simulates a pool that GPU cannot hold (kv.slots: 0 derives it "
                      "from GPU memory)",
                      run.kv_slots, gib(kv_bytes), run.model.name, c.tensor_parallel,
                      gib(static_cast<double>(run.gpu.hbm_bytes)), run.gpu.name)));
  }

  if (c.speculative.settings.enabled()) plan_speculation(c, run);
  alloc::AllocatorSpec as = c.allocator;
  as.capacity_slots = run.kv_slots;
  if (pool_kind.layer_groups) fill_layer_group_pool(c, run, as);
  as.single_free_queue = policy.single_free_queue;  // vllm-v1's FreeKVCacheBlockQueue
  const double kv_bytes_per_block = kv_bytes_per_token * static_cast<double>(c.allocator.block_size);
  as.cpu_blocks = static_cast<std::int64_t>(c.allocator.cpu_swap_gib * std::pow(2.0, 30) / kv_bytes_per_block);
  if (!c.allocator.offload_config.tiers.empty())
    as.offload = offload_settings(c.allocator.offload_config, kv_bytes_per_block, kMaxBlocks, origin);
  if (c.scheduler.preemption == PreemptionMode::kSwap && pool_kind.swap && as.cpu_blocks == 0)
    throw origin.error("allocator.cpu_swap_gib",
                       fmt::format("scheduler.preemption: swap needs CPU swap space, but {} GiB holds no block of "
                                   "{:.0f} bytes ({} tokens of {}): raise allocator.cpu_swap_gib, or set "
                                   "scheduler.preemption: recompute",
                                   c.allocator.cpu_swap_gib, kv_bytes_per_block, c.allocator.block_size,
                                   run.model.name));
  // A contiguous allocator reserves up to max_seq_len per request: by default the model's
  // context length (its longest sequence), not a fixed 2048; and its buddy chunks, by default,
  // grow to hold one such sequence (a power of two of blocks, never below 128), or with a
  // block_size below 16 (or a longer context) every long request would fail.
  const bool model_rows = pool_kind.row_length == RowLength::kModelContext;
  if (model_rows && !origin.has("allocator.max_seq_len") && run.model.max_seq_len > 0)
    as.max_seq_len = run.model.max_seq_len;
  if (model_rows && !origin.has("allocator.max_chunk_blocks")) {
    const std::int64_t blocks = (as.max_seq_len + as.block_size - 1) / as.block_size;
    while (as.max_chunk_blocks < blocks && as.max_chunk_blocks < kMaxBlocks / 2) as.max_chunk_blocks *= 2;
  }
  run.max_model_len = c.max_model_len == kMaxModelLenOfModel ? run.model.max_seq_len : c.max_model_len;
  // vattention's rows hold max_model_len tokens (the model's context unless the file sets it;
  // with max_model_len: off, the model's context length).
  if (pool_kind.row_length == RowLength::kMaxModelLen)
    as.max_seq_len = run.max_model_len > 0 ? run.max_model_len : run.model.max_seq_len;
  run.allocator_spec = as;
  bool beams = false;
  for (const auto& s : c.workload.sampling) beams |= s.beam_width > 1;
  if (beams && !pool_kind.beam)
    throw origin.error("allocator.kind",
                       fmt::format("beam search (workload.sampling beam_width > 1) needs the {} allocator",
                                   kind_names(kinds.allocators, [](const AllocatorDescriptor& k) { return k.beam; })));
  // Every request to a model with cross-attention carries one encoder input of the preset's
  // size (llama-3.2-11b-vision: one image of max_num_tiles tiles); the allocators charge it
  // from admission to free.
  SchedulerSettings ss = c.scheduler;
  ss.speculative = run.speculative;
  ss.long_prefill_cap_needs_company = long_prefill_cap_needs_company(c.vllm_version);
  for (const ModelLayerGroup& g : run.model.groups)
    if (g.kind == alloc::LayerGroupKind::kCrossAttention) ss.encoder_tokens = std::max(ss.encoder_tokens, g.encoder_tokens);
  // The pool's structures are sized by the capacity: memory running out while building them
  // is the capacity's error (below kMaxBlocks, a pool can still exceed this host's memory).
  // The policy is built over the pool by its descriptor (make_scheduler), which hands policies
  // that drive a pool's own operations the PagedAllocator or RadixAllocator itself.
  try {
    // The config refuses the other pairings at parse time (kind_rules.h); these at build time
    // (SchedulerDescriptor::pool_check).
    if (!runs_over(policy, pool_kind.kind)) throw origin.error("allocator.kind", pool_refusal(policy, pool_kind));
    if (c.lora.enabled) configure_lora(c, run, as);  // check_lora: a pool and a policy that take LoRA
    BuiltPool built = in_section(origin, "allocator", [&] { return pool_kind.build(as); });
    run.scheduler = in_section(origin, "scheduler", [&] { return make_scheduler(ss, built.pool, kinds.schedulers); });
    if (c.lora.enabled) {
      alloc::PagedAllocator* paged_allocator = built.pool.paged();
      assert(paged_allocator != nullptr);  // AllocatorDescriptor::lora: paged only
      run.allocator_spec = as;
      const double block_bytes = kv_bytes_per_token * static_cast<double>(c.allocator.block_size);
      run.adapters = std::make_unique<AdapterCache>(c.lora, *paged_allocator, run.lora_adapter_bytes, block_bytes,
                                                    run.gpu.pcie_bytes_per_s);
      if (c.lora.placement == LoraPlacement::kUnified && run.adapters->adapter_blocks() >= paged_allocator->num_blocks())
        throw origin.error("lora.rank",
                           fmt::format("one adapter of {:.1f} MiB (rank {}, {}) takes {} KV blocks, and the pool holds "
                                       "{}: expected an adapter smaller than the KV pool; lower lora.rank or "
                                       "lora.target_modules, or raise the capacity",
                                       run.lora_adapter_bytes / (1 << 20), c.lora.rank,
                                       format_lora_modules(c.lora.target_modules), run.adapters->adapter_blocks(),
                                       paged_allocator->num_blocks()));
      run.scheduler->set_adapters(run.adapters.get());
    }
    run.allocator = std::move(built.allocator);
  } catch (const std::bad_alloc&) {
    // The larger of the two pools the allocator sizes its structures by is the one to lower.
    const std::int64_t gpu_blocks = run.kv_slots / c.allocator.block_size;
    if (as.cpu_blocks > gpu_blocks)
      throw origin.error("allocator.cpu_swap_gib",
                         fmt::format("{} GiB of CPU swap space ({} blocks of {}, beside {} GPU blocks): not enough "
                                     "host memory to build the allocator; lower allocator.cpu_swap_gib",
                                     c.allocator.cpu_swap_gib, as.cpu_blocks, c.allocator.block_size, gpu_blocks));
    throw origin.error(capacity_key(c),
                       fmt::format("{} slots ({} blocks of {}): not enough host memory to build the allocator; "
                                   "lower the capacity",
                                   run.kv_slots, gpu_blocks, c.allocator.block_size));
  }

  check_input_paths(c);  // a missing trace or profile is named by its key, not by its reader
  CostModelSpec cs;
  cs.kind = c.cost.kind;
  cs.model = run.model;
  cs.gpu = run.gpu;
  cs.tp = c.tensor_parallel;
  cs.constant = c.cost.constant;
  cs.profile_path = input_file(c.cost.profile);
  cs.profile_name = c.cost.profile;
  // Under a profile, cost.iteration_overhead_s is host time the table lacks (default none).
  if (c.cost.kind == CostModelKind::profile) cs.iteration_overhead_s = std::max(0.0, c.cost.iteration_overhead_s);
  if (c.cost.kind == CostModelKind::operators) cs.operators = operators_settings(c);
  run.cost = in_section(origin, "cost", [&] { return make_cost_model(cs); });
  if (run.speculative.enabled() && run.speculative.k > 0) {
    // The drafter's passes: its own roofline model on the run's GPU, or a ratio of the target's.
    std::unique_ptr<CostModel> draft;
    const SpeculativeMethod m = run.speculative.method;
    if (c.speculative.draft_cost_ratio < 0 && (m == SpeculativeMethod::kDraftModel || m == SpeculativeMethod::kEagle)) {
      CostModelSpec ds;
      ds.kind = CostModelKind::roofline;
      ds.model = draft_model_of(c, run.model);
      ds.gpu = run.gpu;
      ds.tp = c.tensor_parallel;
      draft = in_section(origin, "speculative", [&] { return make_cost_model(ds); });
    }
    run.cost = std::make_unique<SpeculativeCostModel>(std::move(run.cost), std::move(draft),
                                                      c.speculative.draft_cost_ratio, run.speculative.k);
  }
  if (with_source) run.source = in_section(origin, "workload", [&] { return open_run_workload(c); });
  return run;
}

}  // namespace

std::unique_ptr<traces::RequestSource> make_workload_source(const ExperimentConfig& c) {
  check_input_paths(c);
  return in_section(c.origin, "workload", [&] { return open_workload(c.workload); });
}

Run build_run(const ExperimentConfig& c) { return build_run(c, kServingKinds); }

Run build_run(const ExperimentConfig& c, const ServingKinds& kinds) {
  // In a cluster, an error names the replica whose settings (the file's, or its override's
  // at the line given) could not be built.
  auto build = [&](std::int64_t i) {
    try {
      return build_replica(replica_config(c, i), i == 0, kinds);
    } catch (const ConfigError& e) {
      if (c.replicas.count == 1) throw;
      throw ConfigError(e.file(), e.line(), e.key(), fmt::format("replica {}: {}", i, e.message()));
    }
  };
  Run run = build(0);
  for (std::int64_t i = 1; i < c.replicas.count; ++i) {
    Run other = build(i);
    for (std::string& w : other.warnings)
      if (std::find(run.warnings.begin(), run.warnings.end(), w) == run.warnings.end())
        run.warnings.push_back(std::move(w));
    other.warnings.clear();
    run.other_replicas.push_back(std::move(other));
  }
  return run;
}

Summary run_experiment(const ExperimentConfig& c, const std::filesystem::path& out, const ProgressFn& progress,
                       SummaryNotes* notes) {
  const auto t0 = std::chrono::steady_clock::now();
  Run run = build_run(c);
  CreatedFolder folder(out);  // a point that fails leaves no empty folder

  // Disabled outputs are not written at all (rather than left empty).
  std::optional<AtomicFile> requests, iterations;
  if (c.output.requests_csv) requests.emplace(out / "requests.csv");
  if (c.output.iterations_stride > 0) iterations.emplace(out / "iterations.csv");
  MetricsSettings ms;
  ms.window_start_s = c.measure.window_start_s;
  ms.window_end_s = c.measure.window_end_s;
  ms.iterations_stride = c.output.iterations_stride;
  ms.latency_samples_in_memory = static_cast<std::size_t>(c.output.latency_samples_in_memory);
  ms.kv_bytes_per_token = static_cast<double>(run.model.kv_bytes_per_token());
  ms.block_size = run.allocator->block_size();
  const bool cluster = c.replicas.count > 1;
  ms.replica_column = cluster;
  ms.iterations_of_replicas = cluster;
  // Only the layer-group pools split KV by layer class; other runs keep their outputs' bytes.
  ms.layer_classes = alloc::is_layer_group_kind(c.allocator.kind);
  ms.adapter_class = c.lora.enabled;
  // k = 0 decodes exactly as without speculation, and writes the same outputs.
  ms.speculative_classes = run.speculative.enabled() && run.speculative.k > 0;
  std::vector<const alloc::KvAllocator*> allocators{run.allocator.get()};
  for (const Run& other : run.other_replicas) allocators.push_back(other.allocator.get());
  Metrics metrics(ms, requests ? &requests->stream() : nullptr, iterations ? &iterations->stream() : nullptr,
                  allocators);

  EngineSettings es;
  es.seed = c.seed;
  es.beam = c.beam;
  es.oversize = c.workload.oversize;
  es.max_model_len = run.max_model_len;
  es.skip_decode_runs = c.engine.skip_decode_runs;
  es.compact_waiting = c.engine.compact_waiting;
  es.backlog_in_memory = static_cast<std::size_t>(c.engine.backlog_in_memory);
  for (const Run& other : run.other_replicas)  // a request must fit every replica
    if (es.max_model_len == 0 || (other.max_model_len > 0 && other.max_model_len < es.max_model_len))
      es.max_model_len = other.max_model_len;
  // Replicas built from one configuration (replica_config: the experiment's, or one override)
  // decide alike whether a request can ever run: ask the first of each.
  for (std::int64_t i = 0; i < c.replicas.count; ++i) {
    const ExperimentConfig* own = &replica_config(c, i);
    bool seen = false;
    for (const std::int32_t j : es.admission_replicas) seen = seen || &replica_config(c, j) == own;
    if (!seen) es.admission_replicas.push_back(static_cast<std::int32_t>(i));
  }
  if (const DisaggregatedConfig& d = c.replicas.disaggregated; d.enabled()) {
    DisaggregationSettings& ds = es.disaggregation;
    ds.prefill_replicas = static_cast<std::int32_t>(d.prefill);
    ds.transfer_bytes_per_s = d.transfer_gbps * 1e9 / 8;  // gigabits to bytes
    ds.transfer_latency_s = d.transfer_latency_us * 1e-6;
    // The whole model's KV (every tensor-parallel shard moves): all replicas run one model.
    ds.kv_bytes_per_token = static_cast<double>(run.model.kv_bytes_per_token());
    ds.decode_router.kind = d.decode_router;
    ds.decode_router.seed = c.seed ^ 0x6465636f6465ULL;  // "decode": apart from the prefill router's draws
  }
  if (const GlobalCacheConfig& g = c.replicas.global_cache; g.enabled) {
    GlobalCacheSettings& gs = es.global_cache;
    gs.enabled = true;
    gs.source = g.source;
    gs.bytes_per_s = g.bandwidth_gbps * 1e9 / 8;  // gigabits to bytes
    gs.latency_s = g.latency_us * 1e-6;
    // A block fetched is the whole model's KV of its tokens; a replica of another model
    // (an override) prices with the first replica's, as disaggregation does.
    gs.kv_bytes_per_token = static_cast<double>(run.model.kv_bytes_per_token());
    const double block_bytes = gs.kv_bytes_per_token * static_cast<double>(c.allocator.block_size);
    const double pool_blocks = g.shared_pool_gib * std::pow(2.0, 30) / block_bytes;
    if (g.source == GlobalCacheSource::kSharedPool && pool_blocks < 1)  // it could never hold a block
      throw c.origin.error("replicas.global_cache.shared_pool_gib",
                           fmt::format("{} GiB hold {:.3g} blocks of {:.0f} bytes ({} tokens of {}); expected at "
                                       "least 1 block",
                                       g.shared_pool_gib, pool_blocks, block_bytes, c.allocator.block_size,
                                       run.model.name));
    gs.pool_blocks = std::max<std::int64_t>(1, static_cast<std::int64_t>(pool_blocks));
  }
  std::vector<const Run*> parts{&run};
  for (const Run& other : run.other_replicas) parts.push_back(&other);
  std::vector<Replica> replicas;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    replicas.emplace_back(static_cast<std::int32_t>(i), *parts[i]->scheduler, *parts[i]->cost);
    replicas.back().draft_kv_slots = parts[i]->draft_kv_slots;
  }
  Simulation simulation(*run.source, std::move(replicas), cluster ? make_router(c.replicas.router) : nullptr, es);
  simulation.add_observer(metrics);
  // Per replica, for summary.json's "replicas": the same measures over its own iterations
  // and requests (no files).
  std::vector<std::unique_ptr<Metrics>> replica_metrics;
  if (cluster) {
    MetricsSettings rms = ms;
    rms.replica_column = false;
    rms.iterations_of_replicas = false;
    rms.iterations_stride = 0;
    for (std::size_t i = 0; i < parts.size(); ++i) {
      rms.kv_bytes_per_token = static_cast<double>(parts[i]->model.kv_bytes_per_token());
      rms.block_size = parts[i]->allocator->block_size();
      replica_metrics.push_back(
          std::make_unique<Metrics>(rms, nullptr, nullptr, std::vector<const alloc::KvAllocator*>{parts[i]->allocator.get()}));
      simulation.add_replica_observer(static_cast<std::int32_t>(i), *replica_metrics.back());
    }
  }
  // The adapters a trace names (lora.adapters 0: none drawn): lora.adapters counts them, and a
  // run without a lora section says it served them as the base model.
  std::optional<TraceAdapters> trace_adapters;
  if (c.lora.adapters == 0) simulation.add_observer(trace_adapters.emplace());
  std::optional<SloTracker> slo;
  if (c.slo.enabled()) simulation.add_observer(slo.emplace(c.slo));
  // k = 0 decodes exactly as without speculation, and writes the same outputs.
  std::optional<SpeculativeMetrics> speculative;
  if (run.speculative.enabled() && run.speculative.k > 0)
    simulation.add_observer(speculative.emplace(run.speculative, c.measure.window_start_s, c.measure.window_end_s,
                                                run.draft_kv_bytes_per_slot,
                                                static_cast<double>(run.draft_own_pool_slots) *
                                                    static_cast<double>(run.model.kv_bytes_per_token_per_gpu(
                                                        c.tensor_parallel))));
  std::optional<ClientStreamMetrics> client;
  if (c.client.enabled) simulation.add_observer(client.emplace(c.client, client_stages(c)), /*tokens=*/true);
  std::optional<AtomicFile> timeline_file;
  std::optional<TimelineWriter> timeline;
  if (c.output.timeline) {
    TimelineSettings ts;
    ts.stride = c.output.timeline_stride;
    ts.start_s = c.output.timeline_start_s;
    if (c.output.timeline_end_s > 0) ts.end_s = c.output.timeline_end_s;
    ts.max_iterations = c.output.timeline_max_iterations;
    timeline_file.emplace(out / "timeline.json");
    simulation.add_observer(timeline.emplace(ts, timeline_file->stream(), allocators));
  }
  std::optional<AtomicFile> steps_file;
  std::optional<StepRecorder> steps;
  if (c.output.steps) {
    steps_file.emplace(out / "steps.jsonl");
    simulation.add_observer(steps.emplace(StepRecordHeader{c.name, std::string(pagesim_version())},
                                          steps_file->stream(), allocators));
  }
  std::unique_ptr<BatchSampler> sampler;
  if (c.validate.every_n_iterations > 0) {
    BatchSamplerSettings sampling{c.validate.every_n_iterations, c.validate.max_batches};
    if (run.model.mla.enabled()) {
      sampling.latent_dim = static_cast<std::int32_t>(run.model.mla.cached_dim());
      sampling.value_dim = static_cast<std::int32_t>(run.model.mla.kv_lora_rank);
    }
    sampler = std::make_unique<BatchSampler>(sampling, *run.allocator, out / "batches.jsonl", c.name);
    run.scheduler->set_observer(sampler.get());
    simulation.add_observer(*sampler);
  }
  try {
    simulation.run(progress);
  } catch (const UnschedulableRequest& e) {
    // The hint and the line are the replica's whose setting keeps the request out (its
    // override's, where it has one); for max_model_len, the replica with the smallest.
    std::size_t i = e.replica() >= 0 ? static_cast<std::size_t>(e.replica()) : 0;
    if (e.replica() < 0)
      for (std::size_t k = 1; k < parts.size(); ++k)
        if (parts[k]->max_model_len > 0 && (parts[i]->max_model_len == 0 || parts[k]->max_model_len < parts[i]->max_model_len))
          i = k;
    const ExperimentConfig& rc = replica_config(c, static_cast<std::int64_t>(i));
    throw rc.origin.error(e.key(), fmt::format("{}; {}", e.what(), unschedulable_hint(rc, *parts[i], e.key())));
  }
  if (sampler) sampler->finish();
  if (timeline) timeline->finish(simulation.now());
  if (steps) steps->finish();

  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  // A cluster adds up its replicas' iterations: their sums, added in index order.
  std::vector<Summary> replica_summaries;
  IterationSums replica_sums;
  for (const auto& m : replica_metrics) {
    replica_summaries.push_back(m->finish(simulation.now(), 0));
    replica_sums += m->sums();
  }
  Summary s = metrics.finish(simulation.now(), wall, cluster ? &replica_sums : nullptr);
  if (s.requests_arrived == 0) throw no_request_error(c, simulation.oversize_dropped());
  SummaryNotes n;
  n.warnings = run.warnings;
  n.requests_dropped_oversize = simulation.oversize_dropped();
  n.requests_truncated_oversize = simulation.oversize_truncated();
  if (slo) n.slo = record_json(slo->finish(s.sim_time_s));
  n.cost = cost_notes_json(parts);
  if (speculative) n.speculative = speculative->to_json();
  if (cluster) {
    std::vector<ReplicaResult> per;
    for (std::size_t i = 0; i < parts.size(); ++i) {
      const Run& part = *parts[i];
      const Replica& replica = simulation.replica(static_cast<std::int32_t>(i));
      const ExperimentConfig& rc = replica_config(c, static_cast<std::int64_t>(i));
      ReplicaResult r;
      r.index = static_cast<std::int32_t>(i);
      r.allocator = part.allocator->name();
      r.scheduler = std::string(to_string(rc.scheduler.kind));
      r.cost_model = part.cost->describe();
      r.kv_slots = part.kv_slots;
      r.requests_routed = replica.routed_requests;
      r.tokens_routed = replica.routed_tokens;
      if (c.replicas.disaggregated.enabled()) {
        r.role = static_cast<std::int64_t>(i) < c.replicas.disaggregated.prefill ? "prefill" : "decode";
        r.kv_transfers_in = replica.handed_in;
      }
      if (c.replicas.global_cache.enabled) r.global_fetch = replica.global_fetch;
      r.summary = std::move(replica_summaries[i]);
      per.push_back(std::move(r));
    }
    const ClusterJson cj = cluster_json(std::string(enum_name(kRouterKindNames, c.replicas.router.kind)), per,
                                        c.replicas.global_cache.enabled);
    n.cluster = cj.cluster;
    n.replicas = cj.replicas;
  }
  if (c.allocator.prefix_cache && simulation.requests_with_token_ids() == 0)
    n.warnings.push_back(warning(
        c.origin, "allocator.prefix_cache",
        "no request of the workload carried token identities (hash_ids), so the prefix cache never had a "
        "prompt to match: the run is one without it; replay a trace that carries hash_ids (e.g. format: "
        "mooncake), or set prefix_cache: false"));
  if (!c.lora.enabled && trace_adapters && !trace_adapters->seen.empty())
    n.warnings.push_back(warning(
        c.origin, "workload.trace",
        fmt::format("the trace names {} distinct LoRA adapters, but the experiment has no lora section: every "
                    "request ran as the base model (no adapter slots, loads or weights); add lora: {{}} to serve them",
                    trace_adapters->seen.size())));
  if (s.window_iterations == 0)
    n.warnings.push_back(warning(
        c.origin, "measure.window_start_s",
        fmt::format("the measurement window [{}, {}) s holds no iteration of the run, which simulated {:.3f} s: "
                    "every window average is empty (batch sizes read 0, memory_pct the pool all free); set "
                    "measure.window_start_s / "
                    "window_end_s inside the run",
                    c.measure.window_start_s, c.measure.window_end_s, s.sim_time_s)));
  if (client)
    for (const StageOverlap& o : client->stage_overlaps())
      n.warnings.push_back(warning(
          c.origin, "workload.inference_perf.stage_gap_s",
          fmt::format("load stage {} still had {} requests in flight when stage {}'s first request arrived at "
                      "{:.3f} s; inference-perf waits for every request of a stage to finish before the next "
                      "(loadgen/load_generator.py:339), so its stage {} would have met an idle server: raise "
                      "stage_gap_s",
                      o.stage, o.in_flight, o.stage + 1, o.at_s, o.stage + 1)));
  if (timeline && timeline->iterations_written() == 0)
    n.warnings.push_back(warning(
        c.origin, "output.timeline_start_s",
        fmt::format("timeline.json holds no iteration: its window starts at output.timeline_start_s = {} s and the "
                    "run simulated {:.3f} s; set output.timeline_start_s / timeline_end_s inside the run",
                    c.output.timeline_start_s, s.sim_time_s)));

  if (requests) requests->commit();
  if (iterations) iterations->commit();
  if (timeline_file) timeline_file->commit();
  if (steps_file) steps_file->commit();
  if (client) write_file_atomically(out / "client_metrics.json", client->to_json().dump(2) + "\n");
  write_file_atomically(out / "config.resolved.yaml", resolved_config_text(c, run));
  nlohmann::ordered_json j;
  // Which pagesim wrote it. First, so a comparison across builds drops these two lines alone
  // (experiments/reference/compare.sh).
  j["pagesim_version"] = std::string(pagesim_version());
  j["pagesim_commit"] = std::string(pagesim_commit());
  j["name"] = c.name;
  j["allocator"] = run.allocator->name();
  j["scheduler"] = std::string(to_string(replica_config(c, 0).scheduler.kind));
  j["cost_model"] = run.cost->describe();
  j["workload"] = run.source->describe();
  j["kv_slots"] = run.kv_slots;
  if (run.kv_budget) j["kv_budget"] = kv_budget_json(*run.kv_budget, vllm_family(c.vllm_version));
  const nlohmann::ordered_json fields = s.to_json();
  for (const auto& [k, v] : fields.items()) j[k] = v;
  n.add_to(j);
  if (c.lora.enabled) {  // the adapters, and their traffic summed over the replicas
    AdapterCounters sum;
    for (const Run* part : parts) {
      const AdapterCounters k = part->adapters->counters();
      sum.loads += k.loads;
      sum.cpu_misses += k.cpu_misses;
      sum.evictions += k.evictions;
      sum.load_bytes += k.load_bytes;
      sum.load_seconds += k.load_seconds;
    }
    nlohmann::ordered_json& l = j["lora"];
    l["placement"] = std::string(enum_name(kLoraPlacementNames, c.lora.placement));
    // Drawn adapters: lora.adapters; else the distinct ones the trace named.
    l["adapters"] = c.lora.adapters > 0 || !trace_adapters ? c.lora.adapters
                                                            : static_cast<std::int64_t>(trace_adapters->seen.size());
    l["adapter_bytes"] = run.lora_adapter_bytes;
    if (c.lora.placement == LoraPlacement::kVllm) {
      l["max_loras"] = c.lora.max_loras;
      l["slot_bytes"] = run.lora_slot_bytes;
      l["region_slots"] = run.allocator_spec.adapter_region_blocks * run.allocator_spec.block_size;
    } else {
      l["adapter_slots"] = run.adapters->adapter_blocks() * run.allocator_spec.block_size;
    }
    l["loads"] = sum.loads;
    l["cpu_misses"] = sum.cpu_misses;
    l["evictions"] = sum.evictions;
    l["load_bytes"] = sum.load_bytes;
    l["load_seconds"] = sum.load_seconds;
  }
  if (notes) *notes = std::move(n);
  write_file_atomically(out / "summary.json", j.dump(2) + "\n");  // last: its presence means complete
  folder.keep();
  return s;
}

namespace {

// ---- Sweeps ----

// What became of a sweep's point: sweep.csv's `status` after a failure stopped the sweep.
enum class PointStatus { kNotRun, kOk, kFailed };

constexpr std::string_view status_name(PointStatus s) {
  return s == PointStatus::kOk ? "ok" : s == PointStatus::kFailed ? "failed" : "not run";
}

// Runs every point not `kept` (--resume) on `jobs` threads; each point is its own simulation, its config made
// under `yaml` (yaml-cpp nodes cannot be read concurrently). With several jobs the progress
// callbacks are serialised. After a failure no new point starts; once the running ones are
// done, the first failing point's error (by index) is returned (null when every point ran).
// `results` and `status` get one entry per point: a point's result is valid where its
// status is kOk.
std::exception_ptr run_sweep_points(const Sweep& sweep, const std::filesystem::path& out,
                                    const ProgressFactory& progress, std::size_t jobs,
                                    const std::vector<std::optional<KeptPoint>>& kept,
                                    std::vector<PointResult>& results, std::vector<PointStatus>& status) {
  const std::size_t n = sweep.size();
  results.assign(n, PointResult{});
  status.assign(n, PointStatus::kNotRun);
  std::vector<std::exception_ptr> errors(n);
  std::mutex yaml, printing;
  std::atomic<std::size_t> next{0};
  std::atomic<bool> failed{false};
  auto work = [&] {
    while (!failed) {
      const std::size_t i = next++;
      if (i >= n) return;
      ExperimentConfig config;
      ProgressFn report;
      {
        std::lock_guard<std::mutex> lock(yaml);
        config = sweep.config(i);
        results[i].label = sweep.label(i);
        results[i].assignments = sweep.assignments(i);
        if (kept[i]) {
          results[i].summary = kept[i]->summary;  // --resume: complete for this very config
          results[i].notes = kept[i]->notes;
          results[i].kept = true;
          status[i] = PointStatus::kOk;
          continue;
        }
        if (progress) report = progress(results[i].label, i, n);
      }
      if (report && jobs > 1)
        report = [&printing, inner = std::move(report)](double now, std::int64_t arrived, std::int64_t finished) {
          std::lock_guard<std::mutex> lock(printing);
          inner(now, arrived, finished);
        };
      // A point's failure names the point (label and values), as plan_points' errors do.
      try {
        results[i].summary = run_experiment(config, out / point_folder(i, results[i].label), report, &results[i].notes);
        status[i] = PointStatus::kOk;
      } catch (const ConfigError& e) {
        std::lock_guard<std::mutex> lock(yaml);
        errors[i] = std::make_exception_ptr(sweep.in_point(i, e));
        status[i] = PointStatus::kFailed;
        failed = true;
      } catch (const SimulationError& e) {
        std::lock_guard<std::mutex> lock(yaml);
        errors[i] = std::make_exception_ptr(
            SimulationError(fmt::format("{} (in sweep point {} '{}')", e.what(), i, results[i].label)));
        status[i] = PointStatus::kFailed;
        failed = true;
      } catch (...) {
        errors[i] = std::current_exception();
        status[i] = PointStatus::kFailed;
        failed = true;
      }
    }
  };
  if (jobs <= 1) {
    work();
  } else {
    std::vector<std::thread> threads;
    for (std::size_t t = 0; t < std::min(jobs, n); ++t) threads.emplace_back(work);
    for (auto& t : threads) t.join();
  }
  for (const auto& e : errors)
    if (e) return e;
  return nullptr;
}

// Each swept key's value for point `index`, in sweep.keys() order: the value the point sets,
// as written; for a key it does not set (another case's), its effective value, from the
// config.resolved.yaml the point wrote into `dir` (what ran, derived values included), else
// from its config with every default written out. Empty only for a key neither holds.
std::vector<std::string> swept_values(const Sweep& sweep, std::size_t index, const std::filesystem::path& dir) {
  const std::vector<std::pair<std::string, std::string>> assigned = sweep.assignments(index);
  std::optional<YAML::Node> resolved, every_field;
  std::vector<std::string> values;
  for (const std::string& k : sweep.keys()) {
    const auto it = std::find_if(assigned.begin(), assigned.end(), [&](const auto& a) { return a.first == k; });
    if (it != assigned.end()) {
      values.push_back(it->second);
      continue;
    }
    if (!resolved) {
      try {
        resolved = YAML::LoadFile((dir / "config.resolved.yaml").string());
      } catch (const YAML::Exception&) {
        resolved = YAML::Node();  // unreadable: the defaults below stand in
      }
    }
    std::optional<std::string> v = value_text_at(*resolved, k);
    if (!v) {
      if (!every_field) every_field = to_yaml(sweep.config(index), true);
      v = value_text_at(*every_field, k);
    }
    values.push_back(v.value_or(""));
  }
  return values;
}

// sweep.csv: one row per point; host timings stay in each summary.json (reproducibility).
// A sweep of cases adds a `case` column (the point's case label) before the swept keys, and
// every swept key has a value on every row (swept_values), so grouping by a key keeps the
// cases that leave it at its default. The notes' columns (slo.*, cluster.*) follow, their
// union over the points in order of first appearance, empty where a point has none; without
// any the table is as it was. A sweep a failure stopped (`status` given, some point not ok)
// ends each row with a `status` column (ok, failed, not run) and leaves the results of the
// points not ok empty; a sweep whose every point ran has no such column.
void write_sweep_csv(const Sweep& sweep, const std::vector<PointResult>& results, const std::filesystem::path& out,
                     const std::vector<PointStatus>* status = nullptr) {
  const auto ok = [&](std::size_t i) { return status == nullptr || (*status)[i] == PointStatus::kOk; };
  bool stopped = false;
  for (std::size_t i = 0; i < results.size(); ++i) stopped |= !ok(i);
  const std::vector<std::string> keys = sweep.keys();
  const bool cases = sweep.has_cases();
  AtomicFile csv(out / "sweep.csv");
  std::string header = cases ? "point,label,case" : "point,label";
  for (const auto& k : keys) header += "," + csv_field(k);
  // The columns of every point, in first-seen order: the summary's, then the notes' (slo,
  // cluster). Points differ only by optional objects (prefix_cache when the sweep turns the
  // prefix cache on and off, slo, cluster), whose cells stay empty where a point has none.
  std::vector<std::string> columns;
  std::vector<std::vector<std::pair<std::string, std::string>>> cells(results.size());
  auto add = [&](std::size_t i, const std::string& k, std::string cell) {
    if (std::find(columns.begin(), columns.end(), k) == columns.end()) columns.push_back(k);
    cells[i].emplace_back(k, std::move(cell));
  };
  for (std::size_t i = 0; i < results.size(); ++i) {
    if (!ok(i)) continue;
    for (const auto& [k, v] : flatten(results[i].summary.to_json()))
      if (!is_host_timing(k)) add(i, k, v.dump());
    for (const auto& [k, v] : flatten_note_columns(results[i].notes))
      add(i, k, v.is_string() ? csv_field(v.get<std::string>()) : v.dump());
  }
  for (const auto& k : columns) header += "," + csv_field(k);
  if (stopped) header += ",status";
  csv.stream() << header << '\n';
  for (std::size_t i = 0; i < results.size(); ++i) {
    const std::string folder = point_folder(i, sweep.label(i));  // a point not run has no result's label
    std::string row = fmt::format("{},{}", folder, csv_field(sweep.label(i)));
    if (cases) row += "," + csv_field(sweep.case_label(i));
    for (const std::string& v : swept_values(sweep, i, out / folder)) row += "," + csv_field(v);
    for (const auto& k : columns) {
      auto it = std::find_if(cells[i].begin(), cells[i].end(), [&](const auto& kv) { return kv.first == k; });
      row += "," + (it == cells[i].end() ? std::string() : it->second);
    }
    if (stopped) row += "," + csv_field(std::string(status_name((*status)[i])));
    csv.stream() << row << '\n';
  }
  csv.commit();
}

}  // namespace

std::vector<PlannedPoint> plan_points(const Sweep& sweep) {
  std::vector<PlannedPoint> plan;
  plan.reserve(sweep.size());
  for (std::size_t i = 0; i < sweep.size(); ++i) {
    try {
      const ExperimentConfig config = sweep.config(i);
      plan.push_back({sweep.swept() ? point_folder(i, sweep.label(i)) : std::string(),
                      resolved_config_text(config, build_run(config))});
    } catch (const ConfigError& e) {
      throw sweep.in_point(i, e);  // one run: the error as it was, or blamed on its --set
    }
  }
  return plan;
}

void write_sweep_table(const Sweep& sweep, const std::vector<PointResult>& results, const std::filesystem::path& out) {
  write_sweep_csv(sweep, results, out);
}

std::vector<PointResult> run_experiment_file(const std::string& file, const std::vector<std::string>& overrides,
                                             const std::filesystem::path& out, const ProgressFactory& progress,
                                             std::size_t jobs, ExistingResults existing, SweepStop* stopped) {
  return run_experiment_sweep(Sweep::from_file(file, overrides), out, progress, jobs, existing, stopped);
}

std::vector<PointResult> run_experiment_sweep(const Sweep& sweep, const std::filesystem::path& out,
                                              const ProgressFactory& progress, std::size_t jobs,
                                              ExistingResults existing, SweepStop* stopped) {
  const bool swept = sweep.swept();
  const std::vector<PlannedPoint> plan = plan_points(sweep);
  ResultFolder folder(out, existing);
  const std::vector<std::optional<KeptPoint>> kept = folder.prepare(plan);
  std::vector<PointResult> results;
  if (!swept) {
    PointResult r;
    if (kept[0]) {
      r.summary = kept[0]->summary;  // --resume: complete for this very config
      r.notes = kept[0]->notes;
      r.kept = true;
    } else
      r.summary = run_experiment(sweep.config(0), out, progress ? progress("", 0, 1) : ProgressFn{}, &r.notes);
    results.push_back(std::move(r));
  } else {
    std::vector<PointStatus> status;
    const std::exception_ptr error = run_sweep_points(sweep, out, progress, jobs, kept, results, status);
    if (error) {
      // The points that finished are not lost: sweep.csv lists every point with its status.
      SweepStop stop{.points = sweep.size()};
      for (const PointStatus s : status)
        (s == PointStatus::kOk ? stop.finished : s == PointStatus::kFailed ? stop.failed : stop.not_run) += 1;
      if (stop.finished > 0) {
        write_sweep_csv(sweep, results, out, &status);
        stop.table_written = true;
        folder.finish();
      }
      if (stopped) *stopped = stop;
      std::rethrow_exception(error);
    }
    write_sweep_csv(sweep, results, out);
  }
  folder.finish();
  return results;
}

// summary.json's "kv_budget": the pool vLLM's start-up log would print for this replica (GiB
// to two decimals as the log has them, and the exact bytes).
nlohmann::ordered_json kv_budget_json(const VllmKvBudget& b, KvEngine engine) {
  const auto gib = [](std::int64_t bytes) { return std::round(static_cast<double>(bytes) / std::pow(2.0, 30) * 100) / 100; };
  nlohmann::ordered_json j;
  j["engine"] = std::string(enum_name(kKvEngineNames, engine));
  j["total_gib"] = gib(b.total_bytes);
  j["requested_gib"] = gib(b.requested_bytes);
  j["weights_gib"] = gib(b.weight_bytes);
  if (b.draft_weight_bytes > 0) j["draft_weights_gib"] = gib(b.draft_weight_bytes);
  j["activation_gib"] = gib(b.activation_bytes);
  j["non_torch_gib"] = gib(b.non_torch_bytes);
  j["cuda_graphs_gib"] = gib(b.cuda_graph_bytes);
  j["kv_cache_gib"] = gib(b.kv_bytes);
  j["kv_cache_bytes"] = b.kv_bytes;
  j["kv_bytes_per_token"] = b.kv_bytes_per_token;
  j["kv_cache_tokens"] = b.tokens;
  j["max_concurrency"] = std::round(b.max_concurrency * 100) / 100;
  return j;
}

}  // namespace pagesim::sim
