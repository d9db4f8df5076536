#include "sim/config/experiment_config.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <type_traits>
#include <fstream>
#include <sstream>
#include <utility>

#include <fmt/format.h>

#include "sim/config/calibration.h"
#include "sim/config/config_error.h"
#include "sim/config/input_path.h"
#include "sim/config/kind_rules.h"
#include "sim/config/link_limits.h"
#include "sim/config/yaml_document.h"
#include "sim/config/yaml_visitors.h"

namespace pagesim::sim {
namespace {

// ---- The field lists: one per section, shared by reader and writer. ----

template <class V>
void visit(V& v, traces::LengthSpec& s) {
  v.choice("kind", "the distribution: fixed, uniform, lognormal or zipf", s.kind, traces::kLengthKindNames);
  v.field("value", "fixed: the length, tokens", s.value);
  v.field("lo", "uniform, zipf: smallest length; lognormal: clamp floor (tokens)", s.lo);
  v.field("hi", "uniform, zipf: largest length; lognormal: clamp ceiling (tokens)", s.hi);
  v.field("median", "lognormal: median length, tokens (> 0; or leave 0 and give mean)", s.median);
  v.field("mean", "lognormal: mean length, tokens (> 0; or leave 0 and give median)", s.mean);
  v.field("sigma", "lognormal: standard deviation of ln(length), >= 0", s.sigma);
  v.field("s", "zipf: exponent, > 0 (larger: more mass on short lengths)", s.s);
}

template <class V>
void visit(V& v, traces::InferencePerfDistribution& d) {
  v.field("min", "smallest value drawn (clip), tokens", d.min);
  v.field("max", "largest value drawn (clip), tokens", d.max);
  v.field("mean", "mean of the normal distribution, tokens", d.mean);
  v.field("std_dev", "standard deviation of the normal distribution, tokens", d.std_dev);
}

template <class V>
void visit(V& v, traces::InferencePerfSpec& s) {
  traces::SharedPrefixSpec& p = s.shared_prefix;
  v.section("shared_prefix", [&](auto& q) {
    q.field("num_groups", "shared_prefix: groups, each with its own system prompt", p.num_groups);
    q.field("num_prompts_per_group", "shared_prefix: questions per group", p.num_prompts_per_group);
    q.field("system_prompt_len", "shared_prefix: tokens of each group's system prompt", p.system_prompt_len);
    q.field("question_len", "shared_prefix: tokens of each question (without question_distribution)", p.question_len);
    q.field("output_len", "shared_prefix: output tokens of each request (without output_distribution)", p.output_len);
    // Written when given (parse_experiment sets `given` from the file).
    q.section_omitted_at_default("question_distribution", !p.question_distribution.given,
                                 [&](auto& d) { visit(d, p.question_distribution); });
    q.section_omitted_at_default("output_distribution", !p.output_distribution.given,
                                 [&](auto& d) { visit(d, p.output_distribution); });
    q.field("enable_multi_turn_chat", "shared_prefix: each group's questions as turns of one growing conversation",
            p.enable_multi_turn_chat);
  });
  v.choice("load_type", "the load stages' timer: constant or poisson arrivals",
           s.load_type, traces::kInferencePerfLoadNames);
  v.list("stages", "load stages in order, each sending rate x duration_s requests",
         s.stages, [](auto& e, traces::InferencePerfStage& st) {
    e.field("rate", "the stage's rate, requests/s", st.rate);
    e.field("duration_s", "the stage's length, seconds", st.duration_s);
  });
  v.field("stage_gap_s", "pause after a stage's last request finishes before the next stage, seconds", s.stage_gap_s);
  v.field("prompt_token_overhead", "tokens the server's chat template adds to every prompt", s.prompt_token_overhead);
  v.field("hash_block_tokens", "tokens per hash id of the prompts (0: the allocator's block size)",
          s.hash_block_tokens);
}

template <class V>
void visit(V& v, traces::WorkloadSpec& w) {
  v.choice("kind",
           "where requests come from: a trace file, synthetic draws, multi-turn sessions or inference-perf's load",
           w.kind, traces::kWorkloadKindNames);
  v.section("trace", [&](auto& t) {
    t.field("path", "trace: the trace file (relative: the experiment's folder, then the bundled data)", w.trace.path);
    t.choice("format", "trace: its format (auto: detected from the file)", w.trace.format, traces::kTraceFormatNames);
    t.field("hash_block_tokens", "trace: tokens per hash id (0: the format's default; mooncake 512)",
            w.trace.hash_block_tokens);
    t.field("time_scale", "trace: arrival times multiplied by this (0.5 replays at twice the rate)",
            w.trace.time_scale);
  });
  v.section("arrival", [&](auto& a) {
    a.choice("kind", "synthetic and sessions: the arrival process of requests (or session starts)",
             w.arrival.kind, traces::kArrivalKindNames);
    a.field("rate", "requests/s: the long-run mean (burst: the rate during an on-period)", w.arrival.rate);
    a.field("quantum_s", "poisson_quantum: quantum length, seconds (the vLLM artifact: 0.01)", w.arrival.quantum_s);
    a.field("cv", "gamma: coefficient of variation of the gaps (1 is poisson)", w.arrival.cv);
    a.field("on_s", "burst: length of each on-period, seconds", w.arrival.on_s);
    a.field("off_s", "burst: length of each off-period, seconds", w.arrival.off_s);
  });
  v.section("lengths", [&](auto& l) {
    l.choice("kind", "where prompt and output lengths come from: distributions or a lengths file",
             w.lengths.kind, traces::kLengthsKindNames);
    l.section("prompt", [&](auto& p) { visit(p, w.lengths.prompt); });
    l.section("output", [&](auto& o) { visit(o, w.lengths.output); });
    l.field("path", "empirical, file_order, cycle_shuffle: the lengths CSV file", w.lengths.path);
    l.field("prompt_column", "the lengths file's prompt column (empty: detected from the header)",
            w.lengths.columns.prompt);
    l.field("output_column", "the lengths file's output column (empty: detected from the header)",
            w.lengths.columns.output);
  });
  v.section_omitted_at_default("sessions", w.kind != traces::WorkloadKind::kSessions, [&](auto& s) {
    s.section("turns", [&](auto& t) { visit(t, w.sessions.turns); });
    s.section("think_time", [&](auto& t) {
      t.choice("kind", "sessions: the think-time distribution between a turn's arrival and the next's",
               w.sessions.think_time.kind, traces::kThinkTimeKindNames);
      t.field("value_s", "fixed: the think time, seconds", w.sessions.think_time.value_s);
      t.field("lo_s", "uniform: shortest think time, seconds", w.sessions.think_time.lo_s);
      t.field("hi_s", "uniform: longest think time, seconds", w.sessions.think_time.hi_s);
      t.field("mean_s", "exponential: mean think time; lognormal: mean (or give median_s), seconds",
              w.sessions.think_time.mean_s);
      t.field("median_s", "lognormal: median think time, seconds", w.sessions.think_time.median_s);
      t.field("sigma", "lognormal: standard deviation of ln(think time)", w.sessions.think_time.sigma);
    });
    s.field("system_prompts", "sessions: distinct system prompts sessions share (0: none)", w.sessions.system_prompts);
    s.section("system_prompt_tokens", [&](auto& t) { visit(t, w.sessions.system_prompt_tokens); });
    s.field("block_tokens",
            "sessions: tokens per hash id (equal to allocator.block_size: ids match the cache's blocks)",
            w.sessions.block_tokens);
    s.field("max_context_tokens", "sessions: a session ends before a turn past this many tokens (0: no limit)",
            w.sessions.max_context_tokens);
  });
  v.section_omitted_at_default("inference_perf", w.kind != traces::WorkloadKind::kInferencePerf,
                               [&](auto& q) { visit(q, w.inference_perf); });
  v.list("sampling", "a weighted mix of n and beam_width drawn per request (empty: the trace's or 1)",
         w.sampling, [](auto& e, traces::SamplingChoice& c) {
    e.field("weight", "relative weight of this choice", c.weight);
    e.field("n", "parallel samples per request", c.n);
    e.field("beam_width", "beam width (> 1: beam search)", c.beam_width);
  });
  v.field("max_total_tokens", "keep only requests with prompt + output < this, tokens (0: keep all)",
          w.max_total_tokens);
  v.field("duration_s", "only requests arriving before this, seconds (0: no limit)", w.duration_s);
  v.field("max_requests", "at most this many requests (0: no limit)", w.max_requests);
  v.choice("rng", "random streams: pagesim's, or the vLLM artifact's generators bit for bit",
           w.rng, traces::kWorkloadRngNames);
  v.choice_omitted_at_default("oversize",
                              "a request that can never be scheduled: error, drop it, or truncate its prompt",
                              w.oversize, traces::kOversizePolicyNames, traces::OversizePolicy::kError);
}

template <class V>
void visit(V& v, ExperimentConfig& c) {
  v.field("name", "the experiment's name (the default output folder, summary.json)", c.name);
  v.field("seed", "seed every random draw of the run derives from", c.seed);
  v.section("workload", [&](auto& w) { visit(w, c.workload); });
  v.field_or_section("model", "a model preset, or a section describing a custom model",
                     c.model, c.custom_model.given, [&](auto& m) {
    // The writer leaves a config.json's architecture in the file it came from.
    constexpr bool writer = std::is_same_v<std::decay_t<decltype(m)>, YamlWriter>;
    visit_custom_model(m, c.model, c.custom_model, !writer || c.custom_model.hf_config.empty());
  });
  v.choice_omitted_at_default("kv_dtype", "KV cache number format (auto: the model's dtype)",
                              c.kv_dtype, kKvDtypeNames, KvDtype::kAuto);
  v.field("gpu", "GPU preset (memory, FLOPS, bandwidths)", c.gpu);
  v.field("tensor_parallel", "GPUs one replica's model is split over (tensor parallelism)", c.tensor_parallel);
  v.parsed_omitted_at_default("max_model_len",
                              "longest request served, prompt + output: model (its context), off, or tokens",
                              c.max_model_len, parse_max_model_len, format_max_model_len,
                              kMaxModelLenOfModel);
  v.parsed_omitted_at_default("vllm_version", "the vLLM release whose behaviour pagesim follows where releases differ",
                              c.vllm_version, parse_vllm_version, format_vllm_version,
                              VllmVersion{});
  v.section("kv", [&](auto& k) {
    k.field("slots", "KV capacity in token slots (0: derived from the GPU's memory)", c.kv.slots);
    k.field("gpu_memory_utilization", "fraction of GPU memory the server may use", c.kv.gpu_memory_utilization);
    k.field("activation_reserve_gib", "GiB held back for activations when deriving slots (0: modelled)",
            c.kv.activation_reserve_gib);
    k.choice_omitted_at_default("engine", "how slots 0 sizes the pool: as vLLM's profiling does, or pagesim's formula",
                                c.kv.engine, kKvSizingNames, KvSizing::kVllm);
  });
  v.section("allocator", [&](auto& a) {
    a.choice("kind", "the KV allocator (memory manager) of the pool", c.allocator.kind, alloc::kAllocatorKindNames);
    a.field("block_size", "tokens per KV block (radix: per page)", c.allocator.block_size);
    a.parsed("reservation", "contiguous: slots reserved up front per request",
             c.allocator.reservation, alloc::ReservationPolicy::parse,
             [](const alloc::ReservationPolicy& p) { return p.to_string(); });
    a.choice("placement", "contiguous: where a request's range goes in the pool",
             c.allocator.placement, alloc::kPlacementKindNames);
    a.field("max_seq_len", "contiguous: reservation cap per request, tokens", c.allocator.max_seq_len);
    a.field("max_chunk_blocks", "contiguous buddy: largest chunk, blocks", c.allocator.max_chunk_blocks);
    a.field("prefix_cache", "reuse cached prompt blocks across requests (prefix caching)", c.allocator.prefix_cache);
    a.choice("eviction", "prefix cache: which cached block is evicted first",
             c.allocator.eviction, alloc::kEvictionKindNames);
    a.field("cpu_swap_gib", "CPU swap space, GiB (shared with a CPU offload tier)", c.allocator.cpu_swap_gib);
    OffloadConfig& off = c.allocator.offload_config;
    a.section_omitted_at_default("offload", off.at_default(), [&](auto& q) {
      q.choice("write_policy", "offload: when a tier is written (write-back on eviction, or write-through)",
               off.write_policy, alloc::kTierWritePolicyNames);
      q.field("overlap", "offload: transfers overlap compute (false: serial, LMCache's bulk load)", off.overlap);
      q.list("tiers", "offload: the tiers below the GPU, fastest first", off.tiers, [](auto& e, TierConfig& t) {
        e.choice("kind", "the tier: cpu or disk", t.kind, alloc::kTierKindNames);
        e.field("capacity_gib", "the tier's capacity, GiB (a cpu tier at most allocator.cpu_swap_gib)", t.capacity_gib);
        e.field("read_gbps", "tier to GPU bandwidth, GB/s", t.read_gbps);
        e.field("write_gbps", "GPU to tier bandwidth, GB/s", t.write_gbps);
        e.field("latency_us", "fixed cost per batched transfer, microseconds", t.latency_us);
        e.choice("eviction", "which of the tier's blocks is evicted first", t.eviction, alloc::kEvictionKindNames);
      });
    });
    a.section_omitted_at_default("vattention", c.allocator.vattention_at_default(), [&](auto& q) {
      q.field("page_kib", "vattention: physical page size, KiB (a power of two)", c.allocator.vattention_page_kib);
      q.field("max_batch_size", "vattention: request slots (virtual rows) of the pool",
              c.allocator.vattention.max_batch_size);
      q.field("deferred_reclamation", "vattention: keep a finished request's pages for the next one in its slot",
              c.allocator.vattention.deferred_reclamation);
    });
  });
  v.section("scheduler", [&](auto& s) {
    s.choice("kind", "the batching policy (vLLM, Orca, Sarathi, SGLang, static)",
             c.scheduler.kind, kSchedulerKindNames);
    s.field("max_num_batched_tokens", "token budget per iteration, prefill + decode",
            c.scheduler.max_num_batched_tokens);
    s.field("max_num_seqs", "most running sequences (static: the batch size)", c.scheduler.max_num_seqs);
    s.field("watermark", "vllm, sarathi: fraction of blocks kept free after an admission", c.scheduler.watermark);
    s.choice("preemption", "how a request is preempted: recompute, swap, or the scheduler's default",
             c.scheduler.preemption, kPreemptionModeNames);
    s.field("chunk_tokens", "sarathi: token budget per iteration (decodes + prefill chunks)", c.scheduler.chunk_tokens);
    s.choice_omitted_at_default("schedule_policy", "sglang: waiting-queue order",
                                c.scheduler.schedule_policy, kSchedulePolicyNames,
                                SchedulePolicy::kLpm);
    s.field_omitted_at_default("async_steps", "steps planned ahead of the one running (vLLM's async scheduling: 1)",
                               c.scheduler.async_steps, std::int64_t{0});
    s.field_omitted_at_default("long_prefill_token_threshold",
                               "vllm-v1: most prefill tokens of one request per step (0: no cap)",
                               c.scheduler.long_prefill_token_threshold,
                               std::int64_t{0});
  });
  v.section("beam", [&](auto& b) {
    b.choice("model", "beam search: which beams survive each step", c.beam.model, kBeamModelNames);
    b.field("mean_entropy_nats", "beam search (scores model): mean entropy of the next-token distribution, nats",
            c.beam.mean_entropy_nats);
  });
  v.section("cost", [&](auto& k) {
    k.choice("kind", "how iteration times are computed", c.cost.kind, kCostModelKindNames);
    k.field("compute_efficiency", "roofline: fraction of peak FLOPS reached (< 0: the GPU preset's)",
            c.cost.compute_efficiency);
    k.field("memory_efficiency", "roofline: fraction of peak memory bandwidth reached (< 0: the GPU preset's)",
            c.cost.memory_efficiency);
    k.field("iteration_overhead_s",
            "roofline: fixed seconds per iteration (< 0: the GPU preset's); profile: host seconds added",
            c.cost.iteration_overhead_s);
    k.section("constant", [&](auto& q) {
      q.field("seconds_per_iteration", "constant: seconds per iteration", c.cost.constant.seconds_per_iteration);
      q.field("seconds_per_prefill_token", "constant: seconds per prefill token",
              c.cost.constant.seconds_per_prefill_token);
      q.field("seconds_per_decode_seq", "constant: seconds per decoding sequence",
              c.cost.constant.seconds_per_decode_seq);
      q.field("seconds_per_decode_context_token", "constant: seconds per context token of a decoding sequence",
              c.cost.constant.seconds_per_decode_context_token);
      q.field("seconds_per_swap_block", "constant: seconds per swapped block", c.cost.constant.seconds_per_swap_block);
      q.field("seconds_per_swap_token", "constant: seconds per swapped token", c.cost.constant.seconds_per_swap_token);
    });
    k.field("profile", "profile: the measured profile CSV (pagesim profile)", c.cost.profile);
    const bool not_operators = c.cost.kind != CostModelKind::operators;
    k.section_omitted_at_default("operators", not_operators, [&](auto& q) {
      q.field("tables", "operators: the tables' folder, one GPU/ENGINE/ folder each (empty: the source tree's)",
              c.cost.operators.tables);
      q.field("engine", "operators: the serving engine and version the tables measured", c.cost.operators.engine);
      q.field("gpu", "operators: the tables' GPU folder (empty: from the gpu preset)", c.cost.operators.gpu);
      q.field("cuda_graph_max_size", "operators: largest CUDA-graph batch, tokens (-1: vLLM's default; 0: none)",
              c.cost.operators.cuda_graph_max_size);
      q.field("gpu_scale", "operators: multiplies the summed operator time (a calibration factor)",
              c.cost.operators.gpu_scale);
      q.field("memory_ops", "operators: price the memory-bound kernels no table holds (norms, activation, embedding)",
              c.cost.operators.memory_ops);
    });
    k.section_omitted_at_default("host", not_operators, [&](auto& q) {
      q.field("step_s", "host seconds per non-empty iteration", c.cost.host.step_s);
      q.field("per_seq_s", "host seconds per scheduled sequence", c.cost.host.per_seq_s);
    });
  });
  v.section("measure", [&](auto& m) {
    m.field("window_start_s", "averages over iterations starting at or after this, seconds", c.measure.window_start_s);
    m.field("window_end_s", "... and before this, seconds", c.measure.window_end_s);
  });
  v.section("output", [&](auto& o) {
    o.field("iterations_stride", "every Nth iteration to iterations.csv (0: none)", c.output.iterations_stride);
    o.field("requests_csv", "write requests.csv", c.output.requests_csv);
    const OutputConfig d;
    o.field_omitted_at_default("timeline", "write timeline.json (a Chrome trace for Perfetto)",
                               c.output.timeline, d.timeline);
    o.field_omitted_at_default("timeline_stride", "timeline: every Nth iteration",
                               c.output.timeline_stride, d.timeline_stride);
    o.field_omitted_at_default("timeline_start_s", "timeline: from this simulated second",
                               c.output.timeline_start_s, d.timeline_start_s);
    o.field_omitted_at_default("timeline_end_s", "timeline: to this simulated second (0: the run's end)",
                               c.output.timeline_end_s, d.timeline_end_s);
    o.field_omitted_at_default("timeline_max_iterations", "timeline: at most this many iteration slices (0: no bound)",
                               c.output.timeline_max_iterations, d.timeline_max_iterations);
    o.field_omitted_at_default("steps", "write steps.jsonl (each step's scheduling decisions)",
                               c.output.steps, d.steps);
    o.field_omitted_at_default("latency_samples_in_memory",
                               "latency values held in memory per metric before spilling to a temporary file",
                               c.output.latency_samples_in_memory,
                               d.latency_samples_in_memory);
  });
  v.section("validate", [&](auto& q) {
    q.field("every_n_iterations", "write every Nth iteration's batch to batches.jsonl (0: off)",
            c.validate.every_n_iterations);
    q.field("max_batches", "at most this many batches", c.validate.max_batches);
  });
  v.section_omitted_at_default("replicas", c.replicas.at_default(), [&](auto& r) {
    r.field("count", "serving replicas (instances) behind the router", c.replicas.count);
    r.choice("router", "how the router picks a replica for each request", c.replicas.router.kind, kRouterKindNames);
    // Written for the prefix_aware router only: under another router the reader refuses the
    // section, so a config.resolved.yaml that held it could not be run again.
    r.section_omitted_at_default("prefix_aware", c.replicas.router.kind != RouterKind::kPrefixAware, [&](auto& q) {
      q.field("balance_abs_threshold", "prefix_aware: load gap (requests) beyond which it balances instead",
              c.replicas.router.balance_abs_threshold);
      q.field("balance_rel_threshold", "prefix_aware: load ratio beyond which it balances instead",
              c.replicas.router.balance_rel_threshold);
      q.field("cache_threshold", "prefix_aware: fraction of a prompt cached to prefer that replica",
              c.replicas.router.cache_threshold);
    });
    DisaggregatedConfig& d = c.replicas.disaggregated;
    r.section_omitted_at_default("disaggregated", !d.enabled(), [&](auto& q) {
      q.field("prefill", "disaggregated: prefill replicas (the first ones); the rest decode", d.prefill);
      q.field("transfer_gbps", "disaggregated: KV transfer bandwidth, Gbit/s", d.transfer_gbps);
      q.field("transfer_latency_us", "disaggregated: fixed cost per transfer, microseconds", d.transfer_latency_us);
      q.choice("decode_router", "disaggregated: how the decode replica of each hand-off is picked",
               d.decode_router, kRouterKindNames);
    });
    GlobalCacheConfig& g = c.replicas.global_cache;
    r.section_omitted_at_default("global_cache", !g.enabled, [&](auto& q) {
      q.choice("source", "global_cache: fetch missing prompt blocks from peer replicas or a shared pool",
               g.source, kGlobalCacheSourceNames);
      q.field("bandwidth_gbps", "global_cache: network bandwidth, Gbit/s", g.bandwidth_gbps);
      q.field("latency_us", "global_cache: fixed cost of an iteration's fetch, microseconds", g.latency_us);
      // Written for the shared pool only: the reader refuses it for peers.
      if (g.source == GlobalCacheSource::kSharedPool || !g.enabled)
        q.field("shared_pool_gib", "global_cache: the shared pool's capacity, GiB", g.shared_pool_gib);
    });
    r.ignore("overrides",
             "replicas with settings of their own: a list of {index: i, KEY: value, ...}"
             );  // parse_replica_overrides(), after the rest
  });
  v.section_omitted_at_default("slo", !c.slo.enabled() && c.slo.tbt == TbtMetric::kMean, [&](auto& q) {
    q.field("ttft_s", "target time to first token, seconds (0: none)", c.slo.ttft_s);
    q.field("tbt_s", "target time between tokens, seconds (0: none)", c.slo.tbt_s);
    q.choice("tbt", "which per-request time between tokens the target bounds", c.slo.tbt, kTbtMetricNames);
  });
  v.section_omitted_at_default("client", !c.client.enabled, [&](auto& q) {
    q.choice("kind", "the load generator whose view client_metrics.json gives", c.client.kind, kClientKindNames);
    q.field("stream_events_per_token", "streamed messages per output token", c.client.stream_events_per_token);
    q.field("stream_final_events", "streamed messages after the last token (usage chunk, [DONE])",
            c.client.stream_final_events);
    q.field("latency_s", "seconds added to every streamed message's time (client and network)", c.client.latency_s);
  });
  v.section_omitted_at_default("lora", !c.lora.enabled, [&](auto& q) {
    q.choice("placement", "where adapters live: vLLM's slots, or the KV pool (unified)",
             c.lora.placement, kLoraPlacementNames);
    q.field("max_loras", "vllm: adapters resident on the GPU at once", c.lora.max_loras);
    q.field("max_cpu_loras", "vllm: adapters cached in host memory (0: max_loras)", c.lora.max_cpu_loras);
    q.field("rank", "LoRA rank of every adapter", c.lora.rank);
    q.parsed("target_modules", "the modules adapters apply to, comma-separated",
             c.lora.target_modules, parse_lora_modules, format_lora_modules);
    q.field("adapters", "adapters requests without one from the trace are drawn from (0: none)", c.lora.adapters);
    q.choice("popularity", "how requests pick an adapter: uniform or zipf", c.lora.popularity, kLoraPopularityNames);
    q.field("zipf_alpha", "zipf popularity: exponent", c.lora.zipf_alpha);
  });
  v.section_omitted_at_default("engine", c.engine.skip_decode_runs && c.engine.compact_waiting &&
                                             c.engine.backlog_in_memory == EngineConfig{}.backlog_in_memory,
                               [&](auto& q) {
                                 q.field("skip_decode_runs",
                                         "advance runs of identical decode iterations at once (same outputs)",
                                         c.engine.skip_decode_runs);
                                 q.field("compact_waiting",
                                         "keep arrivals behind a long queue in a compact backlog (same outputs)",
                                         c.engine.compact_waiting);
                                 q.field_omitted_at_default("backlog_in_memory",
                                                            "backlog entries held in memory per replica (0: all)",
                                                            c.engine.backlog_in_memory,
                                                            EngineConfig{}.backlog_in_memory);
                               });
  v.section_omitted_at_default("speculative", !c.speculative.settings.enabled(), [&](auto& q) {
    SpeculativeSettings& s = c.speculative.settings;
    q.choice("method", "speculative decoding method (none: off)", s.method, kSpeculativeMethodNames);
    q.field("num_speculative_tokens", "tokens proposed per step (k)", s.k);
    q.ignore("acceptance",
             "acceptance rate: a number, or one per position"
             );  // a number or a list: read by read_acceptance, written by to_yaml
    q.choice("draft_kv", "where the draft's KV lives", s.draft_kv, kDraftKvPlacementNames);
    // Written only where they apply (the reader refuses them for another method).
    q.field_omitted_at_default("draft_model", "draft_model: the draft's model preset",
                               c.speculative.draft_model, std::string());
    q.field_omitted_at_default("eagle_layers", "eagle: decoder layers of the EAGLE head",
                               c.speculative.eagle_layers, std::int64_t{1});
    q.field_omitted_at_default("draft_cost_ratio",
                               "draft pass cost as a fraction of the target's (-1: its own roofline)",
                               c.speculative.draft_cost_ratio, -1.0);
  });
  v.field_omitted_at_default("calibration", "calibration file filling the keys left out (pagesim calibrate writes one)",
                             c.calibration, std::string());
  v.ignore("sweep", "runs of this experiment: grid axes and cases (described above the table)");
}

// ---- lora ----

}  // namespace

std::vector<std::string> parse_lora_modules(const std::string& text) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    std::size_t end = text.find(',', pos);
    if (end == std::string::npos) end = text.size();
    std::string name = text.substr(pos, end - pos);
    name.erase(0, name.find_first_not_of(' '));
    name.erase(name.find_last_not_of(' ') + 1);
    bool known = false;
    for (std::string_view m : kLoraModules) known |= m == name;
    std::string all;
    for (std::string_view m : kLoraModules) all += (all.empty() ? "" : ", ") + std::string(m);
    if (!known)
      throw std::invalid_argument(fmt::format("expected comma-separated module names among {}, found '{}'", all, name));
    if (std::find(out.begin(), out.end(), name) != out.end())
      throw std::invalid_argument(fmt::format("module '{}' is named twice", name));
    out.push_back(name);
    pos = end + 1;
  }
  return out;
}

