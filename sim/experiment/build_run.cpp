#include "sim/experiment/run_building.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <filesystem>
#include <limits>
#include <memory>
#include <new>
#include <optional>
#include <utility>
#include <vector>
#include <fmt/format.h>
#include "allocator/make_allocator.h"
#include "allocator/paged/paged_allocator.h"
#include "sim/config/config_error.h"
#include "sim/config/enum_names.h"
#include "sim/config/input_path.h"
#include "sim/config/kind_rules.h"
#include "sim/cost/cost_error.h"
#include "sim/cost/kv_capacity.h"
#include "sim/cost/presets.h"
#include "sim/cost/speculative_cost_model.h"
#include "sim/metrics/slo.h"
#include "sim/metrics/speculative_metrics.h"
#include "sim/output/build_info.h"
#include "sim/cost/lora_adapter_bytes.h"
#include "traces/adapter_assignment.h"
#include "traces/make_source.h"
#include "traces/trace_error.h"
#include "sim/experiment/experiment.h"

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

// Block ids are 32-bit (allocator/block.h): a pool of more blocks cannot be built.
constexpr std::int64_t kMaxBlocks = std::numeric_limits<alloc::BlockId>::max();

// The key a KV pool size came from: kv.slots when the file gives it, else the settings
// that derive it.
std::string capacity_key(const ExperimentConfig& c) { return c.kv.slots > 0 ? "kv.slots" : "kv.gpu_memory_utilization"; }

// The config key a speculative drafter's size comes from, for errors.
std::string drafter_key(const ExperimentConfig& c) {
  return c.speculative.settings.method == SpeculativeMethod::kEagle ? "speculative.eagle_layers"
                                                                    : "speculative.draft_model";
}

}  // namespace

