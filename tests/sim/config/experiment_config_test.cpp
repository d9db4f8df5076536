// Experiment configs: defaults, the to_yaml() round trip, errors that name file:line, the
// dotted key and what was expected, and --set overrides.
#include "sim/config/experiment_config.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <variant>
#include <vector>

#include "sim/config/config_error.h"
#include "sim/config/enum_names.h"
#include "sim/config/kind_alternatives.h"
#include "throws_config_error.h"

namespace pagesim::sim {
namespace {

namespace fs = std::filesystem;

constexpr const char* kFile = "exp.yaml";

ExperimentConfig parse(const std::string& yaml) { return parse_experiment(YAML::Load(yaml), kFile); }

std::string emit(const YAML::Node& n) {
  YAML::Emitter e;
  e << n;
  return e.c_str();
}

// Parses `yaml` expecting a ConfigError on `key` at `line` (0: no line) whose message holds
// every word of `words`, and reads "exp.yaml:<line>: <key>: ...".
::testing::AssertionResult fails_with(const YAML::Node& root, int line, const std::string& key,
                                      const std::vector<std::string>& words) {
  return testing::throws_config_error([&] { parse_experiment(root, kFile); }, kFile, line, key, words);
}

::testing::AssertionResult fails_with(const std::string& yaml, int line, const std::string& key,
                                      const std::vector<std::string>& words) {
  return fails_with(YAML::Load(yaml), line, key, words);
}

// ---- Defaults ----

TEST(ExperimentConfig, DefaultsDescribeTheVllmPaperSetting) {
  const ExperimentConfig c = parse("name: defaults\n");
  EXPECT_EQ(c.name, "defaults");
  EXPECT_EQ(c.seed, 0u);
  EXPECT_EQ(c.model, "opt-13b");
  EXPECT_EQ(c.gpu, "a100-40gb");
  EXPECT_EQ(c.tensor_parallel, 1);
  EXPECT_EQ(c.kv.slots, 0);  // derived from GPU memory (15,728 for OPT-13B on an A100-40GB)
  EXPECT_DOUBLE_EQ(c.kv.gpu_memory_utilization, 0.9);
  EXPECT_EQ(c.allocator.kind, alloc::AllocatorKind::kPaged);
  EXPECT_EQ(c.allocator.block_size, 16);
  EXPECT_EQ(c.allocator.contiguous.reservation, alloc::ReservationPolicy::max());
  EXPECT_EQ(c.allocator.contiguous.placement, alloc::PlacementKind::kBuddy);
  EXPECT_EQ(c.allocator.max_seq_len, 2048);
  EXPECT_EQ(c.allocator.contiguous.max_chunk_blocks, 128);
  EXPECT_FALSE(c.allocator.prefix_cache);
  EXPECT_EQ(c.allocator.eviction, alloc::EvictionKind::kLru);
  EXPECT_DOUBLE_EQ(c.allocator.cpu_swap_gib, 20);
  EXPECT_EQ(c.scheduler.kind, SchedulerKind::kVllm);
  EXPECT_EQ(c.scheduler.max_num_batched_tokens, 2560);
  EXPECT_EQ(c.scheduler.max_num_seqs, 256);
  EXPECT_DOUBLE_EQ(c.scheduler.watermark, 0.01);
  EXPECT_EQ(c.scheduler.preemption, PreemptionMode::kAuto);
  EXPECT_EQ(kind_of(c.cost), CostModelKind::roofline);
  EXPECT_EQ(c.measure.window_start_s, 0);
  EXPECT_TRUE(std::isinf(c.measure.window_end_s));
  EXPECT_EQ(c.output.iterations_stride, 1);
  EXPECT_TRUE(c.output.requests_csv);
  EXPECT_EQ(c.workload.kind, traces::WorkloadKind::kSynthetic);
  EXPECT_TRUE(c.workload.sampling.empty());
  EXPECT_EQ(c.beam.model, BeamModelKind::kNeutral);
  EXPECT_DOUBLE_EQ(c.beam.mean_entropy_nats, 1.0);
}

TEST(ExperimentConfig, SeedReachesTheWorkload) {
  const ExperimentConfig c = parse("seed: 1234\n");
  EXPECT_EQ(c.seed, 1234u);
  EXPECT_EQ(c.workload.seed, 1234u);
}

// ---- Round trip ----

void expect_same(const traces::LengthSpec& a, const traces::LengthSpec& b) {
  EXPECT_EQ(a.kind, b.kind);
  EXPECT_EQ(a.value, b.value);
  EXPECT_EQ(a.lo, b.lo);
  EXPECT_EQ(a.hi, b.hi);
  EXPECT_EQ(a.median, b.median);
  EXPECT_EQ(a.mean, b.mean);
  EXPECT_EQ(a.sigma, b.sigma);
  EXPECT_EQ(a.s, b.s);
}

void expect_same(const ExperimentConfig& a, const ExperimentConfig& b) {
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.seed, b.seed);
  const auto &wa = a.workload, &wb = b.workload;
  EXPECT_EQ(wa.kind, wb.kind);
  EXPECT_EQ(wa.trace.path, wb.trace.path);
  EXPECT_EQ(wa.trace.format, wb.trace.format);
  EXPECT_EQ(wa.trace.hash_block_tokens, wb.trace.hash_block_tokens);
  EXPECT_EQ(wa.trace.time_scale, wb.trace.time_scale);
  EXPECT_EQ(wa.arrival.kind, wb.arrival.kind);
  EXPECT_EQ(wa.arrival.rate, wb.arrival.rate);
  EXPECT_EQ(wa.arrival.quantum_s, wb.arrival.quantum_s);
  EXPECT_EQ(wa.arrival.cv, wb.arrival.cv);
  EXPECT_EQ(wa.arrival.on_s, wb.arrival.on_s);
  EXPECT_EQ(wa.arrival.off_s, wb.arrival.off_s);
  EXPECT_EQ(wa.lengths.kind, wb.lengths.kind);
  expect_same(wa.lengths.prompt, wb.lengths.prompt);
  expect_same(wa.lengths.output, wb.lengths.output);
  EXPECT_EQ(wa.lengths.path, wb.lengths.path);
  EXPECT_EQ(wa.lengths.columns.prompt, wb.lengths.columns.prompt);
  EXPECT_EQ(wa.lengths.columns.output, wb.lengths.columns.output);
  EXPECT_EQ(wa.oversize, wb.oversize);
  ASSERT_EQ(wa.sampling.size(), wb.sampling.size());
  for (std::size_t i = 0; i < wa.sampling.size(); ++i) {
    EXPECT_EQ(wa.sampling[i].weight, wb.sampling[i].weight);
    EXPECT_EQ(wa.sampling[i].n, wb.sampling[i].n);
    EXPECT_EQ(wa.sampling[i].beam_width, wb.sampling[i].beam_width);
  }
  EXPECT_EQ(wa.max_total_tokens, wb.max_total_tokens);
  EXPECT_EQ(wa.duration_s, wb.duration_s);
  EXPECT_EQ(wa.max_requests, wb.max_requests);
  EXPECT_EQ(wa.seed, wb.seed);
  EXPECT_EQ(a.model, b.model);
  EXPECT_EQ(a.gpu, b.gpu);
  EXPECT_EQ(a.tensor_parallel, b.tensor_parallel);
  EXPECT_EQ(a.kv_dtype, b.kv_dtype);
  EXPECT_EQ(a.kv.slots, b.kv.slots);
  EXPECT_EQ(a.kv.gpu_memory_utilization, b.kv.gpu_memory_utilization);
  EXPECT_EQ(a.kv.activation_reserve_gib, b.kv.activation_reserve_gib);
  EXPECT_EQ(a.allocator.kind, b.allocator.kind);
  EXPECT_EQ(a.allocator.block_size, b.allocator.block_size);
  EXPECT_EQ(a.allocator.contiguous.reservation, b.allocator.contiguous.reservation);
  EXPECT_EQ(a.allocator.contiguous.placement, b.allocator.contiguous.placement);
  EXPECT_EQ(a.allocator.max_seq_len, b.allocator.max_seq_len);
  EXPECT_EQ(a.allocator.contiguous.max_chunk_blocks, b.allocator.contiguous.max_chunk_blocks);
  EXPECT_EQ(a.allocator.prefix_cache, b.allocator.prefix_cache);
  EXPECT_EQ(a.allocator.eviction, b.allocator.eviction);
  EXPECT_EQ(a.allocator.cpu_swap_gib, b.allocator.cpu_swap_gib);
  EXPECT_EQ(a.scheduler.kind, b.scheduler.kind);
  EXPECT_EQ(a.scheduler.max_num_batched_tokens, b.scheduler.max_num_batched_tokens);
  EXPECT_EQ(a.scheduler.max_num_seqs, b.scheduler.max_num_seqs);
  EXPECT_EQ(a.scheduler.watermark, b.scheduler.watermark);
  EXPECT_EQ(a.scheduler.preemption, b.scheduler.preemption);
  EXPECT_EQ(a.scheduler.chunk_tokens, b.scheduler.chunk_tokens);
  EXPECT_EQ(a.beam.model, b.beam.model);
  EXPECT_EQ(a.beam.mean_entropy_nats, b.beam.mean_entropy_nats);
  EXPECT_TRUE(a.cost == b.cost);  // the kind and its settings
  EXPECT_EQ(a.measure.window_start_s, b.measure.window_start_s);
  EXPECT_EQ(a.measure.window_end_s, b.measure.window_end_s);
  EXPECT_EQ(a.output.iterations_stride, b.output.iterations_stride);
  EXPECT_EQ(a.output.requests_csv, b.output.requests_csv);
}

// Through text, as config.resolved.yaml is written and read back.
ExperimentConfig round_trip(const ExperimentConfig& c) { return parse(emit(to_yaml(c))); }

TEST(ExperimentConfig, DefaultsRoundTrip) {
  const ExperimentConfig c = parse("{}");
  const ExperimentConfig back = round_trip(c);
  expect_same(c, back);
  EXPECT_TRUE(std::isinf(back.measure.window_end_s));
  // to_yaml writes every section and field.
  const YAML::Node y = to_yaml(c);
  for (const char* k : {"name", "seed", "workload", "model", "gpu", "tensor_parallel", "kv", "allocator", "scheduler",
                        "beam", "cost", "measure", "output"})
    EXPECT_TRUE(y[k]) << k;
  EXPECT_FALSE(y["sweep"]);
  EXPECT_TRUE(y["workload"]["lengths"]["prompt"]["sigma"]);
  EXPECT_TRUE(y["cost"]["constant"]["seconds_per_swap_token"]);
}

// Every field set away from its default, in every section.
constexpr const char* kEverySection = R"(
name: everything
seed: 18446744073709551615
workload:
  kind: trace
  trace: {path: traces/x.jsonl, format: mooncake, hash_block_tokens: 256, time_scale: 0.5}
  arrival: {kind: burst, rate: 3.5, quantum_s: 0.02, cv: 2.5, on_s: 4, off_s: 6}
  lengths:
    kind: empirical
    prompt: {kind: lognormal, value: 7, lo: 3, hi: 4000, median: 300, mean: 0, sigma: 0.75, s: 1.5}
    output: {kind: zipf, value: 9, lo: 2, hi: 900, median: 0, mean: 120, sigma: 0.5, s: 1.25}
    path: lengths.csv
    prompt_column: in
    output_column: out
  sampling:
    - {weight: 0.25, n: 4, beam_width: 1}
    - {weight: 0.75, n: 1, beam_width: 3}
  max_total_tokens: 4096
  duration_s: 123.25
  max_requests: 77
  oversize: truncate
model: llama-2-7b
gpu: h100-sxm
tensor_parallel: 2
kv: {slots: 4096, gpu_memory_utilization: 0.8, activation_reserve_gib: 1.5}
allocator:
  kind: paged  # contiguous would refuse prefix_cache; its own keys: ContiguousKeysRoundTrip
  block_size: 32
  prefix_cache: true
  eviction: fifo
  cpu_swap_gib: 4.5
scheduler: {kind: sarathi, max_num_batched_tokens: 4096, max_num_seqs: 64, watermark: 0.05, preemption: swap, chunk_tokens: 256}
beam: {model: scores, mean_entropy_nats: 0.75}
cost:
  kind: roofline
  compute_efficiency: 0.5
  memory_efficiency: 0.6
  iteration_overhead_s: 0.002
measure: {window_start_s: 12.5, window_end_s: 99.75}
output: {iterations_stride: 10, requests_csv: false}
)";