std::string format_lora_modules(const std::vector<std::string>& modules) {
  std::string s;
  for (const std::string& m : modules) s += (s.empty() ? "" : ",") + m;
  return s;
}

namespace {

// ---- replicas and slo ----

// The top-level keys a replicas.overrides entry may set besides `index`: what one serving
// instance is (its hardware, model, pool and policies), not what the cluster serves.
constexpr const char* kOverridableKeys[] = {"model", "gpu", "tensor_parallel", "max_model_len",
                                            "kv", "allocator", "scheduler", "cost"};

// Lays `value` over `root` at `path`, key by key for maps, so that an override's
// `kv: {slots: N}` changes kv.slots and keeps the experiment's other kv keys.
void overlay(YAML::Node& root, const std::string& path, const YAML::Node& value, const std::string& file) {
  if (value.IsMap() && value.size() > 0) {
    for (const auto& kv : value) overlay(root, path + "." + kv.first.Scalar(), kv.second, file);
    return;
  }
  set_path(root, path, value, file);
}

// Parses replicas.overrides of `root` into c.replicas.overrides: each entry's keys laid over
// the experiment and the result parsed as a whole experiment, so every key is checked as it
// would be at the top level; errors name the entry's key path.
void parse_replica_overrides(const YAML::Node& root, const std::string& file, ExperimentConfig& c) {
  const YAML::Node section = root["replicas"];
  if (!section || !section.IsMap() || !section["overrides"]) return;
  const YAML::Node list = section["overrides"];
  const ConfigOrigin& o = c.origin;
  c.origin.record("replicas.overrides", YamlReader::line_of(list));
  if (!list.IsSequence())
    throw o.error("replicas.overrides", "expected a list of per-replica settings ({index: i, gpu: ..., kv: ...})");
  for (std::size_t i = 0; i < list.size(); ++i) {
    const YAML::Node e = list[i];
    const std::string at = fmt::format("replicas.overrides[{}]", i);
    c.origin.record(at, YamlReader::line_of(e));
    if (!e.IsMap()) throw o.error(at, "expected a map with an index and the settings that replica changes");
    std::string allowed = "index";
    for (const char* k : kOverridableKeys) allowed += std::string(", ") + k;
    for (const auto& kv : e) {
      const std::string k = kv.first.Scalar();
      bool known = k == "index";
      for (const char* a : kOverridableKeys) known |= k == a;
      if (!known)
        throw ConfigError(file, YamlReader::line_of(kv.first), at + "." + k,
                          "unknown key (allowed here: " + allowed + "; the workload, seed and outputs are the "
                          "cluster's, not a replica's)");
    }
    const YAML::Node index = e["index"];
    if (!index) throw o.error(at, "expected an index: the replica (0 to replicas.count - 1) these settings apply to");
    ReplicaOverride ov;
    try {
      ov.index = index.as<std::int64_t>();
    } catch (const YAML::Exception&) {
      throw ConfigError(file, YamlReader::line_of(index), at + ".index",
                        "expected an integer, found '" + (index.IsScalar() ? index.Scalar() : std::string("a collection")) + "'");
    }
    if (ov.index < 0 || ov.index >= c.replicas.count)
      throw ConfigError(file, YamlReader::line_of(index), at + ".index",
                        fmt::format("expected a replica index in [0, {}] (replicas.count = {}), found {}",
                                    c.replicas.count - 1, c.replicas.count, ov.index));
    for (const ReplicaOverride& earlier : c.replicas.overrides)
      if (earlier.index == ov.index)
        throw ConfigError(file, YamlReader::line_of(index), at + ".index",
                          fmt::format("replica {} already has an override: give each replica one entry", ov.index));
    YAML::Node replica_root = fork_root(root);
    replica_root.remove("replicas");
    replica_root.remove("sweep");
    for (const auto& kv : e)
      if (kv.first.Scalar() != "index") overlay(replica_root, kv.first.Scalar(), kv.second, file);
    try {
      ov.config = std::make_shared<const ExperimentConfig>(parse_experiment(replica_root, file));
    } catch (const ConfigError& err) {
      // Keys the entry gave are named under it; others are the experiment's own.
      const std::string top = err.key().substr(0, err.key().find_first_of(".["));
      const bool from_entry = !err.key().empty() && e[top];
      // A key the overlay created anew has no mark: the line of the entry's section stands in.
      const int line = err.line() > 0 ? err.line() : YamlReader::line_of(from_entry ? e[top] : e);
      throw ConfigError(err.file(), line, from_entry ? at + "." + err.key() : err.key(),
                        from_entry ? err.message() : fmt::format("{} (on replica {}, with {})", err.message(), ov.index, at));
    }
    c.replicas.overrides.push_back(std::move(ov));
  }
}

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
    const DisaggregatedConfig& d = r.disaggregated;
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
    const GlobalCacheConfig& g = r.global_cache;
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
    if (!rc.allocator.caches_prefixes()) continue;
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
      if (!pool.tiers || !rc.allocator.prefix_cache)
        throw o.error("replicas.global_cache",
                      fmt::format("replica {} would fetch prefix blocks into its own prefix cache, but it has none "
                                  "that can (allocator.kind: {}, prefix_cache: {}): a global cache needs "
                                  "allocator.kind: {} with prefix_cache: true on every replica that serves "
                                  "arrivals",
                                  i, pool.name, rc.allocator.prefix_cache,
                                  kind_names(kinds.allocators, [](const AllocatorDescriptor& k) { return k.tiers; })));
    }
  if (r.router.kind == RouterKind::kPrefixAware && !any_prefix_cache)
    throw o.error("replicas.router",
                  "prefix_aware routes by the prompt tokens each replica has cached, but no replica has a prefix cache "
                  "(allocator.prefix_cache: false, and no allocator.kind: radix): turn it on, or pick another "
                  "router");
}


