// Experiment: turns a config into a run and its result files.
//
// build_run() resolves presets and capacities and builds the workload source, allocator,
// scheduler and cost model from a parsed config alone; its errors come back as ConfigError
// naming the file, line and key through the config's origin (traces::TraceError for bad
// trace rows passes through, naming the trace file and line).
// A request that can never be scheduled is a ConfigError at the key that keeps it out
// (kv.slots, allocator.max_seq_len, allocator.max_chunk_blocks,
// scheduler.max_num_batched_tokens, max_model_len) unless workload.oversize drops or
// truncates it; a run with no request is an error. Settings that run but deserve a look
// (a measurement window holding no iteration, kv.slots beyond the GPU's memory or not a
// whole number of blocks, a prefix cache with no token identities to match) are warnings
// "file:line: key: ...", listed in summary.json's "warnings" only when there are some.
// A pool of whole blocks (paged, radix, contiguous buddy) holds kv.slots rounded down to
// them; the run reports that pool (Run::kv_slots), not the number asked for.
// With replicas.count > 1 every replica is built (its override's settings, else the file's)
// and the run goes through the router; summary.json's top-level numbers are the cluster's
// (every request, every replica's iterations) and it adds "cluster" and "replicas"
// (cluster_summary.h); with slo set it adds "slo" (slo.h); with cost.kind operators it adds
// "cost": the operator-table lookups and extrapolated lookups per operator, summed over replicas.
// run_experiment() runs one config and writes, atomically, into `out`:
//   summary.json  config.resolved.yaml  requests.csv (unless output.requests_csv is false)
//   iterations.csv (unless output.iterations_stride is 0)
//   batches.jsonl (only with validate.every_n_iterations > 0: sampled batches for validation)
//   timeline.json (only with output.timeline: a Chrome trace for Perfetto, sim/metrics/timeline.h)
// run_experiment_file() does that for a file — once, or per sweep point in out/<NN>-<label>/
// plus out/sweep.csv with one row per point (its case, swept keys, then the flattened summary) — after
// claiming `out` (result_folder.h: locked; another run's results refused, replaced or resumed).
// run_experiment_sweep() is the same for a Sweep made from text (the Python package). A front
// end that runs the points elsewhere (the package's Ray executor) takes the same steps one by
// one: plan_points(), ResultFolder::prepare(), run_experiment() per point into
// point_folder(), write_sweep_table().
// Same file, overrides and seed give byte-identical files, except summary.json's host
// timings (wall_s, *_per_wall_second).
// Sources: build_run.cpp builds a run, experiment.cpp runs one, experiment_sweep.cpp runs
// sweeps (run_building.h: what they share).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "allocator/kv_allocator.h"
#include "sim/config/config_error.h"
#include "sim/config/experiment_config.h"
#include "sim/config/sweep.h"
#include "sim/cost/cost_model.h"
#include "sim/cost/gpu_spec.h"
#include "sim/cost/model_spec.h"
#include "sim/cost/vllm_kv_budget.h"
#include "sim/engine/simulation.h"
#include "sim/experiment/result_folder.h"
#include "sim/metrics/summary.h"
#include "sim/scheduler/scheduler.h"
#include "traces/request_source.h"