TEST(ExperimentConfig, EverySectionRoundTrips) {
  const ExperimentConfig c = parse(kEverySection);
  // The values were read (spot checks of each section against the text).
  EXPECT_EQ(c.seed, std::numeric_limits<std::uint64_t>::max());
  EXPECT_EQ(c.workload.kind, traces::WorkloadKind::kTrace);
  EXPECT_EQ(c.workload.trace.format, traces::TraceFormat::kMooncake);
  EXPECT_EQ(c.workload.arrival.kind, traces::ArrivalKind::kBurst);
  EXPECT_EQ(c.workload.lengths.kind, traces::LengthsKind::kEmpirical);
  EXPECT_EQ(c.workload.lengths.prompt.kind, traces::LengthKind::kLognormal);
  EXPECT_EQ(c.workload.lengths.output.s, 1.25);
  EXPECT_EQ(c.workload.lengths.columns.output, "out");
  ASSERT_EQ(c.workload.sampling.size(), 2u);
  EXPECT_EQ(c.workload.sampling[1].beam_width, 3);
  EXPECT_EQ(c.workload.max_requests, 77u);
  EXPECT_EQ(c.workload.oversize, traces::OversizePolicy::kTruncate);
  EXPECT_EQ(c.tensor_parallel, 2);
  EXPECT_EQ(c.kv.activation_reserve_gib, 1.5);
  EXPECT_EQ(c.allocator.eviction, alloc::EvictionKind::kFifo);
  EXPECT_EQ(c.scheduler.kind, SchedulerKind::kSarathi);
  EXPECT_EQ(c.scheduler.preemption, PreemptionMode::kSwap);
  EXPECT_EQ(c.scheduler.chunk_tokens, 256);
  EXPECT_EQ(c.beam.model, BeamModelKind::kScores);
  EXPECT_EQ(c.beam.mean_entropy_nats, 0.75);
  EXPECT_EQ(std::get<RooflineCostSettings>(c.cost).memory_efficiency, 0.6);
  EXPECT_EQ(c.measure.window_end_s, 99.75);
  EXPECT_EQ(c.output.iterations_stride, 10);
  EXPECT_FALSE(c.output.requests_csv);

  expect_same(c, round_trip(c));
  expect_same(c, parse_experiment(to_yaml(c), kFile));  // also without going through text
  // Writing again gives the same text (config.resolved.yaml is stable).
  EXPECT_EQ(emit(to_yaml(c)), emit(to_yaml(round_trip(c))));
}

// The contiguous layout's own keys (kEverySection's pool is paged, which refuses them).
TEST(ExperimentConfig, ContiguousKeysRoundTrip) {
  const ExperimentConfig c = parse(
      "allocator: {kind: contiguous, reservation: fixed:64, placement: best_fit, max_seq_len: 4096, "
      "max_chunk_blocks: 64}\nscheduler: {kind: orca}\n");
  EXPECT_EQ(c.allocator.contiguous.reservation, alloc::ReservationPolicy::fixed(64));
  EXPECT_EQ(c.allocator.contiguous.placement, alloc::PlacementKind::kBestFit);
  EXPECT_EQ(c.allocator.max_seq_len, 4096);
  EXPECT_EQ(c.allocator.contiguous.max_chunk_blocks, 64);
  expect_same(c, round_trip(c));
  EXPECT_EQ(emit(to_yaml(c)), emit(to_yaml(round_trip(c))));
}

