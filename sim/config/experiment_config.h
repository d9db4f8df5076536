// ExperimentConfig: everything one run needs, as parsed from an experiment YAML file.
//
// Each section is a plain struct with defaults; the defaults describe the vLLM paper's
// setting (OPT-13B on one A100-40GB, vLLM scheduler, paged block 16). kv.slots = 0 derives
// the capacity from GPU memory as vLLM vllm_version sizes it (14,496 slots there,
// vllm_kv_budget.h); the paper's 15,728 is set explicitly by the experiments that reproduce it.
// load_yaml_file(), apply_override() (--set; config_tree.h) and parse_experiment() read a file into it:
// every section parsed once into typed values (enums, a ReservationPolicy), every value
// checked there, and the line of every key kept in `origin` for the errors found later
// (experiment.h builds the run from the config alone). to_yaml() writes it back with every
// default filled in (config.resolved.yaml). The same field list drives both
// (experiment_fields.h), so they cannot drift apart; experiment_checks.h holds the checks.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "allocator/make_allocator.h"
#include "sim/beam/beam_model_settings.h"
#include "sim/cluster/disaggregation_settings.h"
#include "sim/cluster/global_cache_settings.h"
#include "sim/cluster/router_settings.h"
#include "sim/config/config_origin.h"
#include "sim/config/config_tree.h"
#include "sim/config/key_schema.h"
#include "sim/config/model_config.h"
#include "sim/config/offload_config.h"
#include "sim/cost/cost_model_factory.h"
#include "sim/core/advance_settings.h"
#include "sim/core/speculative_settings.h"
#include "sim/cost/kv_dtype.h"
#include "sim/cost/vllm_kv_budget.h"
#include "sim/metrics/client_stream_metrics.h"
#include "sim/metrics/latency_samples.h"
#include "sim/metrics/slo.h"
#include "sim/scheduler/lora_settings.h"
#include "sim/core/vllm_version.h"
#include "sim/scheduler/scheduler_settings.h"
#include "traces/workload_spec.h"