// A cost key read only by another cost.kind would change nothing, and a constant model whose
// iteration coefficients are all 0 makes every iteration instantaneous (latencies 0, rates
// unbounded): both are refused, naming the key. Values are compared with the defaults, not
// looked up in the file, so a config.resolved.yaml (which writes every key) parses again.
void check_cost_kind_keys(const ExperimentConfig& c) {
  const ConfigOrigin& o = c.origin;
  const CostConfig& k = c.cost;
  const std::string kind(to_string(k.kind));
  auto refuse = [&](const char* key, std::string_view what, std::string_view kinds) {
    throw o.error(key, fmt::format("{} {}, which cost.kind {} reads; cost.kind is '{}', which does not: leave it "
                                   "out, or set cost.kind: {}",
                                   key, what, kinds, kind, kinds));
  };
  if (k.kind != CostModelKind::roofline) {
    if (k.compute_efficiency >= 0)
      refuse("cost.compute_efficiency", "overrides the GPU preset's compute efficiency", "roofline");
    if (k.memory_efficiency >= 0)
      refuse("cost.memory_efficiency", "overrides the GPU preset's memory efficiency", "roofline");
  }
  // The operators model's sections: refused when given (or set in code) under another kind.
  if (k.kind != CostModelKind::operators) {
    if (o.has("cost.operators") || !(k.operators == OperatorsCostConfig{}))
      refuse("cost.operators", "sets up the measured operator tables", "operators");
    if (o.has("cost.host") || !(k.host == HostCostConfig{}))
      refuse("cost.host", "adds the serving engine's host time", "operators");
  }
  if (k.kind == CostModelKind::operators && k.iteration_overhead_s >= 0)
    throw o.error("cost.iteration_overhead_s",
                  "cost.kind operators takes its host time from cost.host.step_s (per iteration) and "
                  "cost.host.per_seq_s (per scheduled sequence): leave cost.iteration_overhead_s out");
  if (k.kind == CostModelKind::constant && k.iteration_overhead_s >= 0)
    throw o.error("cost.iteration_overhead_s",
                  "cost.iteration_overhead_s adds host time to every iteration of cost.kind roofline or profile; "
                  "cost.kind constant has its own fixed term: leave it out and set "
                  "cost.constant.seconds_per_iteration");
  const ConstantCostCoefficients& q = k.constant;
  const bool iteration_terms = q.seconds_per_iteration != 0 || q.seconds_per_prefill_token != 0 ||
                               q.seconds_per_decode_seq != 0 || q.seconds_per_decode_context_token != 0;
  const bool swap_terms = q.seconds_per_swap_block != 0 || q.seconds_per_swap_token != 0;
  if (k.kind != CostModelKind::constant && (iteration_terms || swap_terms))
    refuse("cost.constant", "sets the coefficients of a linear cost", "constant");
  if (k.kind != CostModelKind::profile && !k.profile.empty())
    refuse("cost.profile", "names the CSV of measured times", "profile");
  if (k.kind == CostModelKind::profile && k.profile.empty())
    throw o.error("cost.profile", "cost.kind profile reads its times from a CSV: expected cost.profile: PATH (pagesim "
                                  "profile --device cuda writes one; format in sim/cost/profile_cost_model.h)");
  if (k.kind == CostModelKind::constant && !iteration_terms)
    throw o.error("cost.constant",
                  "seconds_per_iteration, seconds_per_prefill_token, seconds_per_decode_seq and "
                  "seconds_per_decode_context_token are all 0, so every iteration would take no time and every "
                  "latency would be 0: set at least one of them > 0");
}

