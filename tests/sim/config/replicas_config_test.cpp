// replicas: and slo: in the experiment YAML — the shorthand, per-replica overrides laid over
// the experiment, the resolved config written only when used, and every bad input named by
// file:line and key path.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/config/config_error.h"
#include "sim/config/experiment_config.h"
#include "throws_config_error.h"

namespace pagesim::sim {
namespace {

constexpr const char* kFile = "exp.yaml";

ExperimentConfig parse(const std::string& yaml) { return parse_experiment(YAML::Load(yaml), kFile); }

std::string emit(const YAML::Node& n) {
  YAML::Emitter e;
  e << n;
  return e.c_str();
}

// Expects a ConfigError on `key` at `line` whose text holds every one of `words`.
::testing::AssertionResult fails_with(const std::string& yaml, int line, const std::string& key,
                                      const std::vector<std::string>& words) {
  return testing::throws_config_error([&] { parse(yaml); }, kFile, line, key, words);
}

const std::string kCached = "workload: {kind: trace, trace: {path: t.jsonl, format: mooncake}}\n"
                            "allocator: {kind: paged, prefix_cache: true}\n";

TEST(ReplicasConfig, DefaultsAreOneReplicaAndNoObjective) {
  const ExperimentConfig c = parse("name: x\n");
  EXPECT_EQ(c.replicas.count, 1);
  EXPECT_TRUE(c.replicas.at_default());
  EXPECT_FALSE(c.slo.enabled());
  EXPECT_EQ(&replica_config(c, 0), &c);
  // Written back without either section: config.resolved.yaml of existing runs is unchanged.
  const YAML::Node y = to_yaml(c);
  EXPECT_FALSE(y["replicas"]);
  EXPECT_FALSE(y["slo"]);
}

TEST(ReplicasConfig, ScalarIsShortForCount) {
  const ExperimentConfig c = parse("replicas: 4\n");
  EXPECT_EQ(c.replicas.count, 4);
  EXPECT_EQ(c.replicas.router.kind, RouterKind::kRoundRobin);
  EXPECT_EQ(to_yaml(c)["replicas"]["count"].as<int>(), 4);
}

TEST(ReplicasConfig, OverridesLayOverTheExperiment) {
  const ExperimentConfig c = parse(kCached +
                                   "seed: 9\n"
                                   "gpu: a100-40gb\n"
                                   "kv: {slots: 4096, gpu_memory_utilization: 0.8}\n"
                                   "replicas:\n"
                                   "  count: 3\n"
                                   "  router: prefix_aware\n"
                                   "  prefix_aware: {balance_abs_threshold: 4, cache_threshold: 0.25}\n"
                                   "  overrides:\n"
                                   "    - {index: 2, gpu: h100-sxm, kv: {slots: 8192}, scheduler: {kind: sarathi}}\n");
  EXPECT_EQ(c.replicas.router.kind, RouterKind::kPrefixAware);
  EXPECT_EQ(c.replicas.router.balance_abs_threshold, 4);
  EXPECT_DOUBLE_EQ(c.replicas.router.cache_threshold, 0.25);
  EXPECT_EQ(c.replicas.router.seed, 9u);  // the experiment's seed
  ASSERT_EQ(c.replicas.overrides.size(), 1u);
  const ExperimentConfig& r2 = replica_config(c, 2);
  EXPECT_EQ(r2.gpu, "h100-sxm");
  EXPECT_EQ(r2.kv.slots, 8192);
  EXPECT_DOUBLE_EQ(r2.kv.gpu_memory_utilization, 0.8);  // kept from the experiment
  EXPECT_EQ(r2.scheduler.kind, SchedulerKind::kSarathi);
  EXPECT_TRUE(r2.allocator.prefix_cache);
  EXPECT_EQ(&replica_config(c, 1), &c);
  // The resolved config lists replica 2's settings in full, and reads back the same.
  const ExperimentConfig back = parse_experiment(YAML::Load(emit(to_yaml(c))), kFile);
  EXPECT_EQ(back.replicas.count, 3);
  EXPECT_EQ(replica_config(back, 2).gpu, "h100-sxm");
  EXPECT_EQ(replica_config(back, 2).kv.slots, 8192);
  EXPECT_EQ(emit(to_yaml(back)), emit(to_yaml(c)));
}

// A replica of another pool kind inherits the experiment's keys, but not those of the
// experiment's kind (contiguous's reservation and placement here); keys of its own kind it
// gives itself are refused as at the top level.
TEST(ReplicasConfig, AnotherPoolKindLeavesTheExperimentsKindKeys) {
  const std::string base = "gpu: a100-40gb\n"
                           "allocator: {kind: contiguous, block_size: 32, reservation: pow2, placement: first_fit}\n"
                           "scheduler: {kind: orca}\n"
                           "replicas:\n"
                           "  count: 2\n"
                           "  overrides:\n";
  const ExperimentConfig c = parse(base + "    - {index: 1, allocator: {kind: paged}, scheduler: {kind: vllm}}\n");
  EXPECT_EQ(c.allocator.contiguous.reservation, alloc::ReservationPolicy::pow2());
  const ExperimentConfig& paged = replica_config(c, 1);
  EXPECT_EQ(paged.allocator.kind, alloc::AllocatorKind::kPaged);
  EXPECT_EQ(paged.allocator.block_size, 32);  // a key every kind reads stays
  EXPECT_EQ(paged.allocator.contiguous.reservation, alloc::ReservationPolicy::max());
  EXPECT_EQ(paged.allocator.contiguous.placement, alloc::PlacementKind::kBuddy);
  const ExperimentConfig back = parse_experiment(YAML::Load(emit(to_yaml(c))), kFile);
  EXPECT_EQ(emit(to_yaml(back)), emit(to_yaml(c)));
  EXPECT_TRUE(fails_with(base + "    - {index: 1, allocator: {kind: paged, placement: best_fit}, scheduler: {kind: vllm}}\n",
                         7, "replicas.overrides[0].allocator.placement",
                         {"sets up allocator.kind: contiguous; allocator.kind is 'paged'"}));
}

TEST(ReplicasConfig, Slo) {
  const ExperimentConfig c = parse("slo: {ttft_s: 0.5, tbt_s: 0.05, tbt: max}\n");
  EXPECT_TRUE(c.slo.enabled());
  EXPECT_DOUBLE_EQ(c.slo.ttft_s, 0.5);
  EXPECT_EQ(c.slo.tbt, TbtMetric::kMax);
  EXPECT_EQ(to_yaml(c)["slo"]["tbt"].as<std::string>(), "max");
  EXPECT_TRUE(parse("slo: {ttft_s: 1}\n").slo.enabled());
}

// sglang's radix pool always caches prefixes: prefix_aware can route over it, and its page
// of 1 token (SGLang's default) cannot share a request's keys with a paged cache's blocks.
TEST(ReplicasConfig, RadixReplicasCachePrefixes) {
  const ExperimentConfig c = parse("workload: {kind: trace, trace: {path: t.jsonl, format: mooncake}}\n"
                                   "scheduler: {kind: sglang}\n"
                                   "replicas: {count: 2, router: prefix_aware}\n");
  EXPECT_EQ(c.replicas.router.kind, RouterKind::kPrefixAware);
  EXPECT_TRUE(c.allocator.caches_prefixes());
  EXPECT_TRUE(fails_with(kCached + "replicas:\n  count: 2\n  overrides:\n"
                                   "    - {index: 1, scheduler: {kind: sglang}, allocator: {kind: radix, block_size: 1}}\n",
                         6, "replicas.overrides", {"must share allocator.block_size"}));
  // With pages of the cluster's block size (given: sglang implies pages of 1 token), vllm and
  // sglang replicas share the keys.
  const ExperimentConfig mixed = parse(kCached + "replicas:\n  count: 2\n  router: prefix_aware\n  overrides:\n"
                                                 "    - {index: 1, scheduler: {kind: sglang}, allocator: {kind: radix, block_size: 16}}\n");
  EXPECT_EQ(replica_config(mixed, 1).allocator.kind, alloc::AllocatorKind::kRadix);
  EXPECT_EQ(replica_config(mixed, 1).allocator.block_size, 16);
}

TEST(ReplicasConfigErrors, CountAndRouter) {
  EXPECT_TRUE(fails_with("replicas: 0\n", 1, "replicas.count", {"expected an integer in [1, 65536]", "found 0"}));
  EXPECT_TRUE(fails_with("replicas: {count: -2}\n", 1, "replicas.count", {"found -2"}));
  EXPECT_TRUE(fails_with("replicas:\n  count: 2\n  router: fastest\n", 3, "replicas.router",
                         {"expected one of", "round_robin", "prefix_aware", "found 'fastest'"}));
  EXPECT_TRUE(fails_with("replicas:\n  count: 2\n  routr: random\n", 3, "replicas.routr", {"unknown key", "router"}));
  EXPECT_TRUE(fails_with("replicas: [1, 2]\n", 1, "replicas", {"expected a map"}));
}

TEST(ReplicasConfigErrors, CombinationsThatMeanNothing) {
  EXPECT_TRUE(fails_with("replicas: {count: 1, router: least_kv}\n", 1, "replicas.router",
                         {"replicas.count is 1"}));
  EXPECT_TRUE(fails_with("replicas: {count: 2, router: prefix_aware}\n", 1, "replicas.router",
                         {"no replica has a prefix cache"}));
  EXPECT_TRUE(fails_with("replicas:\n  count: 2\n  prefix_aware: {balance_abs_threshold: 3}\n", 3,
                         "replicas.prefix_aware", {"replicas.router is 'round_robin'"}));
  EXPECT_TRUE(fails_with("validate: {every_n_iterations: 5}\nreplicas: 2\n", 1, "validate.every_n_iterations",
                         {"replicas.count = 2"}));
  EXPECT_TRUE(fails_with("slo: {tbt: max}\n", 1, "slo", {"no objective is set"}));
  EXPECT_TRUE(fails_with("slo:\n  ttft_s: -1\n", 2, "slo.ttft_s", {"found -1"}));
  EXPECT_TRUE(fails_with("slo: {tbt_s: .inf}\n", 1, "slo.tbt_s", {"finite"}));
  EXPECT_TRUE(fails_with("slo: {tbt: p99, ttft_s: 1}\n", 1, "slo.tbt", {"expected one of", "mean", "max"}));
  EXPECT_TRUE(fails_with(kCached + "replicas:\n  count: 2\n  router: prefix_aware\n  prefix_aware:\n"
                                   "    balance_rel_threshold: 0.5\n",
                         7, "replicas.prefix_aware.balance_rel_threshold", {"ratio >= 1"}));
}

TEST(ReplicasConfigErrors, Overrides) {
  const std::string head = "replicas:\n  count: 2\n  overrides:\n";
  EXPECT_TRUE(fails_with(head + "    - {index: 1, workload: {kind: synthetic}}\n", 4,
                         "replicas.overrides[0].workload", {"unknown key", "gpu", "the cluster's"}));
  EXPECT_TRUE(fails_with(head + "    - {index: 1, kv: {slotz: 5}}\n", 4, "replicas.overrides[0].kv.slotz",
                         {"unknown key"}));
  EXPECT_TRUE(fails_with(head + "    - {index: 1, scheduler: {kind: fifo}}\n", 4,
                         "replicas.overrides[0].scheduler.kind", {"expected one of"}));
  EXPECT_TRUE(fails_with(head + "    - {index: 2, gpu: h200}\n", 4, "replicas.overrides[0].index",
                         {"[0, 1]", "found 2"}));
  EXPECT_TRUE(fails_with(head + "    - {gpu: h200}\n", 4, "replicas.overrides[0]", {"expected an index"}));
  EXPECT_TRUE(fails_with(head + "    - {index: 1, gpu: h200}\n    - {index: 1, gpu: a100-80gb}\n", 5,
                         "replicas.overrides[1].index", {"already has an override"}));
  EXPECT_TRUE(fails_with(head + "    - 3\n", 4, "replicas.overrides[0]", {"expected a map"}));
  // Prefix caches of different block sizes could not share the request's block keys.
  EXPECT_TRUE(fails_with(kCached + head + "    - {index: 1, allocator: {block_size: 32}}\n", 6, "replicas.overrides",
                         {"replica 1 caches prefixes in blocks of 32", "must share allocator.block_size"}));
}

TEST(ReplicasConfig, Disaggregated) {
  const ExperimentConfig c = parse(
      "replicas:\n  count: 4\n  disaggregated: {prefill: 1, transfer_gbps: 100, transfer_latency_us: 30, "
      "decode_router: least_outstanding}\n");
  const DisaggregationSettings& d = c.replicas.disaggregated;
  EXPECT_TRUE(d.enabled());
  EXPECT_EQ(d.prefill, 1);
  EXPECT_EQ(d.transfer_gbps, 100);
  EXPECT_EQ(d.transfer_latency_us, 30);
  EXPECT_EQ(d.decode_router, RouterKind::kLeastOutstanding);
  EXPECT_FALSE(c.replicas.at_default());
  const YAML::Node y = to_yaml(c)["replicas"]["disaggregated"];
  EXPECT_EQ(y["prefill"].as<int>(), 1);
  EXPECT_EQ(y["decode_router"].as<std::string>(), "least_outstanding");
  // The default decode router; co-located clusters write no disaggregated section.
  EXPECT_EQ(parse("replicas: {count: 2, disaggregated: {prefill: 1, transfer_gbps: 1}}\n").replicas.disaggregated
                .decode_router,
            RouterKind::kLeastKv);
  EXPECT_FALSE(to_yaml(parse("replicas: 2\n"))["replicas"]["disaggregated"]);
}

TEST(ReplicasConfigErrors, Disaggregated) {
  const std::string head = "replicas:\n  count: 3\n  disaggregated:\n";
  EXPECT_TRUE(fails_with(head + "    prefill: 3\n    transfer_gbps: 10\n", 4, "replicas.disaggregated.prefill",
                         {"[1, 2]", "found 3"}));
  EXPECT_TRUE(fails_with(head + "    prefill: 0\n    transfer_gbps: 10\n", 4, "replicas.disaggregated.prefill",
                         {"found 0"}));
  EXPECT_TRUE(fails_with("replicas:\n  count: 1\n  disaggregated: {prefill: 1, transfer_gbps: 10}\n", 3,
                         "replicas.disaggregated.prefill", {"replicas.count is 1"}));
  EXPECT_TRUE(fails_with(head + "    prefill: 1\n", 4, "replicas.disaggregated", {"expected transfer_gbps"}));
  EXPECT_TRUE(fails_with(head + "    prefill: 1\n    transfer_gbps: -5\n", 5,
                         "replicas.disaggregated.transfer_gbps", {"> 0", "found -5"}));
  EXPECT_TRUE(fails_with(head + "    prefill: 1\n    transfer_gbps: 5\n    transfer_latency_us: -1\n", 6,
                         "replicas.disaggregated.transfer_latency_us", {">= 0", "found -1"}));
  EXPECT_TRUE(fails_with(head + "    prefill: 1\n    transfer_gbps: 5\n    decode_router: prefix_aware\n", 6,
                         "replicas.disaggregated.decode_router", {"least_kv"}));
  EXPECT_TRUE(fails_with(head + "    prefill: 1\n    transfer_gbps: 5\n    decode_routr: least_kv\n", 6,
                         "replicas.disaggregated.decode_routr", {"unknown key"}));
  EXPECT_TRUE(fails_with(head + "    prefill: 1\n    transfer_gbps: 5\n    decode_router: fastest\n", 6,
                         "replicas.disaggregated.decode_router", {"expected one of", "found 'fastest'"}));
  // One model's KV moves between the replicas: they all run it.
  EXPECT_TRUE(fails_with(head + "    {prefill: 1, transfer_gbps: 5}\n  overrides:\n    - {index: 2, model: opt-66b}\n",
                         6, "replicas.overrides[0].model", {"replica 2 runs model 'opt-66b'", "same model"}));
}

// Issue 24 item 11: link values whose transfers would end past the simulated-time bound
// (or whose bytes per second overflow) are refused at their key and line.
TEST(ReplicasConfigErrors, HugeOrTinyLinkValuesAreRefusedAtTheirKey) {
  const std::string cache = kCached + "replicas:\n  count: 3\n  global_cache:\n";
  EXPECT_TRUE(fails_with(cache + "    bandwidth_gbps: 1e308\n", 6, "replicas.global_cache.bandwidth_gbps",
                         {"[0.001, 1e+06]", "found 1e+308"}));
  EXPECT_TRUE(fails_with(cache + "    bandwidth_gbps: 1e-300\n", 6, "replicas.global_cache.bandwidth_gbps",
                         {"[0.001, 1e+06]", "found 1e-300"}));
  EXPECT_TRUE(fails_with(cache + "    bandwidth_gbps: 10\n    latency_us: 1e300\n", 7,
                         "replicas.global_cache.latency_us", {"[0, 1e+09]", "found 1e+300"}));
  const std::string pd = "replicas:\n  count: 3\n  disaggregated:\n    prefill: 1\n";
  EXPECT_TRUE(fails_with(pd + "    transfer_gbps: 1e308\n", 5, "replicas.disaggregated.transfer_gbps",
                         {"[0.001, 1e+06]", "found 1e+308"}));
  EXPECT_TRUE(fails_with(pd + "    transfer_gbps: 5\n    transfer_latency_us: 1e300\n", 6,
                         "replicas.disaggregated.transfer_latency_us", {"[0, 1e+09]", "found 1e+300"}));
}

TEST(ReplicasConfig, GlobalCache) {
  const ExperimentConfig c = parse(kCached +
                                   "replicas:\n  count: 4\n  global_cache: {source: shared_pool, bandwidth_gbps: 200, "
                                   "latency_us: 20, shared_pool_gib: 64}\n");
  const GlobalCacheSettings& g = c.replicas.global_cache;
  EXPECT_TRUE(g.enabled);
  EXPECT_EQ(g.source, GlobalCacheSource::kSharedPool);
  EXPECT_EQ(g.bandwidth_gbps, 200);
  EXPECT_EQ(g.latency_us, 20);
  EXPECT_EQ(g.shared_pool_gib, 64);
  EXPECT_FALSE(c.replicas.at_default());
  const YAML::Node y = to_yaml(c)["replicas"]["global_cache"];
  EXPECT_EQ(y["source"].as<std::string>(), "shared_pool");
  EXPECT_EQ(y["shared_pool_gib"].as<double>(), 64);
  // peers is the default source, and writes no pool size (the reader would refuse it).
  const ExperimentConfig peers = parse(kCached + "replicas: {count: 2, global_cache: {bandwidth_gbps: 100}}\n");
  EXPECT_EQ(peers.replicas.global_cache.source, GlobalCacheSource::kPeers);
  const YAML::Node py = to_yaml(peers)["replicas"]["global_cache"];
  EXPECT_EQ(py["source"].as<std::string>(), "peers");
  EXPECT_FALSE(py["shared_pool_gib"]);
  EXPECT_NO_THROW(parse(emit(to_yaml(peers))));
  EXPECT_NO_THROW(parse(emit(to_yaml(c))));
  // Without the section: local caches, and nothing written.
  const ExperimentConfig local = parse(kCached + "replicas: 2\n");
  EXPECT_FALSE(local.replicas.global_cache.enabled);
  EXPECT_FALSE(to_yaml(local)["replicas"]["global_cache"]);
}

TEST(ReplicasConfigErrors, GlobalCache) {
  const std::string head = kCached + "replicas:\n  count: 3\n  global_cache:\n";
  EXPECT_TRUE(fails_with(head + "    source: peers\n", 6, "replicas.global_cache", {"expected bandwidth_gbps"}));
  EXPECT_TRUE(fails_with(head + "    bandwidth_gbps: -1\n", 6, "replicas.global_cache.bandwidth_gbps",
                         {"> 0", "found -1"}));
  EXPECT_TRUE(fails_with(head + "    bandwidth_gbps: 10\n    latency_us: -3\n", 7,
                         "replicas.global_cache.latency_us", {">= 0", "found -3"}));
  EXPECT_TRUE(fails_with(head + "    bandwidth_gbps: 10\n    source: shared_pool\n", 7,
                         "replicas.global_cache.source", {"needs shared_pool_gib", "found 0"}));
  EXPECT_TRUE(fails_with(head + "    bandwidth_gbps: 10\n    source: shared_pool\n    shared_pool_gib: -2\n", 8,
                         "replicas.global_cache.shared_pool_gib", {"found -2"}));
  EXPECT_TRUE(fails_with(head + "    bandwidth_gbps: 10\n    shared_pool_gib: 4\n", 7,
                         "replicas.global_cache.shared_pool_gib", {"source is 'peers'"}));
  EXPECT_TRUE(fails_with(head + "    bandwidth_gbps: 10\n    source: cloud\n", 7, "replicas.global_cache.source",
                         {"expected one of", "found 'cloud'"}));
  EXPECT_TRUE(fails_with(head + "    bandwidth_gbp: 10\n", 6, "replicas.global_cache.bandwidth_gbp", {"unknown key"}));
  EXPECT_TRUE(fails_with(kCached + "replicas:\n  count: 1\n  global_cache: {bandwidth_gbps: 10}\n", 5,
                         "replicas.global_cache", {"replicas.count is 1"}));
  // Fetched blocks land in the replica's paged prefix cache: every serving replica has one.
  EXPECT_TRUE(fails_with("replicas:\n  count: 2\n  global_cache: {bandwidth_gbps: 10}\n", 3, "replicas.global_cache",
                         {"replica 0", "prefix_cache: true"}));
  EXPECT_TRUE(fails_with(head + "    bandwidth_gbps: 10\n  overrides:\n    - {index: 2, allocator: {prefix_cache: false}}\n",
                         6, "replicas.global_cache", {"replica 2", "prefix_cache: false"}));
}

}  // namespace
}  // namespace pagesim::sim