namespace pagesim::sim {

struct KvConfig {
  std::int64_t slots = 0;  // KV capacity in token slots; 0 = derive from gpu memory below.
                           // Pools of whole blocks hold it rounded down to them (experiment.h)
  double gpu_memory_utilization = 0.9;  // fraction of GPU memory the server may use
  double activation_reserve_gib = 0;    // held back for activations when deriving slots;
                                        // with a vLLM engine, > 0 replaces the modelled
                                        // profile-run peak (sim/cost/vllm_kv_budget.h)
  // How slots: 0 sizes the pool (vllm_kv_budget.h): as the vLLM release `vllm_version`
  // profiles the GPU (the default; its profile run takes scheduler.max_num_batched_tokens /
  // max_num_seqs), or pagesim's earlier formula (kv_capacity.h). Written to
  // config.resolved.yaml only when pagesim.
  KvSizing engine = KvSizing::kVllm;
};

// The allocator's own spec (its policies, typed) plus what the config gives in other units.
// capacity_slots and cpu_blocks are not config keys: the run derives them from kv and
// cpu_swap_gib (experiment.h).
struct AllocatorConfig : alloc::AllocatorSpec {
  double cpu_swap_gib = 20;  // paged: CPU swap space (the vLLM artifact's 20 GiB), shared
                             // with a CPU offload tier
  OffloadConfig offload_config;  // allocator.offload as written; the run derives
                                 // AllocatorSpec::offload (in blocks) from it
  // allocator.vattention.page_kib: vattention's physical page, KiB (a power of two; 64, 128,
  // 256 need vAttention's modified driver, 2048 is a stock CUDA large page). The run sets
  // AllocatorSpec::vattention.page_bytes from it; max_batch_size and deferred_reclamation are
  // read into AllocatorSpec::vattention directly.
  std::int64_t vattention_page_kib = 2048;
  // Whether the allocator.vattention section holds only defaults (then config.resolved.yaml
  // leaves it out, so resolved configs of other kinds stay as they were).
  bool vattention_at_default() const {
    const alloc::VattentionSettings d;
    return vattention_page_kib == 2048 && vattention.max_batch_size == d.max_batch_size &&
           vattention.deferred_reclamation == d.deferred_reclamation;
  }
};

struct MeasureConfig {
  double window_start_s = 0;  // averages over iterations starting in [start, end)
  double window_end_s = std::numeric_limits<double>::infinity();
};

struct ValidateConfig {
  std::int64_t every_n_iterations = 0;  // write every Nth batch to batches.jsonl; 0 = off
  std::int64_t max_batches = 32;        // at most this many batches
};

struct OutputConfig {
  std::int64_t iterations_stride = 1;  // every Nth iteration to iterations.csv; 0: none
  bool requests_csv = true;
  // timeline.json (sim/metrics/timeline.h), off by default. Its bounds: every Nth iteration
  // (>= 1), the window [start_s, end_s) of simulated seconds (end 0: the run's end), and at
  // most max_iterations iteration slices (0: no bound; the default keeps a long run's file
  // near 50-60 MB). Written to config.resolved.yaml only when not at their defaults.
  bool timeline = false;
  std::int64_t timeline_stride = 1;
  double timeline_start_s = 0;
  double timeline_end_s = 0;
  std::int64_t timeline_max_iterations = 100000;
  // steps.jsonl (sim/metrics/step_recorder.h): each step's scheduling decisions as an engine
  // logs them, for comparing with vLLM's and SGLang's own schedulers
  // (experiments/engine_parity/). Off by default: it reads the pool at every step and keeps
  // every iteration planned (no decode runs). Written to config.resolved.yaml only when on.
  bool steps = false;
  // Values of each per-request latency (e2e, TTFT, TPOT, normalized) held in memory; beyond
  // them, sorted batches go to an anonymous temporary file in $TMPDIR and the percentiles
  // come from merging them, bit for bit the same (sim/metrics/latency_samples.h). The default
  // (2^18) keeps runs of up to 262,144 requests in memory, and 2 MiB a latency past that.
  std::int64_t latency_samples_in_memory = static_cast<std::int64_t>(LatencySamples::kBatchValues);
};

// speculative: speculative decoding (sim/core/speculative_settings.h; vllm-v1 over a paged
// pool). Absent or method none: off. The run derives SpeculativeSettings::lookahead,
// draft_kv_ratio and seed.
struct SpeculativeConfig {
  SpeculativeSettings settings;  // method, num_speculative_tokens (k), acceptance, draft_kv
  std::string draft_model;       // method draft_model: the draft's model preset (required)
  std::int64_t eagle_layers = 1;  // method eagle: decoder layers of the EAGLE head (EAGLE-1/2,
                                  // vLLM's EAGLE heads: 1), each as one of the target's
  // >= 0: each draft pass costs this times the target's pass over the same batch (Leviathan
  // et al.'s c); -1: the draft's own roofline model on the run's GPU (n-gram: no GPU time).
  double draft_cost_ratio = -1;
};

struct ExperimentConfig;

// One entry of replicas.overrides: replica `index` runs `config`, the experiment's settings
// with the entry's model, gpu, tensor_parallel, max_model_len, kv, allocator, scheduler and
// cost keys laid over them (parsed and checked as a whole experiment).
struct ReplicaOverride {
  std::int64_t index = 0;
  std::shared_ptr<const ExperimentConfig> config;  // never null once parsed
};

// replicas: how many serving instances, the router in front of them, and which differ.
struct ReplicasConfig {
  std::int64_t count = 1;  // replicas, >= 1; 1 is the single-GPU-pool run of old
  RouterSettings router;   // kind from replicas.router, knobs from replicas.prefix_aware.*
                           // (its seed is the experiment's, set by the run)
  std::vector<ReplicaOverride> overrides;  // at most one per index, in file order
  DisaggregationSettings disaggregated;    // replicas.disaggregated; default: co-located
  GlobalCacheSettings global_cache;        // replicas.global_cache; default: local caches only
  bool at_default() const;
};

inline constexpr std::int64_t kMaxReplicas = 65536;  // a bound on the cluster, not a model of one

inline constexpr std::int64_t kMaxModelLenOff = 0;
inline constexpr std::int64_t kMaxModelLenOfModel = -1;

// max_model_len's text: "off", "model" or a count of tokens >= 1 (throws std::invalid_argument
// otherwise), and back.
std::int64_t parse_max_model_len(const std::string& text);
std::string format_max_model_len(std::int64_t value);

struct ExperimentConfig {
  std::string name = "experiment";
  std::uint64_t seed = 0;              // every random draw of the run derives from it
  traces::WorkloadSpec workload;       // its seed is set from `seed`
  std::string model = "opt-13b";       // model preset (cost model, KV bytes per token), or the
                                       // custom model's name
  // `model` given as a map: a config.json or the architecture inline (model_config.h).
  CustomModelConfig custom_model;
  // KV cache number format (sim/cost/kv_dtype.h): auto (the model's dtype, fp16/bf16: the
  // default, not written when left so), fp16, bf16, fp8 (half the bytes per token) or int4
  // (4 bits + an fp16 scale and zero per 32 elements). Sets the KV capacity and the cost
  // model's KV traffic.
  KvDtype kv_dtype = KvDtype::kAuto;
  std::string gpu = "a100-40gb";       // GPU preset
  int tensor_parallel = 1;
  // Longest request (prompt + output tokens) the model serves, as vLLM's max_model_len:
  // kMaxModelLenOfModel (-1, "model", the default: the model preset's context length, so a
  // request the model could not serve never runs silently), kMaxModelLenOff (0, "off": not
  // checked, for studies that use a preset as a stand-in for a longer-context model), or
  // N >= 1 tokens. A longer request goes through workload.oversize.
  std::int64_t max_model_len = kMaxModelLenOfModel;
  // The vLLM release whose behaviour the vLLM models follow where releases differ
  // (sim/core/vllm_version.h lists where). Written to config.resolved.yaml only when not
  // the default, 0.15.1.
  VllmVersion vllm_version;
  KvConfig kv;
  AllocatorConfig allocator;
  SchedulerSettings scheduler;
  BeamModelSettings beam;  // beam search: which beams survive each step
  // cost: one settings struct per cost.kind, each declared beside its model and read as it
  // is (cost_model_factory.h); the file's keys of another kind are refused unless as
  // config.resolved.yaml writes them (at their defaults).
  CostSettings cost;
  MeasureConfig measure;
  OutputConfig output;
  ValidateConfig validate;  // sampled batches for `pagesim validate`
  ReplicasConfig replicas;  // serving instances behind a router (default: one)
  SloSettings slo;          // service-level objectives (default: none, no "slo" output)
  // The load generator's view: client_metrics.json (client_stream_metrics.h) when the
  // `client` section is given (default: none, no output).
  ClientSettings client;
  // engine: how the run is advanced, never what it computes (sim/core/advance_settings.h).
  // Written to config.resolved.yaml only when not at its defaults.
  AdvanceSettings engine;
  // LoRA adapters (sim/scheduler/lora_settings.h) when the `lora` section is given (default:
  // none, no adapter output).
  LoraSettings lora;
  SpeculativeConfig speculative;  // speculative decoding (default: none)
  // The calibration file whose values filled the keys this experiment left out (calibration.h);
  // empty: none. Kept so config.resolved.yaml says where those values came from.
  std::string calibration;
  ConfigOrigin origin;      // the file and line of each key given (not a setting: not written)
};

// lora.target_modules' text: comma-separated names of kLoraModules, each once (throws
// std::invalid_argument otherwise), and back.
std::vector<std::string> parse_lora_modules(const std::string& text);
std::string format_lora_modules(const std::vector<std::string>& modules);

struct ServingKinds;  // sim/config/kind_rules.h

// The checks parse_experiment makes of `c`'s values and of their combinations, which scheduler
// and allocator kinds go together included, with the kinds of `kinds` (kServingKinds: the
// built-in ones): for a config made or changed in code. Throws ConfigError naming the key.
void check_experiment(const ExperimentConfig& c, const ServingKinds& kinds);

// Parses `root` (a YAML map) read from `file` (used in messages). Unknown keys, values of
// the wrong type or out of range and unknown names throw ConfigError naming file:line and
// the key path. The key "sweep" is ignored here (see sweep.h).
ExperimentConfig parse_experiment(const YAML::Node& root, const std::string& file);

// Throws ConfigError on the key of the first input path the run reads (a trace, a lengths
// file, a cost profile, operator tables: sim/config/input_path.h) that names nothing that
// exists, naming the folders it was looked up in. parse_experiment() keeps each path that
// some folder holds in its portable form, and the rest as written (a run may not read it).
void check_input_paths(const ExperimentConfig& config);

// The settings replica i runs: its override's config, else `config` itself.
// REQUIRES: 0 <= i < config.replicas.count.
const ExperimentConfig& replica_config(const ExperimentConfig& config, std::int64_t i);
// The replicas that are the first of their configuration (replica_config: the experiment's,
// or one override's), in increasing order; 0 is always one. Replicas of one configuration
// build alike and decide alike.
std::vector<std::int64_t> first_replica_of_each_config(const ExperimentConfig& config);

// The config as YAML: config.resolved.yaml's fields (those at their default only where it
// writes them), or with `every_field` every field and section, defaults included.
YAML::Node to_yaml(const ExperimentConfig& config, bool every_field = false);

// Every key an experiment file may give, from the same field list the reader walks, with
// its type and default (key_schema.h; config_schema.h renders it).
std::vector<KeyInfo> experiment_keys();

}  // namespace pagesim::sim