// The roofline overrides: a negative value (the default, -1) keeps the GPU preset's; anything
// else must be usable: an efficiency in (0, 1] (0 would make every iteration take forever,
// NaN would silently keep the preset), an overhead finite and >= 0.
void check_cost(const ExperimentConfig& c) {
  const ConfigOrigin& o = c.origin;
  auto efficiency = [&](const char* key, double v) {
    if (std::isnan(v) || v == 0 || v > 1)
      throw o.error(key, fmt::format("expected a fraction in (0, 1], or a negative number to keep the GPU "
                                     "preset's, found {}",
                                     v));
  };
  efficiency("cost.compute_efficiency", c.cost.compute_efficiency);
  efficiency("cost.memory_efficiency", c.cost.memory_efficiency);
  const OperatorsCostConfig& op = c.cost.operators;
  if (!std::isfinite(op.gpu_scale) || op.gpu_scale <= 0)
    throw o.error("cost.operators.gpu_scale",
                  fmt::format("expected a finite factor > 0 (1: the measured operators as they are), found {}",
                              op.gpu_scale));
  if (op.cuda_graph_max_size < -1)
    throw o.error("cost.operators.cuda_graph_max_size",
                  fmt::format("expected -1 (vLLM's default from scheduler.max_num_seqs), 0 (no CUDA graphs) or a "
                              "largest capture size in tokens, found {}",
                              op.cuda_graph_max_size));
  if (op.engine.empty())
    throw o.error("cost.operators.engine", "expected an engine folder of the tables, e.g. vllm-0.14.0");
  for (const auto& [key, v] : {std::pair{"cost.host.step_s", c.cost.host.step_s},
                               std::pair{"cost.host.per_seq_s", c.cost.host.per_seq_s}})
    if (!std::isfinite(v) || v < 0)
      throw o.error(key, fmt::format("expected finite seconds >= 0, found {}", v));
  const double overhead = c.cost.iteration_overhead_s;
  if (!std::isfinite(overhead))
    throw o.error("cost.iteration_overhead_s",
                  fmt::format("expected a finite number of seconds >= 0, or a negative number to keep the GPU "
                              "preset's, found {}",
                              overhead));
  check_cost_kind_keys(c);
}