std::string unschedulable_hint(const ExperimentConfig& c, const Run& run, const std::string& key) {
  const alloc::AllocatorSpec& as = run.allocator_spec;
  std::string hint;
  if (key == "allocator.max_seq_len" && as.contiguous.reservation.kind() == alloc::ReservationPolicy::Kind::kMax &&
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
                       as.contiguous.max_chunk_blocks, as.block_size, as.contiguous.max_chunk_blocks * as.block_size,
                       as.contiguous.max_chunk_blocks * as.block_size < as.max_seq_len
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

std::string resolved_config_text(const ExperimentConfig& c, const Run& run) {
  // Each configuration's values as its replicas ran them, so the file reruns as it ran: the
  // top level's (not an overridden replica 0's), and each override entry's. A configuration
  // no replica runs keeps the file's values.
  const auto as_run = [&run](const ExperimentConfig& config) {
    ExperimentConfig used = config;
    for (const Run::BuiltConfig& built : run.built_configs) {
      if (built.config != &config) continue;
      used.allocator.max_seq_len = built.allocator_spec.max_seq_len;
      used.allocator.contiguous.max_chunk_blocks = built.allocator_spec.contiguous.max_chunk_blocks;
      // The roofline's efficiencies and overhead as used (the GPU preset's unless overridden),
      // not -1 for "the preset's": the file says what ran. Only for roofline: under profile
      // iteration_overhead_s means host time added (none unless set), and the other kinds
      // refuse these keys.
      if (std::holds_alternative<RooflineCostSettings>(config.cost))
        used.cost = RooflineCostSettings{built.gpu.compute_efficiency, built.gpu.memory_efficiency,
                                         built.gpu.iteration_overhead_seconds};
      break;
    }
    return used;
  };
  ExperimentConfig used = as_run(c);
  for (ReplicaOverride& o : used.replicas.overrides)
    o.config = std::make_shared<const ExperimentConfig>(as_run(*o.config));
  YAML::Emitter resolved;
  resolved << to_yaml(used);
  return std::string(resolved.c_str()) + "\n";
}

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
      vs.version = c.vllm_version;
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

// One replica's parts from its settings; the workload source too when `with_source`; the
// input files checked when `check_paths` (once per configuration: the check touches the file
// system). `shared_cost`: an earlier replica's cost model, of the same configuration, which
// this one shares (Run::cost) instead of building its own; null: built.
Run build_replica(const ExperimentConfig& c, bool with_source, bool check_paths, const ServingKinds& kinds,
                  std::shared_ptr<const CostModel> shared_cost) {
  const ConfigOrigin& origin = c.origin;
  const SchedulerDescriptor& policy = scheduler_kind(kinds, c.scheduler.kind);
  const AllocatorDescriptor& pool_kind = allocator_kind(kinds, c.allocator.kind);
  Run run;
  run.model = in_section(origin, model_error_key(c.custom_model), [&] { return model_of(c.model, c.custom_model); });
  run.model.kv_dtype = c.kv_dtype;
  // A measured profile timed the kernels at the model's own dtype: its attention times do not
  // follow kv_dtype (the capacity does).
  if (c.kv_dtype != KvDtype::kAuto && std::holds_alternative<ProfileCostSettings>(c.cost))
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
  // The GPU as the roofline prices it, the drafter's roofline included; a profile's host
  // seconds stand in for the drafter's per-iteration overhead, as they always have.
  if (const auto* r = std::get_if<RooflineCostSettings>(&c.cost)) run.gpu = r->applied_to(run.gpu);
  if (const auto* p = std::get_if<ProfileCostSettings>(&c.cost); p && p->iteration_overhead_s >= 0)
    run.gpu.iteration_overhead_seconds = p->iteration_overhead_s;

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
  if (pool_kind.traits().layer_groups) fill_layer_group_pool(c, run, as);
  as.single_free_queue = policy.single_free_queue;  // vllm-v1's FreeKVCacheBlockQueue
  const double kv_bytes_per_block = kv_bytes_per_token * static_cast<double>(c.allocator.block_size);
  as.cpu_blocks = static_cast<std::int64_t>(c.allocator.cpu_swap_gib * std::pow(2.0, 30) / kv_bytes_per_block);
  if (!c.allocator.offload_config.tiers.empty())
    as.offload = offload_settings(c.allocator.offload_config, kv_bytes_per_block, kMaxBlocks, origin);
  if (c.scheduler.preemption == PreemptionMode::kSwap && pool_kind.traits().swap && as.cpu_blocks == 0)
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
    std::int64_t& chunk = as.contiguous.max_chunk_blocks;
    while (chunk < blocks && chunk < kMaxBlocks / 2) chunk *= 2;
  }
  run.max_model_len = c.max_model_len == kMaxModelLenOfModel ? run.model.max_seq_len : c.max_model_len;
  // vattention's rows hold max_model_len tokens (the model's context unless the file sets it;
  // with max_model_len: off, the model's context length).
  if (pool_kind.row_length == RowLength::kMaxModelLen)
    as.max_seq_len = run.max_model_len > 0 ? run.max_model_len : run.model.max_seq_len;
  run.allocator_spec = as;
  bool beams = false;
  for (const auto& s : c.workload.sampling) beams |= s.beam_width > 1;
  if (beams && !pool_kind.traits().beam)
    throw origin.error("allocator.kind",
                       fmt::format("beam search (workload.sampling beam_width > 1) needs the {} allocator",
                                   kind_names(kinds.allocators, [](const AllocatorDescriptor& k) { return k.traits().beam; })));
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
    if (!runs_over(policy, pool_kind.kind)) throw origin.error("allocator.kind", pool_refusal(kinds, policy, pool_kind));
    if (c.lora.enabled) configure_lora(c, run, as);  // check_lora: a pool and a policy that take LoRA
    BuiltPool built = in_section(origin, "allocator", [&] { return pool_kind.build(as); });
    run.scheduler = in_section(origin, "scheduler", [&] { return make_scheduler(ss, built.pool, kinds.schedulers); });
    if (c.lora.enabled) {
      alloc::PagedAllocator* paged_allocator = built.pool.paged();
      assert(paged_allocator != nullptr);  // alloc::AllocatorTraits::lora: paged only
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

  if (check_paths) check_input_paths(c);  // a missing trace or profile is named by its key, not by its reader
  if (shared_cost) {
    run.cost = std::move(shared_cost);
  } else {
    CostModelSpec cs{.model = run.model,
                     .gpu = run.gpu,
                     .tp = c.tensor_parallel,
                     .settings = c.cost,
                     .input_file = [](const std::string& path) { return input_file(path); },
                     .max_num_seqs = c.scheduler.max_num_seqs,
                     .max_num_batched_tokens = c.scheduler.max_num_batched_tokens};
    // An operators model whose GPU preset has no tables of its own is the gpu key's fault.
    const auto* operators = std::get_if<OperatorsCostSettings>(&c.cost);
    const bool tables_of_gpu = operators && operators->gpu.empty() && !operator_table_gpu(c.gpu);
    std::unique_ptr<CostModel> cost =
        in_section(origin, tables_of_gpu ? "gpu" : "cost", [&] { return make_cost_model(cs); });
    if (run.speculative.enabled() && run.speculative.k > 0) {
      // The drafter's passes: its own roofline model on the run's GPU, or a ratio of the target's.
      std::unique_ptr<CostModel> draft;
      const SpeculativeMethod m = run.speculative.method;
      if (c.speculative.draft_cost_ratio < 0 && (m == SpeculativeMethod::kDraftModel || m == SpeculativeMethod::kEagle)) {
        CostModelSpec ds;
        ds.model = draft_model_of(c, run.model);
        ds.gpu = run.gpu;
        ds.tp = c.tensor_parallel;
        draft = in_section(origin, "speculative", [&] { return make_cost_model(ds); });
      }
      cost = std::make_unique<SpeculativeCostModel>(std::move(cost), std::move(draft), c.speculative.draft_cost_ratio,
                                                    run.speculative.k);
    }
    run.cost = std::move(cost);
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

namespace {

// build_run, or with each_config_once the replicas of each distinct configuration
// (replica_config) but the first left out: they build alike, so they fail alike.
Run build_replicas(const ExperimentConfig& c, const ServingKinds& kinds, bool each_config_once,
                   std::unique_ptr<traces::RequestSource> workload = nullptr) {
  // In a cluster, an error names the replica whose settings (the file's, or its override's
  // at the line given) could not be built.
  const std::vector<std::int64_t> firsts = first_replica_of_each_config(c);
  auto first_of_config = [&](std::int64_t i) { return std::binary_search(firsts.begin(), firsts.end(), i); };
  auto build = [&](std::int64_t i, std::shared_ptr<const CostModel> shared_cost) {
    try {
      return build_replica(replica_config(c, i), i == 0 && !workload, first_of_config(i), kinds, std::move(shared_cost));
    } catch (const ConfigError& e) {
      if (c.replicas.count == 1) throw;
      throw ConfigError(e.file(), e.line(), e.key(), fmt::format("replica {}: {}", i, e.message()));
    }
  };
  Run run = build(0, nullptr);
  if (workload) run.source = std::move(workload);
  auto note_built = [&](std::int64_t i, const Run& built) {
    if (first_of_config(i)) run.built_configs.push_back({&replica_config(c, i), built.allocator_spec, built.gpu});
  };
  note_built(0, run);
  // A replica of a configuration built before shares the cost model of that configuration's
  // first replica (Run::cost): built once a configuration, not once a replica (an operators
  // model reads its tables).
  auto shared_cost = [&](std::int64_t i) -> std::shared_ptr<const CostModel> {
    if (first_of_config(i)) return nullptr;
    const ExperimentConfig* config = &replica_config(c, i);
    const std::int64_t first =
        *std::find_if(firsts.begin(), firsts.end(), [&](std::int64_t j) { return &replica_config(c, j) == config; });
    return first == 0 ? run.cost : run.other_replicas[static_cast<std::size_t>(first - 1)].cost;
  };
  for (std::int64_t i = 1; i < c.replicas.count; ++i) {
    if (each_config_once && !first_of_config(i)) continue;
    Run other = build(i, shared_cost(i));
    note_built(i, other);
    for (std::string& w : other.warnings)
      if (std::find(run.warnings.begin(), run.warnings.end(), w) == run.warnings.end())
        run.warnings.push_back(std::move(w));
    other.warnings.clear();
    if (!each_config_once) run.other_replicas.push_back(std::move(other));
  }
  return run;
}

}  // namespace

Run build_run(const ExperimentConfig& c, const ServingKinds& kinds) { return build_replicas(c, kinds, false); }

Run build_run(const ExperimentConfig& c, std::unique_ptr<traces::RequestSource> workload) {
  return build_replicas(c, kServingKinds, false, std::move(workload));
}

Run check_run(const ExperimentConfig& c) { return build_replicas(c, kServingKinds, true); }

}  // namespace pagesim::sim