// The keys of the other cost kinds (kEverySection has the roofline's), each with its kind.
TEST(ExperimentConfig, CostKeysOfEachKindRoundTrip) {
  const ExperimentConfig constant = parse(
      "cost:\n"
      "  kind: constant\n"
      "  constant: {seconds_per_iteration: 0.01, seconds_per_prefill_token: 1.0e-5, seconds_per_decode_seq: 2.0e-4, "
      "seconds_per_decode_context_token: 3.0e-7, seconds_per_swap_block: 1.0e-3, seconds_per_swap_token: 2.0e-6}\n");
  EXPECT_EQ(std::get<ConstantCostCoefficients>(constant.cost).seconds_per_decode_context_token, 3.0e-7);
  EXPECT_EQ(std::get<ConstantCostCoefficients>(constant.cost).seconds_per_swap_token, 2.0e-6);
  expect_same(constant, round_trip(constant));
  const ExperimentConfig profile = parse("cost: {kind: profile, profile: prof.csv, iteration_overhead_s: 0.004}\n");
  EXPECT_EQ(std::get<ProfileCostSettings>(profile.cost).profile, "prof.csv");
  EXPECT_EQ(std::get<ProfileCostSettings>(profile.cost).iteration_overhead_s, 0.004);
  expect_same(profile, round_trip(profile));
  // config.resolved.yaml writes the other kinds' keys at their defaults (but operators'), in
  // one order whichever kind is chosen, as it did before each kind had its own settings.
  const std::string constant_at_default =
      "constant:\n  seconds_per_iteration: 0\n  seconds_per_prefill_token: 0\n  seconds_per_decode_seq: 0\n"
      "  seconds_per_decode_context_token: 0\n  seconds_per_swap_block: 0\n  seconds_per_swap_token: 0\n";
  EXPECT_EQ(emit(to_yaml(profile)["cost"]),
            "kind: profile\ncompute_efficiency: -1\nmemory_efficiency: -1\niteration_overhead_s: 0.004\n" +
                constant_at_default + "profile: prof.csv")
      << emit(to_yaml(profile)["cost"]);
  EXPECT_EQ(emit(to_yaml(ExperimentConfig{})["cost"]),
            "kind: roofline\ncompute_efficiency: -1\nmemory_efficiency: -1\niteration_overhead_s: -1\n" +
                constant_at_default + "profile: \"\"");
}

// A key only another cost.kind reads is refused, naming it; so is a constant model whose
// iterations would take no time. Defaults written by config.resolved.yaml are not "set".
TEST(ConfigErrors, CostKeysOfAnotherKind) {
  EXPECT_TRUE(fails_with("cost:\n  kind: constant\n  constant: {seconds_per_iteration: 0.1}\n  compute_efficiency: 0.5\n",
                         4, "cost.compute_efficiency", {"roofline", "cost.kind is 'constant'"}));
  EXPECT_TRUE(fails_with("cost:\n  kind: profile\n  profile: p.csv\n  memory_efficiency: 0.7\n", 4,
                         "cost.memory_efficiency", {"roofline", "cost.kind is 'profile'"}));
  EXPECT_TRUE(fails_with("cost:\n  kind: constant\n  constant: {seconds_per_iteration: 0.1}\n  iteration_overhead_s: 0\n",
                         4, "cost.iteration_overhead_s", {"cost.constant.seconds_per_iteration"}));
  EXPECT_TRUE(fails_with("cost:\n  kind: roofline\n  constant: {seconds_per_swap_block: 0.001}\n", 3, "cost.constant",
                         {"cost.kind constant", "cost.kind is 'roofline'"}));
  EXPECT_TRUE(fails_with("cost:\n  kind: roofline\n  profile: p.csv\n", 3, "cost.profile",
                         {"cost.kind profile", "cost.kind is 'roofline'"}));
  EXPECT_TRUE(fails_with("cost:\n  kind: constant\n", 2, "cost.constant", {"are all 0", "at least one of them > 0"}));
  EXPECT_TRUE(fails_with("cost:\n  kind: profile\n", 2, "cost.profile", {"expected cost.profile: PATH"}));
  EXPECT_TRUE(fails_with("cost:\n  kind: constant\n  constant: {seconds_per_swap_block: 0.5}\n", 3, "cost.constant",
                         {"are all 0"}));
  // Allowed: the roofline's keys under the roofline, the overhead under a profile, and every
  // key at its default (as config.resolved.yaml writes them) under any kind.
  EXPECT_EQ(std::get<ProfileCostSettings>(parse("cost: {kind: profile, profile: p.csv, iteration_overhead_s: 0.002}\n").cost)
                .iteration_overhead_s,
            0.002);
  const ExperimentConfig c = parse("cost: {kind: constant, constant: {seconds_per_decode_seq: 0.001}}\n");
  expect_same(c, round_trip(c));
}

// cost.kind operators: its sections read, written back under that kind only (so every other
// kind's config.resolved.yaml stays as it was), and refused under another kind.
TEST(ExperimentConfig, OperatorsCostKeysRoundTripAndAreOmittedForOtherKinds) {
  EXPECT_TRUE(parse("cost: {kind: operators}\n").cost == CostSettings{OperatorsCostSettings{}});
  const OperatorsCostSettings d;
  EXPECT_EQ(d.engine, "vllm-0.14.0");
  EXPECT_EQ(d.tables, "");
  EXPECT_EQ(d.gpu, "");
  EXPECT_EQ(d.cuda_graph_max_size, -1);
  EXPECT_EQ(d.gpu_scale, 1.0);
  EXPECT_EQ(d.host_step_s, 0.0);
  EXPECT_EQ(d.host_per_seq_s, 0.0);
  const ExperimentConfig c = parse(
      "cost:\n"
      "  kind: operators\n"
      "  operators: {tables: t, engine: vllm-0.14.0, gpu: l40s, cuda_graph_max_size: 64, gpu_scale: 1.1}\n"
      "  host: {step_s: 0.002, per_seq_s: 1.0e-5}\n");
  const auto& op = std::get<OperatorsCostSettings>(c.cost);
  EXPECT_EQ(op.gpu, "l40s");
  EXPECT_EQ(op.cuda_graph_max_size, 64);
  EXPECT_EQ(op.host_per_seq_s, 1.0e-5);
  expect_same(c, round_trip(c));
  const YAML::Node y = to_yaml(c);
  EXPECT_TRUE(y["cost"]["operators"]);
  EXPECT_TRUE(y["cost"]["host"]);
  for (const char* kind : {"roofline", "constant", "profile"}) {
    ExperimentConfig other = parse("{}");
    choose_alternative(kCostModelKindNames, *find_enum(kCostModelKindNames, kind), other.cost);
    const YAML::Node o = to_yaml(other);
    EXPECT_FALSE(o["cost"]["operators"]) << kind;
    EXPECT_FALSE(o["cost"]["host"]) << kind;
  }
}