// Settings that are valid alone but mean nothing together: each would run and report numbers
// that do not describe what the file asks for.
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

void check_combinations(const ExperimentConfig& c, const ServingKinds& kinds) {
  const ConfigOrigin& o = c.origin;
  check_cost(c);
  check_lora(c, kinds);
  const AllocatorConfig& a = c.allocator;
  check_interface_only_pool(c, kinds);
  check_own_sections(c, kinds);
  check_pool_pairing(c, kinds, PoolCheck::kWithPoolKeys);
  if (c.scheduler.preemption == PreemptionMode::kSwap && a.cpu_swap_gib == 0)
    throw o.error(o.has("allocator.cpu_swap_gib") ? "allocator.cpu_swap_gib" : "scheduler.preemption",
                  "scheduler.preemption: swap needs CPU swap space, but allocator.cpu_swap_gib is 0 (every "
                  "preemption would quietly recompute): set allocator.cpu_swap_gib > 0, or scheduler.preemption: "
                  "recompute");
  check_offload(a.offload_config, allocator_kind(kinds, a.kind).tiers, a.prefix_cache, a.cpu_swap_gib, o);
  check_pool_pairing(c, kinds, PoolCheck::kAfterSwapSpace);
  check_schedule_policy(c, kinds);
  check_fixed_prefix_cache(c, kinds);
  if (a.prefix_cache && !a.caches_prefixes())
    throw o.error("allocator.prefix_cache",
                  fmt::format("the prefix cache shares blocks of the paged allocator (or of the layer-group pools "
                              "uniform, hybrid, jenga); allocator.kind is '{}': set allocator.kind: paged, or "
                              "prefix_cache: false",
                              alloc::to_string(a.kind)));
  if (a.prefix_cache && c.workload.kind == traces::WorkloadKind::kSynthetic)
    throw o.error("allocator.prefix_cache",
                  "a synthetic workload has no token identities (hash_ids), so no prompt could ever hit the "
                  "prefix cache: replay a trace that carries them (workload.kind: trace, e.g. format: "
                  "mooncake), or set prefix_cache: false");
  // The paged pool reserves nothing up front; every other pool is held to a usable reservation.
  if (a.reservation.kind() == alloc::ReservationPolicy::Kind::kFixed && a.reservation.fixed_output_tokens() == 0 &&
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

// Checks of values against each other or against a range, at the key's line.
// The input paths of `c` (input_path.h), and whether the run reads each as configured
// (another kind's key is never read). C: ExperimentConfig, const or not.
template <class C>
auto input_paths_of(C& c) {
  using Value = std::conditional_t<std::is_const_v<C>, const std::string, std::string>;
  struct Input {
    const char* key;
    Value* value;
    InputKind kind;
    bool read;
  };
  auto& w = c.workload;
  const bool lengths_file = (w.kind == traces::WorkloadKind::kSynthetic || w.kind == traces::WorkloadKind::kSessions) &&
                            w.lengths.kind != traces::LengthsKind::kDistributions;
  auto& m = c.custom_model;
  return std::array<Input, 6>{{
      {"workload.trace.path", &w.trace.path, InputKind::kFile, w.kind == traces::WorkloadKind::kTrace},
      {"model.hf_config", &m.hf_config, InputKind::kFile, m.given && !m.hf_config.empty()},
      {"workload.lengths.path", &w.lengths.path, InputKind::kFile, lengths_file},
      {"cost.profile", &c.cost.profile, InputKind::kFile, c.cost.kind == CostModelKind::profile},
      {"cost.operators.tables", &c.cost.operators.tables, InputKind::kFolder, c.cost.kind == CostModelKind::operators},
      {"calibration", &c.calibration, InputKind::kFile, c.calibration != kNoCalibration},
  }};
}

// The folder `key`'s relative path resolves against: the working directory for a --set
// value, else the experiment file's folder.
std::filesystem::path input_base(const ConfigOrigin& origin, const char* key) {
  return experiment_dir(origin.given_without_line(key) ? std::string() : origin.file());
}

// Every input path of `c` that some folder holds, in its portable form (input_path.h); the
// others stay as written (check_input_paths names those the run reads).
void resolve_input_paths(ExperimentConfig& c) {
  for (const auto& in : input_paths_of(c)) {
    if (in.value->empty() || (in.value == &c.calibration && !in.read)) continue;
    if (const std::optional<std::string> found = find_input(*in.value, input_base(c.origin, in.key), in.kind))
      *in.value = *found;
  }
}

// speculative.acceptance: one probability (every position) or a list of them (position by
// position), into c.speculative.settings.acceptance.
void read_acceptance(const YAML::Node& root, ExperimentConfig& c) {
  const YAML::Node section = root["speculative"];
  if (!section || !section.IsMap()) return;
  const YAML::Node n = section["acceptance"];
  if (!n) return;
  const std::string key = "speculative.acceptance";
  const int line = YamlReader::line_of(n);
  c.origin.record(key, line);
  auto number = [&](const YAML::Node& v, const std::string& where) {
    double x = 0;
    try {
      if (!v.IsScalar()) throw YAML::Exception(YAML::Mark::null_mark(), "");
      x = v.as<double>();
    } catch (const YAML::Exception&) {
      throw ConfigError(c.origin.file(), YamlReader::line_of(v), where,
                        "expected an acceptance probability in [0, 1] (or a list of them, one per proposed position)");
    }
    return x;
  };
  std::vector<double>& out = c.speculative.settings.acceptance;
  out.clear();
  if (n.IsSequence()) {
    for (std::size_t i = 0; i < n.size(); ++i) out.push_back(number(n[i], key + "[" + std::to_string(i) + "]"));
  } else {
    out.push_back(number(n, key));
  }
}

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

// A copy of `n` made of new nodes, without source marks.
YAML::Node detached(const YAML::Node& n) {
  switch (n.Type()) {
    case YAML::NodeType::Scalar:
      return YAML::Node(n.Scalar());
    case YAML::NodeType::Sequence: {
      YAML::Node s(YAML::NodeType::Sequence);
      for (const auto& e : n) s.push_back(detached(e));
      return s;
    }
    case YAML::NodeType::Map: {
      YAML::Node m(YAML::NodeType::Map);
      for (const auto& kv : n) m[detached(kv.first)] = detached(kv.second);
      return m;
    }
    case YAML::NodeType::Null:
      return YAML::Node(YAML::NodeType::Null);
    default:
      return YAML::Node();
  }
}

// "a.b.c" -> {a, b, c}; an empty path or an empty key ("a..b", ".a", "a.") throws.
std::vector<std::string> split_path(const std::string& path, const std::string& origin) {
  std::vector<std::string> keys;
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = path.find('.', start);
    const std::string k = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (k.empty()) throw ConfigError(origin, 0, path, "empty key in the path (expected key.path=value)");
    keys.push_back(k);
    if (dot == std::string::npos) return keys;
    start = dot + 1;
  }
}

}  // namespace

