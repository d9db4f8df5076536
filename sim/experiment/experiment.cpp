#include "sim/experiment/experiment.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <iomanip>
#include <limits>
#include <optional>
#include <unordered_set>
#include <fmt/format.h>
#include "allocator/make_allocator.h"
#include "sim/cluster/router.h"
#include "sim/config/config_error.h"
#include "sim/config/enum_names.h"
#include "sim/cost/cuda_graph_sizes.h"
#include "sim/cost/speculative_cost_model.h"
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
#include "traces/make_source.h"
#include "sim/experiment/run_building.h"

namespace pagesim::sim {
namespace {

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

// summary.json's "cost" object: the cost models' notes summed over replicas; null when none
// keeps notes (every kind but operators), so other runs' summaries keep their bytes.
nlohmann::ordered_json cost_notes_json(const std::vector<const Run*>& parts) {
  CostNotes sum;
  std::vector<const CostModel*> summed;  // replicas of one configuration share a cost model (Run::cost)
  for (const Run* part : parts) {
    if (std::find(summed.begin(), summed.end(), part->cost.get()) != summed.end()) continue;
    summed.push_back(part->cost.get());
    sum.merge(part->cost->notes());
  }
  if (sum.empty()) return nullptr;
  nlohmann::ordered_json j;
  for (const auto& [name, count] : sum.lookups) j["lookups"][name] = count;
  for (const auto& [name, count] : sum.extrapolated_lookups) j["extrapolated_lookups"][name] = count;
  return j;
}

}  // namespace

Summary run_experiment(const ExperimentConfig& c, const std::filesystem::path& out, const ProgressFn& progress,
                       SummaryNotes* notes, std::unique_ptr<traces::RequestSource> workload) {
  const auto t0 = std::chrono::steady_clock::now();
  Run run = build_run(c, std::move(workload));
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
  // One temporary file for every latency sample of the run, however many replicas.
  LatencySpill latency_spill;
  Metrics metrics(ms, requests ? &requests->stream() : nullptr, iterations ? &iterations->stream() : nullptr,
                  allocators, &latency_spill);

  EngineSettings es;
  es.seed = c.seed;
  es.beam = c.beam;
  es.oversize = c.workload.oversize;
  es.max_model_len = run.max_model_len;
  es.advance = c.engine;
  for (const Run& other : run.other_replicas)  // a request must fit every replica
    if (es.max_model_len == 0 || (other.max_model_len > 0 && other.max_model_len < es.max_model_len))
      es.max_model_len = other.max_model_len;
  // Replicas built from one configuration (replica_config: the experiment's, or one override)
  // decide alike whether a request can ever run: ask the first of each.
  for (const std::int64_t i : first_replica_of_each_config(c))
    es.admission_replicas.push_back(static_cast<std::int32_t>(i));
  es.disaggregation = c.replicas.disaggregated;
  es.global_cache = c.replicas.global_cache;
  // A transfer or a fetch moves the whole model's KV of its tokens (every tensor-parallel
  // shard); a replica of another model (an override) is priced with the first replica's.
  es.kv_bytes_per_token = static_cast<double>(run.model.kv_bytes_per_token());
  es.kv_block_size = c.allocator.block_size;
  if (const GlobalCacheSettings& g = es.global_cache; g.enabled && g.source == GlobalCacheSource::kSharedPool) {
    const double pool_blocks = g.shared_pool_blocks(es.kv_block_size, es.kv_bytes_per_token);
    if (pool_blocks < 1)  // it could never hold a block
      throw c.origin.error("replicas.global_cache.shared_pool_gib",
                           fmt::format("{} GiB hold {:.3g} blocks of {:.0f} bytes ({} tokens of {}); expected at "
                                       "least 1 block",
                                       g.shared_pool_gib, pool_blocks,
                                       es.kv_bytes_per_token * static_cast<double>(es.kv_block_size),
                                       es.kv_block_size, run.model.name));
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
    // The replicas share output.latency_samples_in_memory (at least kReplicaBatch values a
    // latency each): their samples' memory is bounded by the replicas, not by the run's length.
    constexpr std::size_t kReplicaBatch = 64;
    rms.latency_samples_in_memory = std::max(kReplicaBatch, ms.latency_samples_in_memory / parts.size());
    for (std::size_t i = 0; i < parts.size(); ++i) {
      rms.kv_bytes_per_token = static_cast<double>(parts[i]->model.kv_bytes_per_token());
      rms.block_size = parts[i]->allocator->block_size();
      replica_metrics.push_back(
          std::make_unique<Metrics>(rms, nullptr, nullptr, std::vector<const alloc::KvAllocator*>{parts[i]->allocator.get()},
                                    &latency_spill));
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
    ClusterJson cj = cluster_json(std::string(enum_name(kRouterKindNames, c.replicas.router.kind)), per,
                                  c.replicas.global_cache.enabled);
    n.cluster = std::move(cj.cluster);
    n.replicas = std::move(cj.replicas);
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
  nlohmann::ordered_json fields = s.to_json();  // moved, not copied: a fleet's is megabytes
  for (auto& [k, v] : fields.items()) j[k] = std::move(v);
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
  // Last: its presence means complete. Streamed as j.dump(2) + "\n" would write it, without
  // that text in memory beside the tree (23 MB at 10,000 replicas).
  AtomicFile summary(out / "summary.json");
  summary.stream() << std::setw(2) << j << '\n';
  summary.commit();
  folder.keep();
  return s;
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