TEST(ConfigErrors, OperatorsCostKeys) {
  EXPECT_TRUE(fails_with("cost:\n  kind: roofline\n  operators: {gpu: h100_sxm}\n", 3, "cost.operators",
                         {"cost.kind operators", "cost.kind is 'roofline'"}));
  // Given at their defaults they are still refused: they would do nothing.
  EXPECT_TRUE(fails_with("cost:\n  kind: profile\n  profile: p.csv\n  host: {step_s: 0}\n", 4, "cost.host",
                         {"host time", "cost.kind is 'profile'"}));
  EXPECT_TRUE(fails_with("cost:\n  kind: operators\n  iteration_overhead_s: 0.001\n", 3, "cost.iteration_overhead_s",
                         {"cost.host.step_s"}));
  EXPECT_TRUE(fails_with("cost:\n  kind: operators\n  compute_efficiency: 0.5\n", 3, "cost.compute_efficiency",
                         {"roofline", "cost.kind is 'operators'"}));
  EXPECT_TRUE(fails_with("cost:\n  kind: operators\n  operators: {colour: red}\n", 3, "cost.operators.colour",
                         {"unknown key", "gpu_scale"}));
  EXPECT_TRUE(fails_with("cost:\n  kind: operators\n  operators: {gpu_scale: 0}\n", 3, "cost.operators.gpu_scale",
                         {"> 0"}));
  EXPECT_TRUE(fails_with("cost:\n  kind: operators\n  operators: {cuda_graph_max_size: -2}\n", 3,
                         "cost.operators.cuda_graph_max_size", {"-1", "0 (no CUDA graphs)"}));
  EXPECT_TRUE(fails_with("cost:\n  kind: operators\n  host: {per_seq_s: -1}\n", 3, "cost.host.per_seq_s",
                         {">= 0"}));
  EXPECT_TRUE(fails_with("cost:\n  kind: operators\n  host: {step: 1}\n", 3, "cost.host.step", {"unknown key"}));
}

// The sessions section: read, written back for a sessions workload, and left out of every
// other workload's config.resolved.yaml (which therefore stays as it was before sessions).
TEST(ExperimentConfig, SessionsSectionRoundTripsAndIsOmittedForOtherKinds) {
  const ExperimentConfig c = parse(
      "workload:\n"
      "  kind: sessions\n"
      "  max_requests: 10\n"
      "  sessions:\n"
      "    turns: {kind: uniform, lo: 2, hi: 9}\n"
      "    think_time: {kind: lognormal, median_s: 12.5, sigma: 0.5, hi_s: 300}\n"
      "    system_prompts: 4\n"
      "    system_prompt_tokens: {kind: fixed, value: 700}\n"
      "    block_tokens: 32\n"
      "    max_context_tokens: 8192\n");
  const traces::SessionsSpec& s = c.workload.sessions;
  EXPECT_EQ(c.workload.kind, traces::WorkloadKind::kSessions);
  EXPECT_EQ(s.turns.hi, 9);
  EXPECT_EQ(s.think_time.kind, traces::ThinkTimeKind::kLognormal);
  EXPECT_EQ(s.think_time.median_s, 12.5);
  EXPECT_EQ(s.think_time.hi_s, 300);
  EXPECT_EQ(s.system_prompts, 4);
  EXPECT_EQ(s.system_prompt_tokens.value, 700);
  EXPECT_EQ(s.block_tokens, 32);
  EXPECT_EQ(s.max_context_tokens, 8192);
  const ExperimentConfig back = round_trip(c);
  EXPECT_EQ(back.workload.sessions.turns.lo, 2);
  EXPECT_EQ(back.workload.sessions.think_time.sigma, 0.5);
  EXPECT_EQ(back.workload.sessions.system_prompts, 4);
  EXPECT_EQ(back.workload.sessions.max_context_tokens, 8192);
  EXPECT_TRUE(to_yaml(c)["workload"]["sessions"]);
  EXPECT_FALSE(to_yaml(parse("workload: {kind: synthetic}\n"))["workload"]["sessions"]);
  EXPECT_FALSE(to_yaml(parse("workload: {kind: trace}\n"))["workload"]["sessions"]);
}

// output.timeline and its bounds: read, written back only when set (so config.resolved.yaml
// of runs without a timeline stays as it was), and checked.
TEST(ExperimentConfig, TimelineKeysRoundTripAndAreOmittedAtTheirDefaults) {
  const YAML::Node plain = to_yaml(parse("{}"))["output"];
  for (const char* k : {"timeline", "timeline_stride", "timeline_start_s", "timeline_end_s", "timeline_max_iterations"})
    EXPECT_FALSE(plain[k]) << k;
  EXPECT_EQ(plain.size(), 2u);  // iterations_stride, requests_csv
  const ExperimentConfig c = parse(
      "output: {timeline: true, timeline_stride: 10, timeline_start_s: 300, timeline_end_s: 400, "
      "timeline_max_iterations: 0}\n");
  EXPECT_TRUE(c.output.timeline);
  EXPECT_EQ(c.output.timeline_stride, 10);
  EXPECT_EQ(c.output.timeline_start_s, 300);
  EXPECT_EQ(c.output.timeline_end_s, 400);
  EXPECT_EQ(c.output.timeline_max_iterations, 0);
  const ExperimentConfig back = round_trip(c);
  EXPECT_TRUE(back.output.timeline);
  EXPECT_EQ(back.output.timeline_stride, 10);
  EXPECT_EQ(back.output.timeline_end_s, 400);
  EXPECT_EQ(back.output.timeline_max_iterations, 0);
  const YAML::Node on = to_yaml(parse("output: {timeline: true}\n"))["output"];
  EXPECT_TRUE(on["timeline"].as<bool>());
  EXPECT_FALSE(on["timeline_stride"]);
}

TEST(ConfigErrors, TimelineBounds) {
  EXPECT_TRUE(fails_with("output:\n  timeline_stride: 0\n", 2, "output.timeline_stride", {">= 1"}));
  EXPECT_TRUE(fails_with("output:\n  timeline_max_iterations: -1\n", 2, "output.timeline_max_iterations", {">= 0"}));
  EXPECT_TRUE(fails_with("output:\n  timeline_start_s: 10\n  timeline_end_s: 5\n", 3, "output.timeline_end_s",
                         {"timeline_start_s = 10", "found 5"}));
  EXPECT_TRUE(fails_with("output:\n  timeline: maybe\n", 2, "output.timeline", {"true or false"}));
}

TEST(ExperimentConfig, EngineSectionRoundTripsAndIsOmittedAtItsDefault) {
  EXPECT_TRUE(parse("{}").engine.skip_decode_runs);
  EXPECT_FALSE(to_yaml(parse("{}"))["engine"]);  // runs without it keep their resolved configs
  const ExperimentConfig c = parse("engine: {skip_decode_runs: false}\n");
  EXPECT_FALSE(c.engine.skip_decode_runs);
  EXPECT_FALSE(round_trip(c).engine.skip_decode_runs);
  EXPECT_FALSE(to_yaml(c)["engine"]["skip_decode_runs"].as<bool>());
  EXPECT_TRUE(parse("{}").engine.compact_waiting);
  const ExperimentConfig q = parse("engine: {compact_waiting: false}\n");
  EXPECT_FALSE(q.engine.compact_waiting);
  EXPECT_TRUE(q.engine.skip_decode_runs);
  EXPECT_FALSE(round_trip(q).engine.compact_waiting);
  EXPECT_FALSE(to_yaml(q)["engine"]["compact_waiting"].as<bool>());
}

TEST(ConfigErrors, EngineKeys) {
  EXPECT_TRUE(fails_with("engine:\n  skip_decode_run: false\n", 2, "engine.skip_decode_run",
                         {"unknown key", "skip_decode_runs"}));
  EXPECT_TRUE(fails_with("engine:\n  skip_decode_runs: sometimes\n", 2, "engine.skip_decode_runs", {"true or false"}));
  EXPECT_TRUE(fails_with("engine:\n  compact_waiting: 2\n", 2, "engine.compact_waiting", {"true or false"}));
}

// ---- Errors: file:line, the dotted key, what was expected ----

TEST(ConfigErrors, UnknownTopLevelKey) {
  EXPECT_TRUE(fails_with("name: x\nnmae: y\n", 2, "nmae",
                         {"unknown key", "allowed here:", "name", "workload", "scheduler", "measure"}));
}