std::int64_t parse_max_model_len(const std::string& text) {
  if (text == "off") return kMaxModelLenOff;
  if (text == "model") return kMaxModelLenOfModel;
  std::int64_t n = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (ec != std::errc() || end != text.data() + text.size() || n < 1)
    throw std::invalid_argument("expected off, model (the model's context length) or a number of tokens >= 1, "
                                "found '" + text + "'");
  return n;
}

std::string format_max_model_len(std::int64_t value) {
  if (value == kMaxModelLenOff) return "off";
  if (value == kMaxModelLenOfModel) return "model";
  return std::to_string(value);
}

bool ReplicasConfig::at_default() const {
  const RouterSettings d;
  return count == 1 && overrides.empty() && !disaggregated.enabled() && !global_cache.enabled && router.kind == d.kind &&
         router.balance_abs_threshold == d.balance_abs_threshold &&
         router.balance_rel_threshold == d.balance_rel_threshold && router.cache_threshold == d.cache_threshold;
}

void check_input_paths(const ExperimentConfig& c) {
  for (const auto& in : input_paths_of(c)) {
    if (!in.read || in.value->empty()) continue;
    const std::filesystem::path base = input_base(c.origin, in.key);
    if (!find_input(*in.value, base, in.kind)) throw c.origin.error(in.key, input_not_found(*in.value, base, in.kind));
  }
}

