#include "sim/config/experiment_fields.h"

#include <cstdint>
#include <string>

#include "sim/config/calibration.h"
#include "sim/config/config_origin.h"
#include "sim/config/experiment_checks.h"

namespace pagesim::sim {
namespace {

// One visit() per section: V is YamlReader, YamlWriter or KeySchemaBuilder.
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

// cost: each cost.kind's keys (own: the kind chosen; kind_alternatives.h). iteration_overhead_s
// is the roofline's and the profile's: one meaning for both.
constexpr const char* kIterationOverheadMeaning =
    "roofline: fixed seconds per iteration (< 0: the GPU preset's); profile: host seconds added";

template <class V>
void visit(V& v, RooflineCostSettings& s, bool) {
  v.field("compute_efficiency", "roofline: fraction of peak FLOPS reached (< 0: the GPU preset's)",
          s.compute_efficiency);
  v.field("memory_efficiency", "roofline: fraction of peak memory bandwidth reached (< 0: the GPU preset's)",
          s.memory_efficiency);
  v.field("iteration_overhead_s", kIterationOverheadMeaning, s.iteration_overhead_s);
}

template <class V>
void visit(V& v, ConstantCostCoefficients& k, bool) {
  v.section("constant", [&](auto& q) {
    q.field("seconds_per_iteration", "constant: seconds per iteration", k.seconds_per_iteration);
    q.field("seconds_per_prefill_token", "constant: seconds per prefill token", k.seconds_per_prefill_token);
    q.field("seconds_per_decode_seq", "constant: seconds per decoding sequence", k.seconds_per_decode_seq);
    q.field("seconds_per_decode_context_token", "constant: seconds per context token of a decoding sequence",
            k.seconds_per_decode_context_token);
    q.field("seconds_per_swap_block", "constant: seconds per swapped block", k.seconds_per_swap_block);
    q.field("seconds_per_swap_token", "constant: seconds per swapped token", k.seconds_per_swap_token);
  });
}

template <class V>
void visit(V& v, ProfileCostSettings& s, bool) {
  v.field("iteration_overhead_s", kIterationOverheadMeaning, s.iteration_overhead_s);
  v.field("profile", "profile: the measured profile CSV (pagesim profile)", s.profile);
}

// Written under cost.kind operators only, so other kinds' config.resolved.yaml stay as they
// were before it.
template <class V>
void visit(V& v, OperatorsCostSettings& s, bool own) {
  v.section_omitted_at_default("operators", !own, [&](auto& q) {
    q.field("tables", "operators: the tables' folder, one GPU/ENGINE/ folder each (empty: the source tree's)",
            s.tables);
    q.field("engine", "operators: the serving engine and version the tables measured", s.engine);
    q.field("gpu", "operators: the tables' GPU folder (empty: from the gpu preset)", s.gpu);
    q.field("cuda_graph_max_size", "operators: largest CUDA-graph batch, tokens (-1: vLLM's default; 0: none)",
            s.cuda_graph_max_size);
    q.field("gpu_scale", "operators: multiplies the summed operator time (a calibration factor)", s.gpu_scale);
    q.field("memory_ops", "operators: price the memory-bound kernels no table holds (norms, activation, embedding)",
            s.memory_ops);
  });
  v.section_omitted_at_default("host", !own, [&](auto& q) {
    q.field("step_s", "host seconds per non-empty iteration", s.host_step_s);
    q.field("per_seq_s", "host seconds per scheduled sequence", s.host_per_seq_s);
  });
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
             c.allocator.contiguous.reservation, alloc::ReservationPolicy::parse,
             [](const alloc::ReservationPolicy& p) { return p.to_string(); });
    a.choice("placement", "contiguous: where a request's range goes in the pool",
             c.allocator.contiguous.placement, alloc::kPlacementKindNames);
    a.field("max_seq_len", "contiguous: reservation cap per request, tokens", c.allocator.max_seq_len);
    a.field("max_chunk_blocks", "contiguous buddy: largest chunk, blocks", c.allocator.contiguous.max_chunk_blocks);
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
    k.kinds("kind", "how iteration times are computed", c.cost, kCostModelKindNames,
            [](auto& q, auto& settings, bool own) { visit(q, settings, own); }, cost_key_refusal);
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
                               "latency values held in memory per metric before spilling to a temporary file "
                               "(shared by a cluster's replicas, at least 64 each)",
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
    DisaggregationSettings& d = c.replicas.disaggregated;
    r.section_omitted_at_default("disaggregated", !d.enabled(), [&](auto& q) {
      q.field("prefill", "disaggregated: prefill replicas (the first ones); the rest decode", d.prefill);
      q.field("transfer_gbps", "disaggregated: KV transfer bandwidth, Gbit/s", d.transfer_gbps);
      q.field("transfer_latency_us", "disaggregated: fixed cost per transfer, microseconds", d.transfer_latency_us);
      q.choice("decode_router", "disaggregated: how the decode replica of each hand-off is picked",
               d.decode_router, kRouterKindNames);
    });
    GlobalCacheSettings& g = c.replicas.global_cache;
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
  v.section_omitted_at_default("engine", c.engine == AdvanceSettings{}, [&](auto& q) {
    q.field("skip_decode_runs", "advance runs of identical decode iterations at once (same outputs)",
            c.engine.skip_decode_runs);
    q.field("compact_waiting", "keep arrivals behind a long queue in a compact backlog (same outputs)",
            c.engine.compact_waiting);
    q.field_omitted_at_default("backlog_in_memory", "backlog entries held in memory per replica (0: all)",
                               c.engine.backlog_in_memory, AdvanceSettings{}.backlog_in_memory);
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

}  // namespace

void visit_experiment_fields(YamlReader& r, ExperimentConfig& c) { visit(r, c); }
void visit_experiment_fields(YamlWriter& w, ExperimentConfig& c) { visit(w, c); }
void visit_experiment_fields(KeySchemaBuilder& b, ExperimentConfig& c) { visit(b, c); }

}  // namespace pagesim::sim