// Issue 41 item 6: a misspelt key or name gets the close names (sim/core/close_names.h).
TEST(ConfigErrors, AMisspeltKeyOrNameSuggestsTheIntendedOne) {
  EXPECT_TRUE(fails_with("allocator:\n  blok_size: 16\n", 2, "allocator.blok_size",
                         {"unknown key: did you mean allocator.block_size? (allowed here: block_size,"}));
  EXPECT_TRUE(fails_with("nmae: y\n", 1, "nmae", {"unknown key: did you mean name? (allowed here:"}));
  EXPECT_TRUE(fails_with("scheduler:\n  kind: sglnag\n", 2, "scheduler.kind", {"found 'sglnag'; did you mean sglang?"}));
  EXPECT_TRUE(fails_with("replicas:\n  count: 2\n  router: least-kv\n", 3, "replicas.router",
                         {"found 'least-kv'; did you mean least_kv?"}));
  // Nothing close: the allowed names alone.
  EXPECT_TRUE(fails_with("scheduler:\n  kind: fifo\n", 2, "scheduler.kind", {"found 'fifo'"}));
  try {
    parse_experiment(YAML::Load("scheduler:\n  kind: fifo\n"), "exp.yaml");
    ADD_FAILURE() << "expected a ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()).find("did you mean"), std::string::npos) << e.what();
  }
}

// Issue 41 item 9: radix under vllm-v1 names sglang, the scheduler whose cache it is.
TEST(ConfigErrors, RadixUnderAnotherSchedulerSuggestsSglang) {
  EXPECT_TRUE(fails_with("scheduler: {kind: vllm-v1}\nallocator:\n  kind: radix\n", 3, "allocator.kind",
                         {"scheduler.kind: vllm-v1 runs vLLM v1's paged block pool",
                          "allocator.kind 'radix' is SGLang's radix-tree cache", "use scheduler.kind: sglang",
                          "set allocator.kind: paged"}));
  // Other pools keep the schedulers that run over any pool.
  EXPECT_TRUE(fails_with("scheduler: {kind: vllm-v1}\nallocator:\n  kind: contiguous\n", 3, "allocator.kind",
                         {"allocator.kind is 'contiguous'", "or use scheduler.kind: orca or static"}));
}

TEST(ConfigErrors, UnknownNestedKeyListsTheAllowedKeys) {
  EXPECT_TRUE(fails_with("name: x\nscheduler:\n  kind: vllm\n  max_num_seq: 8\n", 4, "scheduler.max_num_seq",
                         {"unknown key", "max_num_seqs", "max_num_batched_tokens", "watermark", "chunk_tokens"}));
  EXPECT_TRUE(fails_with("workload:\n  arrival:\n    kind: poisson\n    rat: 2\n", 4, "workload.arrival.rat",
                         {"unknown key", "rate", "quantum_s"}));
  EXPECT_TRUE(fails_with("workload:\n  sampling:\n    - {weight: 1, beams: 2}\n", 3, "workload.sampling[0].beams",
                         {"unknown key", "beam_width"}));
  EXPECT_TRUE(fails_with("workload:\n  kind: sessions\n  sessions:\n    turn: {kind: fixed}\n", 4,
                         "workload.sessions.turn", {"unknown key", "turns", "think_time", "system_prompts"}));
  EXPECT_TRUE(fails_with("workload:\n  sessions:\n    think_time:\n      mean: 3\n", 4,
                         "workload.sessions.think_time.mean", {"unknown key", "mean_s", "median_s"}));
  EXPECT_TRUE(fails_with("workload:\n  sessions:\n    think_time: {kind: gaussian}\n", 3,
                         "workload.sessions.think_time.kind",
                         {"expected one of fixed, uniform, exponential, lognormal", "found 'gaussian'"}));
  EXPECT_TRUE(fails_with("workload:\n  sessions:\n    block_tokens: many\n", 3, "workload.sessions.block_tokens",
                         {"expected an integer", "found 'many'"}));
}

TEST(ConfigErrors, StringForInteger) {
  EXPECT_TRUE(fails_with("scheduler:\n  max_num_seqs: many\n", 2, "scheduler.max_num_seqs",
                         {"expected an integer", "found 'many'"}));
  EXPECT_TRUE(fails_with("allocator: {block_size: 2.5}\n", 1, "allocator.block_size", {"expected an integer", "'2.5'"}));
}

TEST(ConfigErrors, NegativeForUnsigned) {
  EXPECT_TRUE(fails_with("seed: -1\n", 1, "seed", {"expected a non-negative integer", "found '-1'"}));
}

TEST(ConfigErrors, ListForScalar) {
  EXPECT_TRUE(fails_with("name: x\nseed: [1, 2]\n", 2, "seed", {"expected a non-negative integer", "found a list"}));
  // (A map is a custom model: model_config_test.cpp.)
  EXPECT_TRUE(fails_with("model:\n  - opt-13b\n", 2, "model", {"expected a string", "found a list"}));
}

TEST(ConfigErrors, ScalarForSection) {
  EXPECT_TRUE(fails_with("name: x\nallocator: paged\n", 2, "allocator", {"expected a map of settings", "found a scalar"}));
  EXPECT_TRUE(fails_with("workload:\n  sampling: {n: 2}\n", 2, "workload.sampling", {"expected a list", "found a map"}));
  EXPECT_TRUE(fails_with("workload:\n  sampling: [3]\n", 2, "workload.sampling[0]", {"expected a map", "found a scalar"}));
}

TEST(ConfigErrors, WrongBoolAndNumber) {
  EXPECT_TRUE(fails_with("allocator:\n  prefix_cache: maybe\n", 2, "allocator.prefix_cache",
                         {"expected true or false", "'maybe'"}));
  EXPECT_TRUE(fails_with("measure:\n  window_start_s: soon\n", 2, "measure.window_start_s",
                         {"expected a number", "'soon'"}));
}

// kv_dtype: absent is auto and is not written (so the resolved config of every run before it
// is unchanged); a set value round-trips; an unknown one lists the formats.
TEST(ExperimentConfig, KvDtypeIsOmittedAtAutoAndRoundTrips) {
  EXPECT_EQ(parse("{}").kv_dtype, KvDtype::kAuto);
  EXPECT_FALSE(to_yaml(parse("{}"))["kv_dtype"]);
  const ExperimentConfig fp8 = parse("kv_dtype: fp8\n");
  EXPECT_EQ(fp8.kv_dtype, KvDtype::kFp8);
  EXPECT_EQ(to_yaml(fp8)["kv_dtype"].as<std::string>(), "fp8");
  EXPECT_EQ(round_trip(parse("kv_dtype: int4\n")).kv_dtype, KvDtype::kInt4);
  EXPECT_TRUE(fails_with("kv_dtype: fp4\n", 1, "kv_dtype", {"auto, fp16, bf16, fp8, int4", "'fp4'"}));
}

TEST(ConfigErrors, UnknownSchedulerKind) {
  EXPECT_TRUE(fails_with("scheduler:\n  kind: fifo\n", 2, "scheduler.kind",
                         {"expected one of static, orca, vllm, sarathi", "found 'fifo'"}));
  EXPECT_TRUE(fails_with("scheduler: {preemption: kill}\n", 1, "scheduler.preemption",
                         {"auto, recompute, swap", "'kill'"}));
}

TEST(ConfigErrors, UnknownArrivalKind) {
  EXPECT_TRUE(fails_with("workload:\n  kind: synthetic\n  arrival:\n    kind: poison\n", 4, "workload.arrival.kind",
                         {"poisson", "poisson_quantum", "gamma", "constant", "burst", "found 'poison'"}));
}

TEST(ConfigErrors, UnknownLengthsKind) {
  EXPECT_TRUE(fails_with("workload:\n  lengths: {kind: histogram}\n", 2, "workload.lengths.kind",
                         {"distributions", "empirical", "file_order", "cycle_shuffle", "found 'histogram'"}));
  EXPECT_TRUE(fails_with("workload:\n  lengths:\n    prompt: {kind: normal}\n", 3, "workload.lengths.prompt.kind",
                         {"fixed, uniform, lognormal, zipf", "'normal'"}));
}