void check_experiment(const ExperimentConfig& c, const ServingKinds& kinds) {
  check_values(c, kinds);
  check_speculative(c, kinds);
  check_replicas(c, kinds);
}

const ExperimentConfig& replica_config(const ExperimentConfig& config, std::int64_t i) {
  for (const ReplicaOverride& o : config.replicas.overrides)
    if (o.index == i) return *o.config;
  return config;
}

namespace {
// parse_experiment of an experiment whose calibration, if any, is laid in already.
ExperimentConfig parse_settings(const YAML::Node& given, const std::string& file);
}  // namespace

ExperimentConfig parse_experiment(const YAML::Node& file_root, const std::string& file) {
  if (!file_root || !file_root.IsMap())
    throw ConfigError(file, YamlReader::line_of(file_root), "", "expected a YAML map of settings");
  CalibratedKeys calibrated;
  const YAML::Node given = apply_calibration(file_root, file, &calibrated);
  if (calibrated.keys.empty()) return parse_settings(given, file);
  try {
    return parse_settings(given, file);
  } catch (const ConfigError& e) {
    calibrated.rethrow(e);
  }
}

namespace {
ExperimentConfig parse_settings(const YAML::Node& given, const std::string& file) {
  YAML::Node root = given;
  if (const YAML::Node n = given["replicas"]; n && n.IsScalar()) {
    // `replicas: N` is short for `replicas: {count: N}` (the value keeps its line).
    root = fork_root(given);
    YAML::Node section(YAML::NodeType::Map);
    section["count"] = n;
    root["replicas"] = section;
  }
  ExperimentConfig c;
  c.origin = ConfigOrigin(file);
  YamlReader r(root, "", c.origin);
  visit(r, c);
  r.done();
  c.workload.seed = c.seed;
  c.workload.inference_perf.shared_prefix.question_distribution.given =
      c.origin.has("workload.inference_perf.shared_prefix.question_distribution");
  c.workload.inference_perf.shared_prefix.output_distribution.given =
      c.origin.has("workload.inference_perf.shared_prefix.output_distribution");
  c.client.enabled = c.origin.has("client");
  c.lora.enabled = c.origin.has("lora");
  if (c.custom_model.given) complete_custom_model(c.model, c.custom_model, c.origin);
  // What scheduler.kind implies (sglang: allocator.kind radix with pages of 1 token; vllm-v1:
  // prefix caching, as vLLM v1 turns it on by default) where the file leaves the keys out.
  apply_kind_defaults(c, kServingKinds);
  c.replicas.router.seed = c.seed;
  c.replicas.global_cache.enabled = c.origin.has("replicas.global_cache");
  read_acceptance(root, c);
  // vLLM keeps a draft model's and an EAGLE head's KV in the target's KV budget.
  if (!c.origin.has("speculative.draft_kv") && (c.speculative.settings.method == SpeculativeMethod::kDraftModel ||
                                                 c.speculative.settings.method == SpeculativeMethod::kEagle))
    c.speculative.settings.draft_kv = DraftKvPlacement::kShared;
  check_values(c, kServingKinds);
  check_speculative(c, kServingKinds);
  resolve_input_paths(c);
  parse_replica_overrides(root, file, c);
  check_replicas(c, kServingKinds);
  return c;
}
}  // namespace

