#include "sim/config/experiment_checks.h"

#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

#include <fmt/format.h>

#include "sim/config/config_error.h"
#include "sim/config/enum_names.h"
#include "sim/config/link_limits.h"

namespace pagesim::sim {

namespace {

// The most memory a setting in GiB may give: 2^20 GiB = 1 PiB, beyond any machine, and small
// enough that its bytes (2^50) and the sums made of them fit std::int64_t.
constexpr double kMaxGib = 1 << 20;

// The cluster's and the objectives' values, and the combinations that mean nothing.
void check_cluster(const ExperimentConfig& c) {
  const ConfigOrigin& o = c.origin;
  const ReplicasConfig& r = c.replicas;
  if (r.count < 1 || r.count > kMaxReplicas)
    throw o.error("replicas.count", fmt::format("expected an integer in [1, {}] (serving instances), found {}",
                                                kMaxReplicas, r.count));
  const RouterSettings& rs = r.router;
  if (rs.balance_abs_threshold < 0)
    throw o.error("replicas.prefix_aware.balance_abs_threshold",
                  fmt::format("expected an integer >= 0 (requests), found {}", rs.balance_abs_threshold));
  if (!(rs.balance_rel_threshold >= 1 && std::isfinite(rs.balance_rel_threshold)))
    throw o.error("replicas.prefix_aware.balance_rel_threshold",
                  fmt::format("expected a finite ratio >= 1, found {}", rs.balance_rel_threshold));
  if (!(rs.cache_threshold >= 0 && rs.cache_threshold <= 1))
    throw o.error("replicas.prefix_aware.cache_threshold",
                  fmt::format("expected a fraction in [0, 1], found {}", rs.cache_threshold));
  if (o.has("replicas.prefix_aware") && rs.kind != RouterKind::kPrefixAware)
    throw o.error("replicas.prefix_aware",
                  fmt::format("these settings tune the prefix_aware router, but replicas.router is '{}': set "
                              "replicas.router: prefix_aware, or remove them",
                              enum_name(kRouterKindNames, rs.kind)));
  if (o.has("replicas.disaggregated")) {
    const DisaggregationSettings& d = r.disaggregated;
    if (d.prefill < 1 || d.prefill > r.count - 1)
      throw o.error("replicas.disaggregated.prefill",
                    r.count < 2 ? fmt::format("disaggregation needs a prefill and a decode replica, and replicas.count "
                                              "is {}: raise it to 2 or more, or remove replicas.disaggregated",
                                              r.count)
                                : fmt::format("expected the number of prefill replicas in [1, {}] (the rest, of "
                                              "replicas.count = {}, decode), found {}",
                                              r.count - 1, r.count, d.prefill));
    if (!(d.transfer_gbps > 0 && std::isfinite(d.transfer_gbps)))
      throw o.error(o.has("replicas.disaggregated.transfer_gbps") ? "replicas.disaggregated.transfer_gbps"
                                                                   : "replicas.disaggregated",
                    fmt::format("expected transfer_gbps, the prefill-to-decode link's bandwidth in gigabits per "
                                "second, finite and > 0, found {}",
                                d.transfer_gbps));
    if (!(d.transfer_latency_us >= 0 && std::isfinite(d.transfer_latency_us)))
      throw o.error("replicas.disaggregated.transfer_latency_us",
                    fmt::format("expected a finite number of microseconds >= 0, found {}", d.transfer_latency_us));
    check_link_gbps(o, "replicas.disaggregated.transfer_gbps", d.transfer_gbps, "gigabits per second");
    check_link_latency_us(o, "replicas.disaggregated.transfer_latency_us", d.transfer_latency_us);
    if (d.decode_router == RouterKind::kPrefixAware)
      throw o.error("replicas.disaggregated.decode_router",
                    "prefix_aware routes by cached prompt tokens, but a decode replica receives the whole prompt's KV "
                    "and never hits its prefix cache for it: pick least_kv, least_outstanding, round_robin or random");
  }
  if (o.has("replicas.global_cache")) {
    const GlobalCacheSettings& g = r.global_cache;
    if (r.count < 2)
      throw o.error("replicas.global_cache",
                    fmt::format("a global cache lets replicas fetch prefix blocks from each other, and replicas.count "
                                "is {}: raise it to 2 or more, or remove replicas.global_cache",
                                r.count));
    if (!(g.bandwidth_gbps > 0 && std::isfinite(g.bandwidth_gbps)))
      throw o.error(o.has("replicas.global_cache.bandwidth_gbps") ? "replicas.global_cache.bandwidth_gbps"
                                                                   : "replicas.global_cache",
                    fmt::format("expected bandwidth_gbps, the network bandwidth of a fetch in gigabits per second, "
                                "finite and > 0, found {}",
                                g.bandwidth_gbps));
    if (!(g.latency_us >= 0 && std::isfinite(g.latency_us)))
      throw o.error("replicas.global_cache.latency_us",
                    fmt::format("expected a finite number of microseconds >= 0, found {}", g.latency_us));
    check_link_gbps(o, "replicas.global_cache.bandwidth_gbps", g.bandwidth_gbps, "gigabits per second");
    check_link_latency_us(o, "replicas.global_cache.latency_us", g.latency_us);
    if (g.source == GlobalCacheSource::kSharedPool) {
      if (!(g.shared_pool_gib > 0 && g.shared_pool_gib <= kMaxGib))
        throw o.error(o.has("replicas.global_cache.shared_pool_gib") ? "replicas.global_cache.shared_pool_gib"
                                                                      : "replicas.global_cache.source",
                      fmt::format("source shared_pool needs shared_pool_gib, the pool's capacity: expected a number "
                                  "of GiB > 0 and <= {}, found {}",
                                  kMaxGib, g.shared_pool_gib));
    } else if (o.has("replicas.global_cache.shared_pool_gib")) {
      throw o.error("replicas.global_cache.shared_pool_gib",
                    "shared_pool_gib sizes the shared pool, but replicas.global_cache.source is 'peers' (fetch from "
                    "other replicas' caches): set source: shared_pool, or remove shared_pool_gib");
    }
  }
  if (r.count > 1 && c.validate.every_n_iterations > 0)
    throw o.error("validate.every_n_iterations",
                  fmt::format("sampling batches for kernel validation follows one allocator; with replicas.count = "
                              "{} set it to 0 (validate a single-replica run of the same settings)",
                              r.count));
  const auto ttft = c.slo.ttft_s, tbt = c.slo.tbt_s;
  if (!(ttft >= 0 && std::isfinite(ttft)))
    throw o.error("slo.ttft_s", fmt::format("expected a finite number of seconds > 0 (0: no TTFT objective), found {}", ttft));
  if (!(tbt >= 0 && std::isfinite(tbt)))
    throw o.error("slo.tbt_s", fmt::format("expected a finite number of seconds > 0 (0: no TBT objective), found {}", tbt));
  const ClientSettings& cl = c.client;
  if (cl.stream_events_per_token < 1 || cl.stream_events_per_token > kMaxStreamEvents)
    throw o.error("client.stream_events_per_token",
                  fmt::format("expected a count of messages per generated token in [1, {}] (vLLM's OpenAI server: "
                              "1), found {}",
                              kMaxStreamEvents, cl.stream_events_per_token));
  if (cl.stream_final_events < 0 || cl.stream_final_events > kMaxStreamEvents)
    throw o.error("client.stream_final_events",
                  fmt::format("expected a count of messages after the last token in [0, {}] (usage chunk + "
                              "[DONE]: 2), found {}",
                              kMaxStreamEvents, cl.stream_final_events));
  if (!(cl.latency_s >= 0 && std::isfinite(cl.latency_s)))
    throw o.error("client.latency_s", fmt::format("expected a finite number of seconds >= 0, found {}", cl.latency_s));
  if (o.has("workload.inference_perf") && c.workload.kind != traces::WorkloadKind::kInferencePerf)
    throw o.error("workload.inference_perf",
                  fmt::format("these settings describe an inference_perf workload, but workload.kind is '{}': set "
                              "workload.kind: inference_perf, or remove them",
                              traces::to_string(c.workload.kind)));
  if (o.has("slo") && !c.slo.enabled())
    throw o.error("slo", "no objective is set: give slo.ttft_s and/or slo.tbt_s (seconds > 0), or remove the section");
}

}  // namespace

// After the overrides are parsed: settings that cannot hold across replicas.
void check_replicas(const ExperimentConfig& c, const ServingKinds& kinds) {
  const ConfigOrigin& o = c.origin;
  const ReplicasConfig& r = c.replicas;
  if (r.count == 1 && o.has("replicas.router") && r.router.kind != RouterKind::kRoundRobin)
    throw o.error("replicas.router", fmt::format("a router spreads requests over replicas, and replicas.count is 1: "
                                                 "raise replicas.count, or remove replicas.router"));
  bool any_prefix_cache = false;
  std::int64_t block_size = 0;
  for (std::int64_t i = 0; i < r.count; ++i) {
    const ExperimentConfig& rc = replica_config(c, i);
    if (!allocator_kind(kinds, rc.allocator.kind).caches_prefixes(rc.allocator.prefix_cache)) continue;
    any_prefix_cache = true;
    if (block_size > 0 && rc.allocator.block_size != block_size)
      throw o.error(fmt::format("replicas.overrides"),
                    fmt::format("replica {} caches prefixes in blocks of {} tokens, another replica in blocks of {}: "
                                "replicas with a prefix cache must share allocator.block_size (a request's block keys "
                                "are made once)",
                                i, rc.allocator.block_size, block_size));
    block_size = rc.allocator.block_size;
  }
  if (r.disaggregated.enabled())
    for (const ReplicaOverride& ov : r.overrides)
      if (ov.config->model != c.model || !(ov.config->custom_model == c.custom_model))
        throw o.error(fmt::format("replicas.overrides[{}].model", &ov - r.overrides.data()),
                      fmt::format("replica {} runs model '{}', the others '{}': a disaggregated cluster hands one "
                                  "model's KV from prefill to decode replicas, so all run the same model",
                                  ov.index, ov.config->model, c.model));
  if (r.global_cache.enabled)
    for (std::int64_t i = 0; i < (r.disaggregated.enabled() ? r.disaggregated.prefill : r.count); ++i) {
      const ExperimentConfig& rc = replica_config(c, i);
      const AllocatorDescriptor& pool = allocator_kind(kinds, rc.allocator.kind);
      if (!pool.traits().tiers || !rc.allocator.prefix_cache)
        throw o.error("replicas.global_cache",
                      fmt::format("replica {} would fetch prefix blocks into its own prefix cache, but it has none "
                                  "that can (allocator.kind: {}, prefix_cache: {}): a global cache needs "
                                  "allocator.kind: {} with prefix_cache: true on every replica that serves "
                                  "arrivals",
                                  i, pool.name, rc.allocator.prefix_cache,
                                  kind_names(kinds.allocators, [](const AllocatorDescriptor& k) { return k.traits().tiers; })));
    }
  if (r.router.kind == RouterKind::kPrefixAware && !any_prefix_cache)
    throw o.error("replicas.router",
                  "prefix_aware routes by the prompt tokens each replica has cached, but no replica has a prefix cache "
                  "(allocator.prefix_cache: false, and no allocator.kind: radix): turn it on, or pick another "
                  "router");
}

std::string cost_key_refusal(const std::string& key, CostModelKind kind, CostModelKind owner) {
  if (key == "iteration_overhead_s" && kind == CostModelKind::operators)
    return "cost.kind operators takes its host time from cost.host.step_s (per iteration) and cost.host.per_seq_s "
           "(per scheduled sequence): leave cost.iteration_overhead_s out";
  if (key == "iteration_overhead_s" && kind == CostModelKind::constant)
    return "cost.iteration_overhead_s adds host time to every iteration of cost.kind roofline or profile; cost.kind "
           "constant has its own fixed term: leave it out and set cost.constant.seconds_per_iteration";
  static constexpr std::pair<std::string_view, std::string_view> kWhat[] = {
      {"compute_efficiency", "overrides the GPU preset's compute efficiency"},
      {"memory_efficiency", "overrides the GPU preset's memory efficiency"},
      {"constant", "sets the coefficients of a linear cost"},
      {"profile", "names the CSV of measured times"},
      {"operators", "sets up the measured operator tables"},
      {"host", "adds the serving engine's host time"},
  };
  std::string_view what = "is a setting";
  for (const auto& [k, w] : kWhat)
    if (k == key) what = w;
  return fmt::format("cost.{} {}, which cost.kind {} reads; cost.kind is '{}', which does not: leave it out, or set "
                     "cost.kind: {}",
                     key, what, to_string(owner), to_string(kind), to_string(owner));
}

namespace {

// Each cost.kind's own values (the reader refuses another kind's keys). The roofline's
// overrides: a negative value (the default, -1) keeps the GPU preset's; anything else must be
// usable: an efficiency in (0, 1] (0 would make every iteration take forever, NaN would
// silently keep the preset), an overhead finite and >= 0. A profile needs its CSV; a constant
// model whose iteration coefficients are all 0 would make every iteration instantaneous
// (latencies 0, rates unbounded).
void check_cost(const ExperimentConfig& c) {
  const ConfigOrigin& o = c.origin;
  auto efficiency = [&](const char* key, double v) {
    if (std::isnan(v) || v == 0 || v > 1)
      throw o.error(key, fmt::format("expected a fraction in (0, 1], or a negative number to keep the GPU "
                                     "preset's, found {}",
                                     v));
  };
  auto overhead = [&](double v) {
    if (!std::isfinite(v))
      throw o.error("cost.iteration_overhead_s",
                    fmt::format("expected a finite number of seconds >= 0, or a negative number to keep the GPU "
                                "preset's, found {}",
                                v));
  };
  if (const auto* r = std::get_if<RooflineCostSettings>(&c.cost)) {
    efficiency("cost.compute_efficiency", r->compute_efficiency);
    efficiency("cost.memory_efficiency", r->memory_efficiency);
    overhead(r->iteration_overhead_s);
  }
  if (const auto* op = std::get_if<OperatorsCostSettings>(&c.cost)) {
    if (!std::isfinite(op->gpu_scale) || op->gpu_scale <= 0)
      throw o.error("cost.operators.gpu_scale",
                    fmt::format("expected a finite factor > 0 (1: the measured operators as they are), found {}",
                                op->gpu_scale));
    if (op->cuda_graph_max_size < -1)
      throw o.error("cost.operators.cuda_graph_max_size",
                    fmt::format("expected -1 (vLLM's default from scheduler.max_num_seqs), 0 (no CUDA graphs) or a "
                                "largest capture size in tokens, found {}",
                                op->cuda_graph_max_size));
    if (op->engine.empty())
      throw o.error("cost.operators.engine", "expected an engine folder of the tables, e.g. vllm-0.14.0");
    for (const auto& [key, v] : {std::pair{"cost.host.step_s", op->host_step_s},
                                 std::pair{"cost.host.per_seq_s", op->host_per_seq_s}})
      if (!std::isfinite(v) || v < 0)
        throw o.error(key, fmt::format("expected finite seconds >= 0, found {}", v));
  }
  if (const auto* p = std::get_if<ProfileCostSettings>(&c.cost)) {
    overhead(p->iteration_overhead_s);
    if (p->profile.empty())
      throw o.error("cost.profile", "cost.kind profile reads its times from a CSV: expected cost.profile: PATH "
                                    "(pagesim profile --device cuda writes one; format in "
                                    "sim/cost/profile_cost_model.h)");
  }
  if (const auto* q = std::get_if<ConstantCostCoefficients>(&c.cost);
      q && q->seconds_per_iteration == 0 && q->seconds_per_prefill_token == 0 && q->seconds_per_decode_seq == 0 &&
      q->seconds_per_decode_context_token == 0)
    throw o.error("cost.constant",
                  "seconds_per_iteration, seconds_per_prefill_token, seconds_per_decode_seq and "
                  "seconds_per_decode_context_token are all 0, so every iteration would take no time and every "
                  "latency would be 0: set at least one of them > 0");
}

// The lora section's own values, and what it needs of the rest (a paged pool driven by a vLLM
// scheduler, co-located replicas).
void check_lora(const ExperimentConfig& c, const ServingKinds& kinds) {
  const ConfigOrigin& o = c.origin;
  const LoraSettings& l = c.lora;
  if (!l.enabled) return;
  if (l.max_loras < 1)
    throw o.error("lora.max_loras", fmt::format("expected GPU adapter slots >= 1 (vLLM's --max-loras), found {}; "
                                                "without slots no request naming an adapter could run",
                                                l.max_loras));
  if (l.max_cpu_loras < 0 || (l.max_cpu_loras > 0 && l.max_cpu_loras < l.max_loras))
    throw o.error("lora.max_cpu_loras",
                  fmt::format("expected 0 (= max_loras) or at least lora.max_loras = {} adapters (vLLM refuses "
                              "max_cpu_loras < max_loras), found {}",
                              l.max_loras, l.max_cpu_loras));
  if (l.rank < 1 || l.rank > 4096)
    throw o.error("lora.rank", fmt::format("expected a LoRA rank in [1, 4096], found {}", l.rank));
  if (l.adapters < 0 || l.adapters > (std::int64_t{1} << 30))
    throw o.error("lora.adapters", fmt::format("expected a number of adapters in [0, 2^30], found {}", l.adapters));
  if (!(l.zipf_alpha > 0 && std::isfinite(l.zipf_alpha)))
    throw o.error("lora.zipf_alpha", fmt::format("expected a finite Zipf exponent > 0, found {}", l.zipf_alpha));
  // Zipf draws read a table of every adapter's cumulative weight (traces/adapter_assignment.h):
  // memory that grows with lora.adapters, not with the requests, so it is bounded (8 MiB).
  if (l.popularity == LoraPopularity::kZipf && l.adapters > (std::int64_t{1} << 20))
    throw o.error("lora.adapters", fmt::format("expected at most 2^20 = 1048576 adapters under popularity zipf (its "
                                               "draws keep a table of every adapter's weight), found {}; uniform "
                                               "popularity allows up to 2^30",
                                               l.adapters));
  check_lora_pairing(c, kinds);
  if (c.replicas.disaggregated.enabled())
    throw o.error("replicas.disaggregated", "lora is not modelled with disaggregated prefill/decode (the decode "
                                            "replica would need the adapter too): remove one of them");
}

// Settings that are valid alone but mean nothing together: each would run and report numbers
// that do not describe what the file asks for. The order of the checks decides which fault of
// a file with several is named.
void check_combinations(const ExperimentConfig& c, const ServingKinds& kinds) {
  const ConfigOrigin& o = c.origin;
  check_cost(c);
  check_lora(c, kinds);
  const AllocatorConfig& a = c.allocator;
  check_interface_only_pool(c, kinds);
  check_own_keys(c, kinds);
  check_pool_pairing(c, kinds, PoolCheck::kWithPoolKeys);
  if (c.scheduler.preemption == PreemptionMode::kSwap && a.cpu_swap_gib == 0)
    throw o.error(o.has("allocator.cpu_swap_gib") ? "allocator.cpu_swap_gib" : "scheduler.preemption",
                  "scheduler.preemption: swap needs CPU swap space, but allocator.cpu_swap_gib is 0 (every "
                  "preemption would quietly recompute): set allocator.cpu_swap_gib > 0, or scheduler.preemption: "
                  "recompute");
  check_offload(a.offload_config, allocator_kind(kinds, a.kind).traits().tiers, a.prefix_cache, a.cpu_swap_gib, o);
  check_pool_pairing(c, kinds, PoolCheck::kAfterSwapSpace);
  check_schedule_policy(c, kinds);
  check_fixed_prefix_cache(c, kinds);
  const auto optional_cache = [](const AllocatorDescriptor& d) {
    return d.traits().prefix_caching == alloc::PrefixCaching::kOptional;
  };
  if (const AllocatorDescriptor& pool = allocator_kind(kinds, a.kind); a.prefix_cache && !pool.caches_prefixes(true))
    throw o.error("allocator.prefix_cache",
                  fmt::format("the prefix cache shares the blocks of a block pool (allocator.kind {}); "
                              "allocator.kind is '{}': set allocator.kind: {}, or prefix_cache: false",
                              kind_names(kinds.allocators, optional_cache), pool.name,
                              first_of(kinds.allocators, optional_cache).name));
  if (a.prefix_cache && c.workload.kind == traces::WorkloadKind::kSynthetic)
    throw o.error("allocator.prefix_cache",
                  "a synthetic workload has no token identities (hash_ids), so no prompt could ever hit the "
                  "prefix cache: replay a trace that carries them (workload.kind: trace, e.g. format: "
                  "mooncake), or set prefix_cache: false");
  // The paged pool reserves nothing up front; every other pool is held to a usable reservation.
  const alloc::ReservationPolicy& reservation = a.contiguous.reservation;
  if (reservation.kind() == alloc::ReservationPolicy::Kind::kFixed && reservation.fixed_output_tokens() == 0 &&
      a.kind != alloc::AllocatorKind::kPaged)
    throw o.error("allocator.reservation",
                  "fixed:0 reserves no slot for any output token: every request outgrows its reservation at its "
                  "first decode step; give the expected output length (fixed:N, N >= 1) or use max, pow2 or "
                  "oracle");
  for (std::size_t i = 0; i < c.workload.sampling.size(); ++i) {
    const traces::SamplingChoice& s = c.workload.sampling[i];
    if (s.n > 1 && s.beam_width > 1)
      throw o.error(fmt::format("workload.sampling[{}].beam_width", i),
                    fmt::format("n = {} and beam_width = {} are both set; a request is either parallel sampling "
                                "(n) or beam search (beam_width): give one of them per entry",
                                s.n, s.beam_width));
  }
}

}  // namespace

// The speculative section's values and what they need of the rest.
void check_speculative(const ExperimentConfig& c, const ServingKinds& kinds) {
  const ConfigOrigin& o = c.origin;
  const SpeculativeConfig& sc = c.speculative;
  const SpeculativeSettings& s = sc.settings;
  if (!s.enabled()) {
    if (o.has("speculative.num_speculative_tokens") || o.has("speculative.acceptance") || o.has("speculative.draft_kv") ||
        o.has("speculative.draft_model") || o.has("speculative.eagle_layers") || o.has("speculative.draft_cost_ratio"))
      throw o.error("speculative.method", "speculative settings are given but method is none (or missing): expected "
                                          "one of draft_model, eagle, ngram");
    return;
  }
  if (s.k < 0 || s.k > kMaxSpeculativeTokens)
    throw o.error("speculative.num_speculative_tokens",
                  fmt::format("expected tokens proposed per step in [0, {}] (0: decode as without speculation), found {}",
                              kMaxSpeculativeTokens, s.k));
  if (s.acceptance.empty() || (s.acceptance.size() != 1 && static_cast<std::int64_t>(s.acceptance.size()) != s.k))
    throw o.error("speculative.acceptance",
                  fmt::format("expected one probability or num_speculative_tokens = {} of them (one per proposed "
                              "position), found {}",
                              s.k, s.acceptance.size()));
  for (std::size_t i = 0; i < s.acceptance.size(); ++i)
    if (!(s.acceptance[i] >= 0 && s.acceptance[i] <= 1))
      throw o.error("speculative.acceptance",
                    fmt::format("expected acceptance probabilities in [0, 1], found {} at position {}", s.acceptance[i],
                                i + 1));
  check_speculative_pairing(c, kinds);
  // pagesim speculates a request of one sequence only (as vLLM v1, whose engine serves n > 1
  // as n single-sequence requests and has no beam search); a sampling mix that gives requests
  // more would decode them without speculation while the draft's share of the pool stays taken.
  for (std::size_t i = 0; i < c.workload.sampling.size(); ++i) {
    const traces::SamplingChoice& choice = c.workload.sampling[i];
    if (choice.weight > 0 && (choice.n > 1 || choice.beam_width > 1))
      throw o.error(fmt::format("workload.sampling[{}]", i),
                    fmt::format("n = {}, beam_width = {} beside speculative decoding: pagesim speculates requests of "
                                "one sequence only (vLLM v1 serves n > 1 as n separate requests and has no beam "
                                "search in the engine); expected n: 1 and beam_width: 1, or no speculative section",
                                choice.n, choice.beam_width));
  }
  const bool draft = s.method == SpeculativeMethod::kDraftModel;
  if (draft && sc.draft_model.empty())
    throw o.error("speculative.draft_model",
                  "method draft_model needs the draft's model preset, e.g. llama-3.2-1b or qwen2.5-0.5b");
  if (!draft && !sc.draft_model.empty())
    throw o.error("speculative.draft_model", fmt::format("names a draft model, but method is '{}': set method: "
                                                         "draft_model, or remove it",
                                                         enum_name(kSpeculativeMethodNames, s.method)));
  if (s.method != SpeculativeMethod::kEagle && sc.eagle_layers != 1)
    throw o.error("speculative.eagle_layers", "sizes an EAGLE head, but method is not eagle");
  if (sc.eagle_layers < 1 || sc.eagle_layers > 64)
    throw o.error("speculative.eagle_layers", fmt::format("expected decoder layers in [1, 64], found {}", sc.eagle_layers));
  if (s.method == SpeculativeMethod::kNgram && s.draft_kv != DraftKvPlacement::kNone)
    throw o.error("speculative.draft_kv", "n-gram proposals keep no KV: expected none");
  if (!(sc.draft_cost_ratio == -1 || (sc.draft_cost_ratio >= 0 && std::isfinite(sc.draft_cost_ratio))))
    throw o.error("speculative.draft_cost_ratio",
                  fmt::format("expected a finite ratio >= 0 (or -1: price the draft's own model), found {}",
                              sc.draft_cost_ratio));
}

void check_values(const ExperimentConfig& c, const ServingKinds& kinds) {
  const ConfigOrigin& o = c.origin;
  const SchedulerSettings& s = c.scheduler;
  if (s.max_num_batched_tokens < 1)
    throw o.error("scheduler.max_num_batched_tokens", fmt::format("expected an integer >= 1, found {}", s.max_num_batched_tokens));
  if (s.max_num_seqs < 1)
    throw o.error("scheduler.max_num_seqs", fmt::format("expected an integer >= 1, found {}", s.max_num_seqs));
  if (!(s.watermark >= 0 && s.watermark < 1))  // also catches NaN
    throw o.error("scheduler.watermark", fmt::format("expected a fraction in [0, 1), found {}", s.watermark));
  if (s.async_steps < 0 || s.async_steps > kMaxAsyncSteps)
    throw o.error("scheduler.async_steps",
                  fmt::format("expected an integer in [0, {}] (planned steps a new request waits behind; vLLM's "
                              "async scheduling: 1), found {}", kMaxAsyncSteps, s.async_steps));
  if (s.long_prefill_token_threshold < 0)
    throw o.error("scheduler.long_prefill_token_threshold",
                  fmt::format("expected an integer >= 0 (0: off), found {}", s.long_prefill_token_threshold));
  check_scheduler_keys(c, kinds);
  const AllocatorConfig& a = c.allocator;
  if (a.block_size < 1)
    throw o.error("allocator.block_size", fmt::format("expected an integer >= 1 (tokens per block), found {}", a.block_size));
  // An amount in GiB becomes a count of bytes or blocks (std::int64_t); a NaN, an infinity or
  // a value too large for that count would make the conversion undefined behaviour.
  auto check_gib = [&](const char* key, double gib) {
    if (!(gib >= 0 && gib <= kMaxGib))  // also catches NaN
      throw o.error(key, fmt::format("expected a number of GiB >= 0 and <= {} (1 PiB), found {}", kMaxGib, gib));
  };
  check_gib("allocator.cpu_swap_gib", a.cpu_swap_gib);
  const std::int64_t kib = a.vattention_page_kib;
  if (kib < 4 || (kib & (kib - 1)) != 0 || kib > (std::int64_t{1} << 30))
    throw o.error("allocator.vattention.page_kib",
                  fmt::format("expected a power of two of KiB >= 4 (64, 128, 256 or 2048 in vAttention), found {}", kib));
  if (a.vattention.max_batch_size < 1)
    throw o.error("allocator.vattention.max_batch_size",
                  fmt::format("expected an integer >= 1 (request slots), found {}", a.vattention.max_batch_size));
  check_gib("kv.activation_reserve_gib", c.kv.activation_reserve_gib);
  if (c.kv.slots < 0)
    throw o.error("kv.slots", fmt::format("expected an integer >= 0 (0 = derive from GPU memory), found {}", c.kv.slots));
  // A pool of whole blocks holds kv.slots rounded down to them (experiment.h): at least one.
  if (a.whole_blocks() && c.kv.slots > 0 && c.kv.slots < a.block_size)
    throw o.error("kv.slots", fmt::format("expected room for one block of allocator.block_size = {} slots (the {} "
                                          "pool holds whole blocks), found {}",
                                          a.block_size, alloc::to_string(a.kind), c.kv.slots));
  if (c.tensor_parallel < 1) throw o.error("tensor_parallel", "expected an integer >= 1");
  if (!(c.measure.window_end_s > 0))  // also catches NaN; time starts at 0, so nothing would be measured
    throw o.error("measure.window_end_s",
                  fmt::format("expected seconds > 0 (the simulation starts at 0 s; a window ending there measures "
                              "nothing), found {}",
                              c.measure.window_end_s));
  if (!(c.measure.window_start_s < c.measure.window_end_s)) {  // also catches NaN
    // On the end when the file gives it, else on the start (the end is its default then).
    const char* key = o.has("measure.window_end_s") ? "measure.window_end_s" : "measure.window_start_s";
    throw o.error(key, fmt::format("expected window_start_s < window_end_s, found window_start_s = {} and "
                                   "window_end_s = {}",
                                   c.measure.window_start_s, c.measure.window_end_s));
  }
  if (c.validate.every_n_iterations < 0 || c.validate.max_batches < 0)
    throw o.error("validate", "expected every_n_iterations >= 0 and max_batches >= 0");
  if (!(std::isfinite(c.beam.mean_entropy_nats) && c.beam.mean_entropy_nats >= 0))
    throw o.error("beam.mean_entropy_nats",
                  fmt::format("expected a finite number >= 0, found {}", c.beam.mean_entropy_nats));
  if (c.output.iterations_stride < 0) throw o.error("output.iterations_stride", "expected an integer >= 0");
  if (c.engine.backlog_in_memory < 0)
    throw o.error("engine.backlog_in_memory", "expected an integer >= 0 (0: no bound)");
  if (c.output.latency_samples_in_memory < 1)
    throw o.error("output.latency_samples_in_memory", "expected an integer >= 1");
  if (c.output.timeline_stride < 1) throw o.error("output.timeline_stride", "expected an integer >= 1");
  if (c.output.timeline_max_iterations < 0)
    throw o.error("output.timeline_max_iterations", "expected an integer >= 0 (0: no bound)");
  if (!(c.output.timeline_start_s >= 0)) throw o.error("output.timeline_start_s", "expected seconds >= 0");
  if (!(c.output.timeline_end_s >= 0) ||
      (c.output.timeline_end_s > 0 && c.output.timeline_end_s <= c.output.timeline_start_s))
    throw o.error("output.timeline_end_s",
                  fmt::format("expected 0 (the run's end) or seconds after output.timeline_start_s = {}, found {}",
                              c.output.timeline_start_s, c.output.timeline_end_s));
  check_combinations(c, kinds);
  check_cluster(c);
}

void check_experiment(const ExperimentConfig& c, const ServingKinds& kinds) {
  check_values(c, kinds);
  check_speculative(c, kinds);
  check_replicas(c, kinds);
}

}  // namespace pagesim::sim