TEST(ConfigErrors, UnknownTraceFormat) {
  EXPECT_TRUE(fails_with("workload:\n  kind: trace\n  trace:\n    path: x.csv\n    format: parquet\n", 5,
                         "workload.trace.format", {"auto, native, vidur, azure, mooncake", "found 'parquet'"}));
  EXPECT_TRUE(fails_with("workload: {kind: replay}\n", 1, "workload.kind", {"trace, synthetic", "'replay'"}));
}

TEST(ConfigErrors, BadReservation) {
  EXPECT_TRUE(fails_with("name: x\nallocator:\n  kind: contiguous\n  reservation: fixed:-3\n", 4,
                         "allocator.reservation", {"fixed:-3", "max, pow2, oracle, fixed:N"}));
  EXPECT_TRUE(fails_with("allocator:\n  reservation: pow3\n", 2, "allocator.reservation", {"pow3", "pow2"}));
}

TEST(ConfigErrors, BadPlacementAndEviction) {
  EXPECT_TRUE(fails_with("allocator:\n  placement: worst_fit\n", 2, "allocator.placement",
                         {"worst_fit", "buddy, first_fit, best_fit"}));
  EXPECT_TRUE(fails_with("allocator:\n  eviction: mru\n", 2, "allocator.eviction",
                         {"mru", "lru, fifo, lfu, lru_protect_waiting"}));
  EXPECT_TRUE(fails_with("allocator:\n  kind: slab\n", 2, "allocator.kind", {"paged, contiguous", "'slab'"}));
}

// Every eviction policy is chosen by the name its table gives.
TEST(ExperimentConfig, EveryEvictionPolicyByName) {
  for (const auto& [kind, name] : alloc::kEvictionKindNames) {
    const ExperimentConfig c = parse("allocator: {eviction: " + std::string(name) + "}\n");
    EXPECT_EQ(c.allocator.eviction, kind) << name;
  }
}

TEST(ConfigErrors, OutOfRangeNumbers) {
  EXPECT_TRUE(fails_with("name: x\nallocator:\n  cpu_swap_gib: -1\n", 3, "allocator.cpu_swap_gib", {">= 0"}));
  // GiB amounts become std::int64_t bytes and blocks: NaN, infinity and huge values would
  // make that conversion undefined, so they are refused like a negative amount.
  EXPECT_TRUE(fails_with("allocator:\n  cpu_swap_gib: .nan\n", 2, "allocator.cpu_swap_gib",
                         {"expected a number of GiB >= 0 and <= 1048576 (1 PiB)", "found nan"}));
  EXPECT_TRUE(fails_with("allocator: {cpu_swap_gib: .inf}\n", 1, "allocator.cpu_swap_gib", {"found inf"}));
  EXPECT_TRUE(fails_with("allocator: {cpu_swap_gib: 1e30}\n", 1, "allocator.cpu_swap_gib", {"found 1e+30"}));
  EXPECT_TRUE(fails_with("kv:\n  activation_reserve_gib: .nan\n", 2, "kv.activation_reserve_gib",
                         {"expected a number of GiB >= 0 and <= 1048576 (1 PiB)", "found nan"}));
  EXPECT_TRUE(fails_with("kv: {activation_reserve_gib: -.inf}\n", 1, "kv.activation_reserve_gib", {"found -inf"}));
  EXPECT_TRUE(fails_with("kv: {activation_reserve_gib: 1e30}\n", 1, "kv.activation_reserve_gib", {"found 1e+30"}));
  EXPECT_TRUE(fails_with("kv: {activation_reserve_gib: -0.5}\n", 1, "kv.activation_reserve_gib", {"found -0.5"}));
  EXPECT_TRUE(fails_with("name: x\ntensor_parallel: 0\n", 2, "tensor_parallel", {"expected an integer >= 1"}));
  EXPECT_TRUE(fails_with("kv:\n  slots: -5\n", 2, "kv.slots", {">= 0", "found -5"}));
  // A string config.resolved.yaml could not write back as itself (the fuzzer's "name: x\r").
  EXPECT_TRUE(fails_with("name: smald\r", 1, "name", {"printable characters", "0x0d"}));
  EXPECT_TRUE(fails_with("name: \"ab\\t\"\n", 1, "name", {"0x09"}));
  EXPECT_TRUE(fails_with("output:\n  iterations_stride: -2\n", 2, "output.iterations_stride", {">= 0"}));
  EXPECT_TRUE(fails_with("cost:\n  kind: magic\n", 2, "cost.kind", {"'magic'", "roofline, constant, profile"}));
}

TEST(ConfigErrors, SchedulerLimits) {
  EXPECT_TRUE(fails_with("name: x\nscheduler:\n  max_num_seqs: 0\n", 3, "scheduler.max_num_seqs",
                         {"expected an integer >= 1", "found 0"}));
  EXPECT_TRUE(fails_with("scheduler: {max_num_batched_tokens: -4}\n", 1, "scheduler.max_num_batched_tokens",
                         {"expected an integer >= 1", "found -4"}));
  EXPECT_TRUE(fails_with("scheduler:\n  kind: vllm\n  watermark: 1.5\n", 3, "scheduler.watermark",
                         {"expected a fraction in [0, 1)", "found 1.5"}));
  EXPECT_TRUE(fails_with("scheduler:\n  watermark: .nan\n", 2, "scheduler.watermark", {"found nan"}));
  EXPECT_TRUE(fails_with("scheduler:\n  kind: sarathi\n  chunk_tokens: 0\n", 3, "scheduler.chunk_tokens",
                         {"expected an integer >= 1 for sarathi", "found 0"}));
  // Other policies do not read chunk_tokens.
  EXPECT_EQ(parse("scheduler: {kind: vllm, chunk_tokens: 0}\n").scheduler.chunk_tokens, 0);
}

// The engine-parity keys: output.steps, vllm-v1's long_prefill_token_threshold and the
// top-level vllm_version, each omitted from config.resolved.yaml at its default.
TEST(ExperimentConfig, EngineParityKeysRoundTripAndAreOmittedAtTheirDefaults) {
  const YAML::Node plain = to_yaml(parse("{}"));
  EXPECT_FALSE(plain["vllm_version"]);
  EXPECT_FALSE(plain["output"]["steps"]);
  EXPECT_FALSE(plain["scheduler"]["long_prefill_token_threshold"]);
  EXPECT_EQ(parse("{}").vllm_version, (VllmVersion{0, 15, 1}));
  const ExperimentConfig c = parse(
      "vllm_version: 0.34\noutput: {steps: true}\nscheduler: {kind: vllm-v1, long_prefill_token_threshold: 64}\n");
  EXPECT_EQ(c.vllm_version, (VllmVersion{0, 34, 0}));
  EXPECT_TRUE(c.output.steps);
  EXPECT_EQ(c.scheduler.long_prefill_token_threshold, 64);
  const ExperimentConfig back = round_trip(c);
  EXPECT_EQ(back.vllm_version, (VllmVersion{0, 34, 0}));
  EXPECT_TRUE(back.output.steps);
  EXPECT_EQ(back.scheduler.long_prefill_token_threshold, 64);
  EXPECT_EQ(to_yaml(c)["vllm_version"].as<std::string>(), "0.34.0");
  EXPECT_TRUE(long_prefill_cap_needs_company(VllmVersion{0, 31, 0}));
  EXPECT_FALSE(long_prefill_cap_needs_company(VllmVersion{0, 30, 0}));
}

TEST(ConfigErrors, EngineParityKeys) {
  EXPECT_TRUE(fails_with("vllm_version: latest\n", 1, "vllm_version", {"MAJOR.MINOR[.PATCH]", "'latest'"}));
  EXPECT_TRUE(fails_with("vllm_version: 0.15.1.2\n", 1, "vllm_version", {"MAJOR.MINOR[.PATCH]"}));
  EXPECT_TRUE(fails_with("vllm_version: 1\n", 1, "vllm_version", {"MAJOR.MINOR[.PATCH]"}));
  EXPECT_TRUE(fails_with("scheduler:\n  kind: vllm-v1\n  long_prefill_token_threshold: -1\n", 3,
                         "scheduler.long_prefill_token_threshold", {">= 0", "found -1"}));
  EXPECT_TRUE(fails_with("scheduler:\n  kind: sarathi\n  long_prefill_token_threshold: 8\n", 3,
                         "scheduler.long_prefill_token_threshold", {"vllm-v1 only", "sarathi"}));
  EXPECT_TRUE(fails_with("output:\n  steps: often\n", 2, "output.steps", {"true or false"}));
}