YAML::Node to_yaml(const ExperimentConfig& config, bool every_field) {
  ExperimentConfig c = config;  // the visitors take non-const references
  YAML::Node root(YAML::NodeType::Map);
  YamlWriter w(root, every_field);
  visit(w, c);
  // A pool that is its cache has one cache and one eviction order (radix): the reader refuses
  // the two keys (prefix_cache: false, any eviction) there, so a resolved config leaves them out.
  if (allocator_kind(kServingKinds, c.allocator.kind).prefix_caching == PrefixCaching::kAlways) {
    root["allocator"].remove("prefix_cache");
    root["allocator"].remove("eviction");
  }
  if (root["speculative"]) {
    const std::vector<double>& a = c.speculative.settings.acceptance;
    if (a.size() == 1) {
      root["speculative"]["acceptance"] = YamlWriter::yaml_number(a.front());
    } else {
      YAML::Node list(YAML::NodeType::Sequence);
      for (double p : a) list.push_back(YamlWriter::yaml_number(p));
      root["speculative"]["acceptance"] = list;
    }
  }
  if (!c.replicas.overrides.empty()) {
    // Each replica's settings in full (not only the keys its entry gave).
    YAML::Node list(YAML::NodeType::Sequence);
    for (const ReplicaOverride& o : c.replicas.overrides) {
      const YAML::Node all = to_yaml(*o.config, every_field);
      YAML::Node entry(YAML::NodeType::Map);
      entry["index"] = o.index;
      for (const char* k : kOverridableKeys)
        if (all[k]) entry[k] = all[k];
      list.push_back(entry);
    }
    root["replicas"]["overrides"] = list;
  }
  return root;
}

std::vector<KeyInfo> experiment_keys() {
  ExperimentConfig c;
  KeySchemaBuilder b;
  visit(b, c);
  // A custom model's name defaults to its config file's name or "custom", not the preset's.
  for (KeyInfo& k : b.keys())
    if (k.key == "model")
      for (KeyInfo& m : k.children)
        if (m.key == "name") m.default_text.clear();
  return std::move(b.keys());
}

YAML::Node load_yaml_file(const std::string& file) {
  std::ifstream in(file);
  if (!in) throw ConfigError(file, 0, "", "cannot open the file");
  std::ostringstream text;
  text << in.rdbuf();
  return load_yaml_document(text.str(), file);
}

void apply_override(YAML::Node& root, const std::string& assignment) {
  const auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0)
    throw ConfigError("--set", 0, assignment, "expected key.path=value");
  const std::string path = assignment.substr(0, eq);
  YAML::Node value;
  try {
    value = YAML::Load(assignment.substr(eq + 1));
  } catch (const YAML::Exception& e) {
    throw ConfigError("--set", 0, path, "value is not valid YAML: " + describe_yaml_error(e));
  }
  // Without the marks of the --set text, which would read as lines of the experiment file.
  set_path(root, path, detached(value), "--set");
}

YAML::Node fork_root(const YAML::Node& root) {
  YAML::Node copy(YAML::NodeType::Map);
  if (root && root.IsMap())
    for (const auto& kv : root) copy[kv.first] = kv.second;  // shares the entries
  return copy;
}

void set_path(YAML::Node& root, const std::string& path, const YAML::Node& value, const std::string& origin) {
  const std::vector<std::string> keys = split_path(path, origin);
  if (!root || root.IsNull()) root.reset(YAML::Node(YAML::NodeType::Map));
  if (!root.IsMap()) throw ConfigError(origin, 0, path, "cannot set a key: the experiment is not a map of settings");
  // The maps along the path are replaced by copies and nothing below them is written to, so
  // roots sharing subtrees with this one (fork_root) stay as they are, and nodes read from a
  // file keep their line numbers. Two yaml-cpp rules shape the walk: assigning to a Node
  // writes through to the node it refers to (handles move with reset()), and nodes must be
  // created through `root`'s own handles, or the memory that owns them can be freed while
  // the tree still points to them.
  YAML::Node parent;
  parent.reset(root);
  for (std::size_t i = 0; i + 1 < keys.size(); ++i) {
    const YAML::Node& cparent = parent;
    const YAML::Node current = cparent[keys[i]];
    if (current && !current.IsNull() && !current.IsMap())
      throw ConfigError(origin, 0, path, "'" + keys[i] + "' is not a section");
    std::vector<std::pair<YAML::Node, YAML::Node>> entries;
    if (current && current.IsMap())
      for (const auto& kv : current) entries.emplace_back(kv.first, kv.second);
    parent[keys[i]] = YAML::Node(YAML::NodeType::Map);
    YAML::Node section = parent[keys[i]];
    for (const auto& [k, v] : entries) section[k] = v;  // shares the entries
    parent.reset(section);
  }
  parent[keys.back()] = value;
}

}  // namespace pagesim::sim