namespace pagesim::sim {

struct Run {
  ModelSpec model;
  GpuSpec gpu;
  // The KV pool in token slots: kv.slots (or derived from GPU memory), rounded down to whole
  // blocks where the allocator's pool is made of them (AllocatorSpec::pool_slots); what
  // summary.json reports as kv_slots. Layer-group pools are sized by kv_slots × the model's
  // KV bytes per token (allocator_spec.pool_bytes).
  std::int64_t kv_slots = 0;
  // kv.slots: 0 under a vLLM kv.engine: the budget as vLLM's start-up log prints it
  // (summary.json's "kv_budget"); empty otherwise.
  std::optional<VllmKvBudget> kv_budget;
  std::unique_ptr<traces::RequestSource> source;
  std::unique_ptr<alloc::KvAllocator> allocator;
  std::unique_ptr<Scheduler> scheduler;
  // Immutable (cost_model.h): a cluster's replicas of one configuration share the model of
  // that configuration's first replica (build_run), so that a fleet's iterations read one
  // copy, not one per replica.
  std::shared_ptr<const CostModel> cost;
  // LoRA adapters (the lora section; null without it), lent to the scheduler.
  std::unique_ptr<AdapterCache> adapters;
  double lora_adapter_bytes = 0, lora_slot_bytes = 0;  // one adapter; one vllm slot
  // The allocator's settings as built: capacity and CPU blocks derived, and a contiguous
  // allocator's max_seq_len following the model's context unless the file gives it.
  alloc::AllocatorSpec allocator_spec;
  std::int64_t max_model_len = 0;  // tokens (prompt + output) a request may have; 0: not checked
  // Speculative decoding as the replica runs it (lookahead, draft KV ratio, seed derived),
  // the slots the draft's KV takes of the pool's memory (draft_kv shared: Replica::
  // draft_kv_slots; kv_slots is what is left to the target), and the draft's KV bytes per
  // target slot (draft_kv own_pool: its peak is reported; else 0).
  SpeculativeSettings speculative;
  std::int64_t draft_kv_slots = 0;
  double draft_kv_bytes_per_slot = 0;
  // The drafter's weights on each GPU (bytes; draft_model or eagle, else 0): taken from GPU
  // memory with the target's when the pool is derived (kv.slots: 0).
  std::int64_t draft_weight_bytes = 0;
  // draft_kv own_pool with a derived pool: the slots of memory carved for the draft's own
  // pool (it holds the draft's KV of every target slot); 0 otherwise.
  std::int64_t draft_own_pool_slots = 0;
  // Settings that run but deserve a look (e.g. a KV pool larger than the GPU); written to
  // summary.json's "warnings" and printed by the CLI.
  std::vector<std::string> warnings;
  // With replicas.count > 1: replicas 1 .. count-1, each built from its own settings
  // (replica_config); the fields above are replica 0's. Their `source` is null: the
  // cluster reads one workload.
  std::vector<Run> other_replicas;
  // Each distinct replica configuration (the experiment's top level, or a replicas.overrides
  // entry's; replica_config) as the first replica built from it ran it, for
  // config.resolved.yaml: its derived row length and buddy chunk, and its GPU's efficiencies.
  // A configuration no replica runs (a top level every replica overrides) is not listed.
  struct BuiltConfig {
    const ExperimentConfig* config;
    alloc::AllocatorSpec allocator_spec;
    GpuSpec gpu;
  };
  std::vector<BuiltConfig> built_configs;
};

// Errors name the key at the line `config.origin` recorded for it (none for a config made
// in code).
Run build_run(const ExperimentConfig& config);
// The same with the scheduler and allocator kinds of `kinds` (sim/config/kind_rules.h), for a
// config whose kinds are outside the built-in tables (a test's example kind).
Run build_run(const ExperimentConfig& config, const ServingKinds& kinds);
// build_run with `workload` as the run's source instead of a newly opened one (null: opened
// here, as build_run does). REQUIRES: the source this config opens (check_run(config).source),
// nothing read from it yet.
Run build_run(const ExperimentConfig& config, std::unique_ptr<traces::RequestSource> workload);
// What build_run builds, to find its errors and replica 0's resolved settings, at the cost of
// one replica per distinct replica configuration (replicas built from one configuration build
// alike): replica 0's Run, without other_replicas. Throws what build_run throws.
Run check_run(const ExperimentConfig& config);

// The workload's request source alone (`pagesim trace gen`), its errors named as a run names
// them: ConfigError at the file, line and workload.* key, or the trace's TraceError.
std::unique_ptr<traces::RequestSource> make_workload_source(const ExperimentConfig& config);

// Runs one config; writes its files into `out` (created; removed again if the run fails while
// it is still empty). Takes no lock and checks nothing already there: run_experiment_file()
// claims the folder. Returns the summary; *notes (when given) receives the warnings and
// oversize counts summary.json adds to it. `workload`, when given: the config's source as
// check_run opened it, nothing read (build_run's REQUIRES), so that the run does not read
// its files again; else the run opens it.
Summary run_experiment(const ExperimentConfig& config, const std::filesystem::path& out,
                       const ProgressFn& progress = {}, SummaryNotes* notes = nullptr,
                       std::unique_ptr<traces::RequestSource> workload = nullptr);

struct PointResult {
  std::string label;  // empty for a run without sweep
  std::vector<std::pair<std::string, std::string>> assignments;
  Summary summary;
  SummaryNotes notes;  // warnings and oversize counts (summary.json has them too)
  bool kept = false;   // --resume kept it: its results read back from its folder, not run
};

// Makes the progress callback for a point (label, index, count); may return an empty fn.
using ProgressFactory = std::function<ProgressFn(const std::string& label, std::size_t index, std::size_t count)>;

// How far a sweep got when a point's failure stopped it (the points running then finish;
// no new one starts).
struct SweepStop {
  std::size_t points = 0;    // the sweep's points; 0: no sweep stopped part-way
  std::size_t finished = 0;  // complete (run, or kept by --resume)
  std::size_t failed = 0;    // raised an error (or were stopped)
  std::size_t not_run = 0;   // never started
  bool table_written = false;  // sweep.csv lists every point with its status (when any finished)
};

// Every sweep point is parsed and built before the first one runs (a bad point throws
// ConfigError naming its values). Then `out` is claimed (result_folder.h: a lock; results of
// another run there are refused, replaced or resumed as `existing` says), and no empty
// folder is left if the run fails. `jobs`: how many points run at once, on their own
// threads; the files written are the same for any value. The progress factory is called
// under a lock; with jobs > 1 the callbacks it returns are too. A point that fails while a
// sweep runs stops it: the running points finish, sweep.csv lists every point with a last
// `status` column (ok, failed, not run; the results of points not ok left empty) when any
// finished, *stopped (when given) says how far the sweep got, and the point's error is
// rethrown. A sweep whose points all ran writes sweep.csv without that column.
std::vector<PointResult> run_experiment_file(const std::string& file, const std::vector<std::string>& overrides,
                                             const std::filesystem::path& out,
                                             const ProgressFactory& progress = {}, std::size_t jobs = 1,
                                             ExistingResults existing = ExistingResults::kRefuse,
                                             SweepStop* stopped = nullptr);
// The same for a sweep already read (Sweep::from_text: a YAML string or a dict's YAML).
std::vector<PointResult> run_experiment_sweep(const Sweep& sweep, const std::filesystem::path& out,
                                              const ProgressFactory& progress = {}, std::size_t jobs = 1,
                                              ExistingResults existing = ExistingResults::kRefuse,
                                              SweepStop* stopped = nullptr);

// Why `config`'s workload gave no request, as a ConfigError under the key that explains it
// (workload.trace.path: "the trace '...' holds no request", workload.max_total_tokens,
// workload.duration_s, workload.oversize when `oversize_dropped` > 0, else workload).
// REQUIRES: the workload, read as configured, yields no request.
ConfigError no_request_error(const ExperimentConfig& config, std::uint64_t oversize_dropped = 0);

// The folder point `index` (label `label`) of a sweep writes, relative to the result
// folder: "<NN>-<label>" with characters other than [A-Za-z0-9.=_-] replaced by '_'; a name
// past 255 bytes is cut to 238 and ends in "~" and 16 hex digits of a hash of the whole.
std::string point_folder(std::size_t index, const std::string& label);

// Every point of `sweep` parsed and built (allocator, scheduler, cost model, capacity,
// workload source), so that a bad point throws ConfigError, named with its values, before
// any point runs. Returns per point its folder ("" without sweep) and the text its
// config.resolved.yaml will have (what --resume compares). With `workload` given and a run
// without sweep, *workload receives the one point's source as the check opened it (nothing
// read), for run_experiment: a trace or lengths file is then read once, not twice. (A sweep's
// points open theirs again when they run: holding every point's would cost memory.)
std::vector<PlannedPoint> plan_points(const Sweep& sweep, std::unique_ptr<traces::RequestSource>* workload = nullptr);

// Writes out/sweep.csv: one row per point of `results` (in point order; results[i] is
// point i's), its case (a sweep of cases), every swept key's value (the point's own, else
// its effective value: from out/<folder>/config.resolved.yaml, else the default), then its
// flattened summary without host timings and its notes' columns.
// REQUIRES: sweep.swept(), results.size() == sweep.size(), every point's files in out/<folder>.
void write_sweep_table(const Sweep& sweep, const std::vector<PointResult>& results, const std::filesystem::path& out);

// summary.json's (and `pagesim model --gpu`'s) "kv_budget": the pool as vLLM's start-up log
// prints it (GiB to two decimals, as the log has them; the KV bytes and tokens exact).
nlohmann::ordered_json kv_budget_json(const VllmKvBudget& budget, KvEngine engine);

}  // namespace pagesim::sim