TEST(ConfigErrors, BlockSizeAndCapacity) {
  EXPECT_TRUE(fails_with("allocator:\n  block_size: 0\n", 2, "allocator.block_size",
                         {"expected an integer >= 1", "found 0"}));
  // A paged pool needs one block; the error is on kv.slots, at its line.
  EXPECT_TRUE(fails_with("name: x\nkv:\n  slots: 8\nallocator: {block_size: 16}\n", 3, "kv.slots",
                         {"allocator.block_size = 16", "found 8"}));
  // So do the other pools of whole blocks (radix, contiguous buddy), which hold kv.slots
  // rounded down to whole blocks (a pool of 0 slots would fail later, at allocator).
  EXPECT_TRUE(fails_with("name: x\nkv:\n  slots: 8\nallocator: {kind: radix, block_size: 16}\nscheduler: {kind: sglang}\n", 3, "kv.slots",
                         {"room for one block of allocator.block_size = 16", "the radix pool", "found 8"}));
  EXPECT_TRUE(fails_with("name: x\nkv:\n  slots: 8\nallocator: {kind: contiguous, block_size: 16}\nscheduler: {kind: orca}\n", 3, "kv.slots",
                         {"room for one block of allocator.block_size = 16", "the contiguous pool", "found 8"}));
  // Slot-granular placement has no such floor.
  EXPECT_EQ(parse("kv: {slots: 8}\nallocator: {kind: contiguous, placement: first_fit}\n").kv.slots, 8);
}

TEST(ConfigErrors, BadBeamModel) {
  EXPECT_TRUE(fails_with("name: x\nbeam:\n  model: greedy\n", 3, "beam.model",
                         {"expected one of neutral, scores", "found 'greedy'"}));
  EXPECT_TRUE(fails_with("beam: {mean_entropy_nats: -0.5}\n", 1, "beam.mean_entropy_nats",
                         {"expected a finite number >= 0", "found -0.5"}));
  EXPECT_TRUE(fails_with("beam:\n  model: scores\n  mean_entropy_nats: .inf\n", 3, "beam.mean_entropy_nats",
                         {"expected a finite number >= 0", "found inf"}));
  EXPECT_TRUE(fails_with("beam:\n  mean_entropy_nats: .nan\n", 2, "beam.mean_entropy_nats",
                         {"expected a finite number >= 0", "found nan"}));
  EXPECT_TRUE(fails_with("beam:\n  mean_entropy_nats: high\n", 2, "beam.mean_entropy_nats",
                         {"expected a number", "found 'high'"}));
  EXPECT_TRUE(fails_with("beam:\n  model: scores\n  entropy: 2\n", 3, "beam.entropy",
                         {"unknown key", "model", "mean_entropy_nats"}));
  EXPECT_TRUE(fails_with("beam: scores\n", 1, "beam", {"expected a map of settings", "found a scalar"}));
}

TEST(ConfigErrors, MeasureWindowMustNotBeEmpty) {
  EXPECT_TRUE(fails_with("name: x\nmeasure:\n  window_start_s: 300\n  window_end_s: 100\n", 4, "measure.window_end_s",
                         {"window_start_s", "window_end_s", "300", "100"}));
  EXPECT_TRUE(fails_with("measure: {window_start_s: 50, window_end_s: 50}\n", 1, "measure.window_end_s", {"50"}));
  // Only the start given: the error is on the start.
  EXPECT_TRUE(fails_with("measure:\n  window_start_s: .inf\n", 2, "measure.window_start_s", {"window_end_s"}));
  // Not a number is no window either.
  EXPECT_TRUE(fails_with("measure:\n  window_start_s: .nan\n", 2, "measure.window_start_s", {"window_end_s"}));
  // A window that ends before the simulation starts measures nothing.
  EXPECT_TRUE(fails_with("measure:\n  window_start_s: -100\n  window_end_s: -50\n", 3, "measure.window_end_s",
                         {"expected seconds > 0", "found -50"}));
  EXPECT_TRUE(fails_with("measure: {window_start_s: -1, window_end_s: 0}\n", 1, "measure.window_end_s", {"found 0"}));
  EXPECT_EQ(parse("measure: {window_start_s: -1, window_end_s: 5}\n").measure.window_end_s, 5);
}

TEST(ConfigErrors, DuplicateKey) {
  EXPECT_TRUE(fails_with("seed: 1\nname: x\nseed: 2\n", 3, "seed", {"duplicate key", "line 1"}));
  EXPECT_TRUE(fails_with("scheduler:\n  kind: orca\n  kind: vllm\n", 3, "scheduler.kind", {"duplicate key", "line 2"}));
}

TEST(ConfigErrors, RootMustBeAMap) {
  try {
    parse_experiment(YAML::Load("- a\n- b\n"), kFile);
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.file(), kFile);
    EXPECT_NE(std::string(e.what()).find("expected a YAML map"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parse_experiment(YAML::Load(""), kFile), ConfigError);
}

// A failed parse leaves the YAML it was given as it was (it is a const reference).
TEST(ConfigErrors, FailedParseLeavesTheYamlUntouched) {
  for (const char* yaml : {"name: x\nmeasure:\n  window_start_s: 300\n  window_end_s: 100\n",
                           "name: x\nallocator:\n  reservation: pow3\n", "name: x\ntensor_parallel: 0\n"}) {
    const YAML::Node root = YAML::Load(yaml);
    const std::string before = emit(root);
    EXPECT_THROW(parse_experiment(root, kFile), ConfigError);
    EXPECT_EQ(emit(root), before);
  }
}

// ---- Files ----

struct TempDir {
  fs::path path;
  explicit TempDir(const std::string& name)
      : path(fs::temp_directory_path() / ("pagesim-test-" + std::to_string(::getpid()) + "-" + name)) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(path / name) << text;
    return (path / name).string();
  }
};

TEST(ConfigFiles, YamlSyntaxErrorNamesFileAndLine) {
  TempDir dir("config-syntax");
  const std::string file = dir.write("bad.yaml", "name: x\nseed: 1\nworkload:\n  arrival: [1, 2\nmodel: opt-13b\n");
  try {
    load_yaml_file(file);
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.file(), file);
    EXPECT_GE(e.line(), 4);  // the list opened on line 4 is never closed
    EXPECT_LE(e.line(), 6);
    const std::string what = e.what();
    EXPECT_EQ(what.rfind(file + ":" + std::to_string(e.line()) + ": ", 0), 0u) << what;
    EXPECT_NE(what.find("YAML syntax error"), std::string::npos) << what;
  }
  const std::string good = dir.write("good.yaml", "name: x\nscheduler:\n  max_num_seqs: 8\n");
  EXPECT_EQ(parse_experiment(load_yaml_file(good), good).scheduler.max_num_seqs, 8);
}

TEST(ConfigFiles, DeeplyNestedValuesSayWhatIsWrong) {
  // yaml-cpp reports nesting beyond its recursion limit as "bad file".
  const std::string deep = std::string(50000, '[') + std::string(50000, ']');
  YAML::Node root = YAML::Load("name: x\n");
  try {
    apply_override(root, "workload.duration_s=" + deep);
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("--set: workload.duration_s: value is not valid YAML: collections nested ", 0), 0u) << what;
    EXPECT_NE(what.find("levels deep"), std::string::npos) << what;
    EXPECT_EQ(what.find("bad file"), std::string::npos) << what;
  }
  TempDir dir("config-deep");
  const std::string file = dir.write("deep.yaml", "name: x\nworkload: " + deep + "\n");
  try {
    load_yaml_file(file);
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind(file + ":2: YAML syntax error: collections nested ", 0), 0u) << what;
  }
}

TEST(ConfigFiles, MissingFile) {
  TempDir dir("config-missing");
  const std::string file = (dir.path / "nope.yaml").string();
  try {
    load_yaml_file(file);
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.file(), file);
    EXPECT_EQ(e.line(), 0);
    const std::string what = e.what();
    EXPECT_EQ(what.rfind(file + ": ", 0), 0u) << what;
    EXPECT_NE(what.find("cannot open"), std::string::npos) << what;
  }
}

// ---- scheduler.kind: vllm-v1 ----

// vLLM v1 turns prefix caching on by default: so does vllm-v1 unless the file says, and the
// resolved config says what was used. A synthetic workload has no token identities: off.
TEST(VllmV1Config, PrefixCacheDefaultsOnUnlessTheFileSays) {
  const ExperimentConfig on = parse("workload: {kind: trace}\nscheduler: {kind: vllm-v1}\n");
  EXPECT_EQ(on.scheduler.kind, SchedulerKind::kVllmV1);
  EXPECT_TRUE(on.allocator.prefix_cache);
  EXPECT_TRUE(to_yaml(on)["allocator"]["prefix_cache"].as<bool>());
  EXPECT_EQ(to_yaml(on)["scheduler"]["kind"].as<std::string>(), "vllm-v1");
  const ExperimentConfig off =
      parse("workload: {kind: trace}\nallocator: {prefix_cache: false}\nscheduler: {kind: vllm-v1}\n");
  EXPECT_FALSE(off.allocator.prefix_cache);
  EXPECT_FALSE(to_yaml(off)["allocator"]["prefix_cache"].as<bool>());
  EXPECT_FALSE(parse("scheduler: {kind: vllm-v1}\n").allocator.prefix_cache);  // synthetic workload
  EXPECT_FALSE(parse("workload: {kind: trace}\nscheduler: {kind: sarathi}\n").allocator.prefix_cache);
  // --set counts as the file saying.
  YAML::Node root = YAML::Load("workload: {kind: trace}\nscheduler: {kind: vllm-v1}\n");
  apply_override(root, "allocator.prefix_cache=false");
  EXPECT_FALSE(parse_experiment(root, kFile).allocator.prefix_cache);
}

// Settings vLLM v1 has no meaning for are errors on the key that asks for them.
TEST(VllmV1Config, ContiguousAllocatorAndSwapAreErrors) {
  EXPECT_TRUE(fails_with("workload: {kind: trace}\nallocator:\n  kind: contiguous\nscheduler: {kind: vllm-v1}\n", 3,
                         "allocator.kind", {"vllm-v1", "paged", "'contiguous'"}));
  EXPECT_TRUE(fails_with("scheduler:\n  kind: vllm-v1\n  preemption: swap\n", 3, "scheduler.preemption",
                         {"vllm-v1", "recompute"}));
}

// ---- --set overrides ----

TEST(Overrides, CreateNestedKeys) {
  YAML::Node root = YAML::Load("name: x\n");
  apply_override(root, "scheduler.max_num_seqs=8");
  apply_override(root, "workload.arrival.rate=2.5");
  apply_override(root, "allocator.prefix_cache=true");
  apply_override(root, "workload.kind=trace");  // a synthetic workload has no prefixes to cache
  const ExperimentConfig c = parse_experiment(root, kFile);
  EXPECT_EQ(c.scheduler.max_num_seqs, 8);
  EXPECT_EQ(c.workload.arrival.rate, 2.5);
  EXPECT_TRUE(c.allocator.prefix_cache);
  EXPECT_EQ(c.name, "x");
}

TEST(Overrides, OverrideExistingValuesAndKeepTheRest) {
  YAML::Node root = YAML::Load(
      "name: x\nscheduler:\n  kind: orca\n  max_num_seqs: 256\nkv: {slots: 100}\nworkload:\n  arrival: {kind: poisson, "
      "rate: 4}\n");
  apply_override(root, "scheduler.max_num_seqs=16");
  apply_override(root, "kv.slots=2048");        // inside a flow map
  apply_override(root, "name=renamed");
  apply_override(root, "workload.arrival={kind: constant, rate: 3}");  // a whole section, as YAML
  const ExperimentConfig c = parse_experiment(root, kFile);
  EXPECT_EQ(c.scheduler.max_num_seqs, 16);
  EXPECT_EQ(c.scheduler.kind, SchedulerKind::kOrca);  // untouched sibling
  EXPECT_EQ(c.kv.slots, 2048);
  EXPECT_EQ(c.name, "renamed");
  EXPECT_EQ(c.workload.arrival.kind, traces::ArrivalKind::kConstant);
  EXPECT_EQ(c.workload.arrival.rate, 3);
  // The last override of a key wins.
  apply_override(root, "scheduler.max_num_seqs=4");
  EXPECT_EQ(parse_experiment(root, kFile).scheduler.max_num_seqs, 4);
}

TEST(Overrides, MalformedAssignments) {
  YAML::Node root = YAML::Load("name: x\n");
  for (const char* bad : {"a.b", "=5", "scheduler..kind=vllm", ".kind=vllm", "scheduler.=3"}) {
    try {
      apply_override(root, bad);
      ADD_FAILURE() << "no error for '" << bad << "'";
    } catch (const ConfigError& e) {
      EXPECT_EQ(e.file(), "--set") << e.what();
      EXPECT_NE(std::string(e.what()).find("--set"), std::string::npos) << e.what();
    }
  }
  try {
    apply_override(root, "a.b");
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.key(), "a.b");
    EXPECT_NE(std::string(e.what()).find("key.path=value"), std::string::npos) << e.what();
  }
  // A value that is not YAML.
  EXPECT_THROW(apply_override(root, "workload.sampling=[1, 2"), ConfigError);
  // Descending into a value that is not a section.
  try {
    apply_override(root, "name.first=y");
    ADD_FAILURE() << "no error";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.key(), "name.first");
    EXPECT_NE(std::string(e.what()).find("'name' is not a section"), std::string::npos) << e.what();
  }
  // Nothing was changed by the failed overrides.
  EXPECT_EQ(emit(root), "name: x");
}

TEST(Overrides, UnknownKeyFailsAtParseWithItsPath) {
  YAML::Node root = YAML::Load("name: x\nscheduler:\n  kind: vllm\n");
  apply_override(root, "scheduler.max_num_seq=8");
  // No line: the key is not in the file.
  EXPECT_TRUE(fails_with(root, 0, "scheduler.max_num_seq", {"unknown key", "max_num_seqs"}));
  YAML::Node root2 = YAML::Load("name: x\n");
  apply_override(root2, "sheduler.kind=vllm");
  EXPECT_TRUE(fails_with(root2, 0, "sheduler", {"unknown key", "scheduler"}));
}

// A bad value from --set is not blamed on a line of the file.
TEST(Overrides, BadValueHasNoFileLine) {
  YAML::Node root = YAML::Load("name: x\nscheduler:\n  kind: vllm\n  max_num_seqs: 8\n");
  apply_override(root, "scheduler.max_num_seqs=abc");
  EXPECT_TRUE(fails_with(root, 0, "scheduler.max_num_seqs", {"expected an integer", "'abc'"}));
  YAML::Node root2 = YAML::Load("name: x\n");
  apply_override(root2, "allocator.reservation=pow3");
  EXPECT_TRUE(fails_with(root2, 0, "allocator.reservation", {"pow3"}));
  // The lines of the file's own values are kept.
  YAML::Node root3 = YAML::Load("name: x\nallocator:\n  kind: paged\n  eviction: mru\n");
  apply_override(root3, "allocator.block_size=32");
  EXPECT_TRUE(fails_with(root3, 4, "allocator.eviction", {"mru"}));
}

}  // namespace
}  // namespace pagesim::sim
