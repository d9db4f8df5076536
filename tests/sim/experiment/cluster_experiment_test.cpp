// Experiments of several replicas end to end: summary.json's cluster, replicas and slo
// sections and their identities (routed requests and iterations sum to the cluster's,
// summed memory classes fill the summed pools), iterations.csv's replica column, sweep.csv's
// slo.* and cluster.* columns, byte-identical reruns, one-replica runs with none of it, and
// prefix_aware routing over sglang's radix pools, and a global cache end to end.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include <yaml-cpp/yaml.h>

#include "sim/experiment/experiment.h"
#include "sim/metrics/summary.h"
#include "sim_harness.h"
#include "temp_dir_test.h"
#include "throws_config_error.h"

namespace pagesim::sim {
namespace {

namespace fs = std::filesystem;
using testing::kAnyLine;
using testing::read_file;
using testing::throws_config_error;

const std::string kShareGpt = (fs::path(PAGESIM_SOURCE_DIR) / "traces/data/sharegpt_opt_lengths.csv").string();
const std::string kMooncake = (fs::path(PAGESIM_SOURCE_DIR) / "traces/data/mooncake_conversation_trace.jsonl").string();

class ClusterExperimentTest : public testing::TempDirTest {};

std::string config(const std::string& extra) {
  return "name: small\n"
         "seed: 3\n"
         "workload:\n"
         "  kind: synthetic\n"
         "  arrival: {kind: poisson, rate: 30}\n"
         "  lengths: {kind: empirical, path: '" + kShareGpt + "'}\n"
         "  max_total_tokens: 2048\n"
         "  max_requests: 300\n"
         "model: opt-13b\n"
         "gpu: a100-40gb\n"
         "kv: {slots: 4096}\n"
         "allocator: {kind: paged, block_size: 16}\n"
         "scheduler: {kind: vllm}\n"
         "cost: {kind: roofline}\n" + extra;
}

// A shared pool smaller than one block of the model would never hold anything: the run
// would report a global cache that cannot cache.
TEST_F(ClusterExperimentTest, ASharedPoolThatHoldsNoBlockIsAnError) {
  const std::string file = write("tiny.yaml",
                                 "workload:\n"
                                 "  kind: trace\n"
                                 "  trace: {path: '" + kMooncake + "', format: mooncake}\n"
                                 "  max_requests: 20\n"
                                 "model: llama-2-7b\n"
                                 "gpu: a100-80gb\n"
                                 "max_model_len: off\n"
                                 "kv: {slots: 200000}\n"
                                 "allocator: {kind: paged, block_size: 16, prefix_cache: true}\n"
                                 "scheduler: {kind: vllm-v1}\n"
                                 "replicas:\n"
                                 "  count: 2\n"
                                 "  global_cache: {source: shared_pool, bandwidth_gbps: 100, shared_pool_gib: 1.0e-9}\n");
  EXPECT_TRUE(throws_config_error([&] { run_experiment_file(file, {}, dir_ / "out"); }, file, kAnyLine,
                                  "replicas.global_cache.shared_pool_gib", {"expected at least 1 block"}));
  EXPECT_FALSE(fs::exists(dir_ / "out"));
}

// check_run (what a sweep runs before any point) builds one replica of each configuration:
// its error names the same replica, at the same line, as building the whole cluster does.
TEST_F(ClusterExperimentTest, CheckRunBuildsEachReplicaConfigurationOnceAndFailsAsTheRunDoes) {
  const std::string ok = write("ok.yaml", config("replicas:\n"
                                                 "  count: 5\n"
                                                 "  overrides:\n"
                                                 "    - {index: 3, kv: {slots: 8192}}\n"));
  const ExperimentConfig c = parse_experiment(load_yaml_file(ok), ok);
  EXPECT_EQ(build_run(c).other_replicas.size(), 4u);
  const sim::Run checked = check_run(c);
  EXPECT_TRUE(checked.other_replicas.empty());
  EXPECT_EQ(checked.kv_slots, 4096);
  const std::string bad = write("bad.yaml", config("replicas:\n"                                   // line 15
                                                   "  count: 5\n"                                  // 16
                                                   "  overrides:\n"                                // 17
                                                   "    - {index: 3, cost: {kind: profile, profile: missing.csv}}\n"));  // 18
  const ExperimentConfig b = parse_experiment(load_yaml_file(bad), bad);
  for (const auto& build : {std::function<void()>([&] { build_run(b); }), std::function<void()>([&] { check_run(b); })})
    EXPECT_TRUE(throws_config_error(build, bad, 18, "cost.profile", {"replica 3: ", "missing.csv"}));
}

// The replicas of one configuration share its first replica's cost model (immutable), so that
// a fleet's iterations read one copy; a replica with a configuration of its own has its own.
TEST_F(ClusterExperimentTest, ReplicasOfOneConfigurationShareTheirCostModel) {
  const std::string file = write("share.yaml", config("replicas:\n"
                                                      "  count: 5\n"
                                                      "  overrides:\n"
                                                      "    - {index: 3, kv: {slots: 8192}}\n"));
  const sim::Run run = build_run(parse_experiment(load_yaml_file(file), file));
  ASSERT_EQ(run.other_replicas.size(), 4u);
  for (const std::size_t i : {0u, 1u, 3u}) EXPECT_EQ(run.other_replicas[i].cost, run.cost) << "replica " << i + 1;
  ASSERT_NE(run.other_replicas[2].cost, nullptr);
  EXPECT_NE(run.other_replicas[2].cost, run.cost);
}

// A request that fits replica 0 but not replica 1's override is reported at the override's
// line with replica 1's numbers, not the file's top-level ones.
TEST_F(ClusterExperimentTest, AnUnschedulableRequestNamesTheReplicasOwnSetting) {
  const std::string file = write("over.yaml", config("replicas:\n"             // line 15
                                                     "  count: 2\n"           // 16
                                                     "  overrides:\n"         // 17
                                                     "    - {index: 1, kv: {slots: 32}}\n"));  // 18
  EXPECT_TRUE(throws_config_error([&] { run_experiment_file(file, {}, dir_ / "out"); }, file, 18, "kv.slots",
                                  {"on replica 1", "the KV pool holds 32 slots"}));
}

TEST_F(ClusterExperimentTest, SummaryHasClusterReplicasAndSlo) {
  const std::string file = write("c.yaml", config("replicas:\n  count: 3\n  router: least_outstanding\n"
                                                  "  overrides:\n    - {index: 1, kv: {slots: 8192}}\n"
                                                  "slo: {ttft_s: 0.5, tbt_s: 0.05}\n"));
  run_experiment_file(file, {}, dir_ / "out");
  const auto j = nlohmann::json::parse(read_file(dir_ / "out/summary.json"));
  ASSERT_TRUE(j.contains("cluster") && j.contains("replicas") && j.contains("slo"));
  const auto& c = j["cluster"];
  EXPECT_EQ(c["replicas"], 3);
  EXPECT_EQ(c["router"], "least_outstanding");
  EXPECT_EQ(c["kv_slots"], 4096 + 8192 + 4096);
  std::int64_t routed = 0, iterations = 0, finished = 0;
  for (const auto& r : j["replicas"]) {
    routed += r["requests_routed"].get<std::int64_t>();
    iterations += r["iterations"].get<std::int64_t>();
    finished += r["requests_finished"].get<std::int64_t>();
    EXPECT_FALSE(r.contains("wall_s"));
  }
  EXPECT_EQ(j["replicas"][1]["kv_slots"], 8192);
  EXPECT_EQ(routed, j["requests_arrived"].get<std::int64_t>());
  EXPECT_EQ(finished, j["requests_finished"].get<std::int64_t>());
  EXPECT_EQ(iterations, j["iterations"].get<std::int64_t>());
  // The time-weighted classes of each pool sum to it, so the summed classes fill the cluster.
  const auto& m = c["memory_slots_time_weighted"];
  const double sum = m["token_states"].get<double>() + m["reserved"].get<double>() + m["over_reserved"].get<double>() +
                     m["rounding"].get<double>() + m["free"].get<double>();
  EXPECT_NEAR(sum, 16384.0, 1e-6);
  // The top-level memory averages are over every replica's iterations, each a % of its own
  // pool: per iteration, and weighted by each iteration's duration (iterations.csv's rows).
  double per_iteration = 0, weighted = 0, seconds = 0, n = 0;
  for (const auto& row : testing::parse_csv(read_file(dir_ / "out/iterations.csv"))) {
    const double slots = row.at("replica") == "1" ? 8192 : 4096;
    const double pct = 100.0 * std::stod(row.at("token_states")) / slots;
    const double duration = std::stod(row.at("duration_s"));
    per_iteration += pct;
    weighted += pct * duration;
    seconds += duration;
    ++n;
  }
  EXPECT_NEAR(j["memory_pct"]["token_states"].get<double>(), per_iteration / n, 1e-9);
  EXPECT_NEAR(j["memory_pct_time_weighted"]["token_states"].get<double>(), weighted / seconds, 1e-9);
  const auto& lb = c["load_balance"]["requests"];
  EXPECT_NEAR(lb["mean"].get<double>() * 3, static_cast<double>(routed), 1e-9);
  EXPECT_GE(lb["max_over_mean"].get<double>(), 1.0);
  const auto& slo = j["slo"];
  EXPECT_EQ(slo["requests_finished"], j["requests_finished"]);
  EXPECT_LE(slo["requests_meeting_both"].get<std::int64_t>(), slo["requests_meeting_ttft"].get<std::int64_t>());
  EXPECT_NEAR(slo["goodput_rps"].get<double>(),
              slo["requests_meeting_both"].get<double>() / j["sim_time_s"].get<double>(), 1e-12);
  // iterations.csv opens with the replica, and all three replicas ran.
  const auto rows = testing::parse_csv(read_file(dir_ / "out/iterations.csv"));
  ASSERT_FALSE(rows.empty());
  std::set<std::string> seen;
  for (const auto& r : rows) seen.insert(r.at("replica"));
  EXPECT_EQ(seen, (std::set<std::string>{"0", "1", "2"}));
  EXPECT_EQ(read_file(dir_ / "out/iterations.csv").rfind("replica,index,", 0), 0u);
}

// A replica whose kv.slots is not a whole number of blocks (4,100 in blocks of 16) holds 4,096
// slots: the replica's kv_slots, the cluster's sum and the slots its memory classes are
// summed into are the pools simulated — the classes of each replica's iterations.csv rows
// fill its reported kv_slots — and the override's line is warned about (issue 24, item 5).
TEST_F(ClusterExperimentTest, ReplicaPoolsAreReportedAsSimulated) {
  const std::string file = write("c.yaml", config("replicas:\n"                             // line 15
                                                  "  count: 2\n"                           // 16
                                                  "  overrides:\n"                         // 17
                                                  "    - {index: 1, kv: {slots: 4100}}\n"));  // 18
  run_experiment_file(file, {}, dir_ / "out");
  const auto j = nlohmann::json::parse(read_file(dir_ / "out/summary.json"));
  EXPECT_EQ(j["replicas"][0]["kv_slots"], 4096);
  EXPECT_EQ(j["replicas"][1]["kv_slots"], 4096);
  EXPECT_EQ(j["cluster"]["kv_slots"], 8192);
  const auto& m = j["cluster"]["memory_slots_time_weighted"];
  double sum = 0;
  for (const char* k : {"token_states", "reserved", "over_reserved", "rounding", "free"}) sum += m[k].get<double>();
  EXPECT_NEAR(sum, 8192.0, 1e-6);
  ASSERT_TRUE(j.contains("warnings"));
  EXPECT_EQ(j["warnings"][0], file + ":18: kv.slots: 4100 slots are not a whole number of blocks of "
                              "allocator.block_size = 16: the paged pool holds 256 blocks = 4096 slots, "
                              "which the run simulates and reports as kv_slots (4096 or 4112 would be whole blocks)");
  const auto rows = testing::parse_csv(read_file(dir_ / "out/iterations.csv"));
  ASSERT_FALSE(rows.empty());
  for (const auto& r : rows) {
    std::int64_t classes = 0;
    for (const char* k : {"token_states", "reserved", "over_reserved", "rounding", "free"}) classes += std::stoll(r.at(k));
    ASSERT_EQ(classes, j["replicas"][std::stoi(r.at("replica"))]["kv_slots"].get<std::int64_t>())
        << "replica " << r.at("replica") << ", iteration " << r.at("index");
  }
}

TEST_F(ClusterExperimentTest, SameSeedSameBytes) {
  const std::string file = write("c.yaml", config("replicas: {count: 4, router: random}\nslo: {ttft_s: 1}\n"));
  run_experiment_file(file, {}, dir_ / "a");
  run_experiment_file(file, {}, dir_ / "b");
  for (const char* f : {"iterations.csv", "requests.csv", "config.resolved.yaml"})
    EXPECT_EQ(read_file(dir_ / "a" / f), read_file(dir_ / "b" / f)) << f;
  auto strip = [](nlohmann::json j) {
    for (const char* k : {"wall_s", "sim_seconds_per_wall_second", "iterations_per_wall_second"}) j.erase(k);
    return j;
  };
  EXPECT_EQ(strip(nlohmann::json::parse(read_file(dir_ / "a/summary.json"))),
            strip(nlohmann::json::parse(read_file(dir_ / "b/summary.json"))));
  // Another seed routes otherwise.
  run_experiment_file(file, {"seed=4"}, dir_ / "c");
  EXPECT_NE(read_file(dir_ / "a/iterations.csv"), read_file(dir_ / "c/iterations.csv"));
}

// A cluster run's config.resolved.yaml runs again to the same results, under every router
// (it once held replicas.prefix_aware whatever the router, which the reader refuses).
TEST_F(ClusterExperimentTest, ResolvedConfigRunsAgain) {
  for (const char* router : {"round_robin", "least_kv", "random"}) {
    SCOPED_TRACE(router);
    const std::string file = write("c.yaml", config("replicas: {count: 2, router: " + std::string(router) + "}\n"));
    run_experiment_file(file, {}, dir_ / router / "a");
    const std::string resolved = read_file(dir_ / router / "a/config.resolved.yaml");
    EXPECT_EQ(resolved.find("prefix_aware"), std::string::npos) << resolved;
    run_experiment_file((dir_ / router / "a/config.resolved.yaml").string(), {}, dir_ / router / "b");
    EXPECT_EQ(read_file(dir_ / router / "a/requests.csv"), read_file(dir_ / router / "b/requests.csv"));
  }
}

// An override that gives replica 0 a pool of another kind: the top level and the entry each
// record the row length and buddy chunk their replicas ran with, so the resolved config runs
// again to the same results (the top level once took replica 0's, which the paged pool then
// refused as contiguous keys, and the entry the file's 2048).
TEST_F(ClusterExperimentTest, ResolvedConfigWithAnOverriddenReplicaZeroRunsAgain) {
  const std::string file =
      write("c.yaml", config("replicas:\n  count: 2\n  router: round_robin\n  overrides:\n"
                             "    - {index: 0, model: llama-2-7b, kv: {slots: 8192}, allocator: {kind: contiguous}, "
                             "scheduler: {kind: orca}}\n"));
  run_experiment_file(file, {}, dir_ / "a");
  run_experiment_file((dir_ / "a/config.resolved.yaml").string(), {}, dir_ / "b");
  EXPECT_EQ(read_file(dir_ / "a/requests.csv"), read_file(dir_ / "b/requests.csv"));
  EXPECT_EQ(read_file(dir_ / "a/config.resolved.yaml"), read_file(dir_ / "b/config.resolved.yaml"));
  const YAML::Node resolved = YAML::LoadFile((dir_ / "a/config.resolved.yaml").string());
  EXPECT_EQ(resolved["allocator"]["max_chunk_blocks"].as<int>(), 128);  // the paged top level's own
  EXPECT_EQ(resolved["replicas"]["overrides"][0]["allocator"]["max_seq_len"].as<int>(), 4096);  // llama-2-7b's
  EXPECT_EQ(resolved["replicas"]["overrides"][0]["allocator"]["max_chunk_blocks"].as<int>(), 256);
}

TEST_F(ClusterExperimentTest, OneReplicaWritesNoneOfIt) {
  const std::string file = write("c.yaml", config(""));
  run_experiment_file(file, {}, dir_ / "out");
  const std::string summary = read_file(dir_ / "out/summary.json");
  for (const char* k : {"\"cluster\"", "\"replicas\"", "\"slo\""}) EXPECT_EQ(summary.find(k), std::string::npos) << k;
  EXPECT_EQ(read_file(dir_ / "out/iterations.csv").rfind("index,", 0), 0u);
  EXPECT_EQ(read_file(dir_ / "out/config.resolved.yaml").find("replicas"), std::string::npos);
  // `replicas: 1` is the same run, byte for byte.
  const std::string one = write("one.yaml", config("replicas: 1\n"));
  run_experiment_file(one, {}, dir_ / "one");
  for (const char* f : {"iterations.csv", "requests.csv", "config.resolved.yaml"})
    EXPECT_EQ(read_file(dir_ / "out" / f), read_file(dir_ / "one" / f)) << f;
}

TEST_F(ClusterExperimentTest, SweepTableGainsSloAndClusterColumns) {
  const std::string file = write("s.yaml", config("slo: {ttft_s: 0.5}\nsweep:\n  replicas.count: [1, 2]\n"));
  run_experiment_file(file, {}, dir_ / "out");
  const auto rows = testing::parse_csv(read_file(dir_ / "out/sweep.csv"));
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_FALSE(rows[0].at("slo.goodput_rps").empty());
  EXPECT_TRUE(rows[0].at("cluster.replicas").empty());  // one replica: no cluster section
  EXPECT_EQ(rows[1].at("cluster.replicas"), "2");
  EXPECT_FALSE(rows[1].at("cluster.load_balance.requests.max_over_mean").empty());
}

// prefix_aware asks each replica's pool how much of a prompt it holds
// (KvAllocator::cached_prefix_tokens): over three sglang replicas, radix pools in pages of
// 16, on 300 requests of the Mooncake conversation trace, it sends turns after the replica
// that served their conversation and hits more than round_robin (4.7% against 4.1%: a
// replica whose batch is full admits nothing until it shrinks, SGLang's batch_is_full).
TEST_F(ClusterExperimentTest, PrefixAwareRoutesOverRadixPools) {
  auto run = [&](const std::string& router) {
    const std::string yaml = "name: radix\n"
                             "seed: 1\n"
                             "workload:\n"
                             "  kind: trace\n"
                             "  trace: {path: '" + kMooncake + "', format: mooncake}\n"
                             "  max_requests: 300\n"
                             "model: llama-2-7b\n"
                             "gpu: a100-80gb\n"
                             "max_model_len: off\n"
                             "kv: {slots: 200000}\n"
                             "allocator: {kind: radix, block_size: 16}\n"
                             "scheduler: {kind: sglang}\n"
                             "cost: {kind: roofline}\n"
                             "replicas: {count: 3, router: " + router + "}\n";
    const auto res = run_experiment_file(write(router + ".yaml", yaml), {}, dir_ / router);
    EXPECT_EQ(res.size(), 1u);
    EXPECT_TRUE(res[0].summary.prefix_cache.has_value());
    EXPECT_EQ(res[0].summary.requests_finished, 300);
    return res[0].summary.prefix_hit_rate;
  };
  const double aware = run("prefix_aware"), spread = run("round_robin");
  EXPECT_GT(spread, 0.0);
  EXPECT_GT(aware, spread + 0.005) << "prefix_aware " << aware << " vs round_robin " << spread;
}

// Disaggregated: arrivals go to the prefill replicas only, every request with more than one
// token is handed to a decode replica and finishes there, and the KV transfer of the model's
// bytes at the configured link is inside every such request's first-to-last-token time.
TEST_F(ClusterExperimentTest, DisaggregatedHandsEveryMultiTokenRequestToADecodeReplica) {
  const std::string file = write("d.yaml", config("replicas:\n  count: 4\n  router: least_outstanding\n"
                                                  "  disaggregated: {prefill: 2, transfer_gbps: 100, "
                                                  "transfer_latency_us: 20}\n"));
  run_experiment_file(file, {}, dir_ / "out");
  const auto j = nlohmann::json::parse(read_file(dir_ / "out/summary.json"));
  std::int64_t routed = 0, transfers = 0, finished_on_decode = 0, finished = 0;
  for (const auto& r : j["replicas"]) {
    const bool prefill = r["index"].get<int>() < 2;
    EXPECT_EQ(r["role"], prefill ? "prefill" : "decode");
    routed += r["requests_routed"].get<std::int64_t>();
    transfers += r["kv_transfers_in"].get<std::int64_t>();
    finished += r["requests_finished"].get<std::int64_t>();
    if (prefill) {
      EXPECT_EQ(r["kv_transfers_in"], 0);
    } else {
      EXPECT_EQ(r["requests_routed"], 0);
      finished_on_decode += r["requests_finished"].get<std::int64_t>();
    }
  }
  EXPECT_EQ(routed, j["requests_arrived"].get<std::int64_t>());
  EXPECT_EQ(finished, j["requests_finished"].get<std::int64_t>());
  EXPECT_EQ(finished_on_decode, transfers);
  // OPT-13B: 2 (K, V) x 40 layers x 5,120 hidden x 2 bytes = 819,200 bytes per token.
  const double bytes_per_s = 100e9 / 8, bytes_per_token = 819200;
  std::int64_t multi = 0;
  for (const auto& row : testing::parse_csv(read_file(dir_ / "out/requests.csv"))) {
    if (std::stoll(row.at("output_tokens")) < 2) continue;
    ++multi;
    const double transfer = 20e-6 + std::stod(row.at("prompt_tokens")) * bytes_per_token / bytes_per_s;
    EXPECT_GT(std::stod(row.at("finish_s")) - std::stod(row.at("first_token_s")), transfer) << row.at("id");
  }
  EXPECT_EQ(multi, transfers);
  EXPECT_GT(transfers, 200);
}

// A prompt is admitted once, wherever its KV later moves: under disaggregated prefill/decode
// with a prefix cache the decode replicas receive KV, they look nothing up, so the cluster's
// prompt tokens are the workload's and its hit rate is the prefill replica's (issue 24, 1).
TEST_F(ClusterExperimentTest, DisaggregatedPrefixCacheCountsEachPromptOnce) {
  const std::string file = write("pd.yaml",
                                 "name: pd\n"
                                 "seed: 1\n"
                                 "workload:\n"
                                 "  kind: trace\n"
                                 "  trace: {path: '" + kMooncake + "', format: mooncake}\n"
                                 "  max_requests: 120\n"
                                 "model: llama-3-8b\n"
                                 "gpu: h200\n"
                                 "max_model_len: off\n"
                                 "kv: {slots: 400000}\n"
                                 "allocator: {kind: paged, block_size: 16, prefix_cache: true}\n"
                                 "scheduler: {kind: vllm-v1}\n"
                                 "cost: {kind: roofline}\n"
                                 "replicas: {count: 3, disaggregated: {prefill: 1, transfer_gbps: 400}}\n");
  run_experiment_file(file, {}, dir_ / "out");
  const auto j = nlohmann::json::parse(read_file(dir_ / "out/summary.json"));
  std::int64_t prompts = 0;
  for (const auto& row : testing::parse_csv(read_file(dir_ / "out/requests.csv"))) prompts += std::stoll(row.at("prompt_tokens"));
  ASSERT_EQ(j["requests_finished"], 120);
  EXPECT_EQ(j["prefix_cache"]["prompt_tokens"].get<std::int64_t>(), prompts);
  const auto& replicas = j["replicas"];
  EXPECT_EQ(replicas[0]["prefix_cache"]["prompt_tokens"].get<std::int64_t>(), prompts);
  for (std::size_t i = 1; i < replicas.size(); ++i) EXPECT_EQ(replicas[i]["prefix_cache"]["prompt_tokens"], 0) << i;
  EXPECT_GT(j["prefix_hit_rate"].get<double>(), 0.0);
  EXPECT_DOUBLE_EQ(j["prefix_hit_rate"].get<double>(), replicas[0]["prefix_hit_rate"].get<double>());
  std::int64_t row_prompts = 0;
  for (const auto& row : testing::parse_csv(read_file(dir_ / "out/iterations.csv")))
    row_prompts += std::stoll(row.at("prefix_prompt_tokens"));
  EXPECT_EQ(row_prompts, prompts);
}

// The partitioning memory classes of `m` (a memory_pct object, with the layer classes of
// `layers` when given) sum to 100%.
double class_sum(const nlohmann::json& m, const nlohmann::json* layers = nullptr) {
  double sum = 0;
  for (const char* k : {"token_states", "reserved", "over_reserved", "rounding", "free"}) sum += m.at(k).get<double>();
  if (layers)
    for (const char* k : {"out_of_window", "recurrent_state", "unused_layers"}) sum += layers->at(k).get<double>();
  return sum;
}

// Every memory-class set pagesim writes sums to 100%, per replica and for the cluster, also
// with a replica that never receives a request (its pool was all free) (issue 24, 2).
TEST_F(ClusterExperimentTest, MemoryClassesSumToAHundredWithAnIdleReplica) {
  const std::string file = write("idle.yaml", "name: idle\n"
                                              "workload:\n"
                                              "  kind: synthetic\n"
                                              "  arrival: {kind: poisson, rate: 30}\n"
                                              "  lengths: {kind: empirical, path: '" + kShareGpt + "'}\n"
                                              "  max_total_tokens: 2048\n"
                                              "  max_requests: 2\n"
                                              "model: opt-13b\n"
                                              "gpu: a100-40gb\n"
                                              "kv: {slots: 4096}\n"
                                              "replicas: {count: 3, router: round_robin}\n");
  run_experiment_file(file, {}, dir_ / "out");
  const auto j = nlohmann::json::parse(read_file(dir_ / "out/summary.json"));
  EXPECT_EQ(j["replicas"][2]["requests_routed"], 0);
  EXPECT_NEAR(class_sum(j["memory_pct"]), 100.0, 1e-9);
  EXPECT_NEAR(class_sum(j["memory_pct_time_weighted"]), 100.0, 1e-9);
  for (const auto& r : j["replicas"]) {
    EXPECT_NEAR(class_sum(r["memory_pct"]), 100.0, 1e-9) << r["index"];
    EXPECT_NEAR(class_sum(r["memory_pct_time_weighted"]), 100.0, 1e-9) << r["index"];
  }
  EXPECT_DOUBLE_EQ(j["replicas"][2]["memory_pct_time_weighted"]["free"].get<double>(), 100.0);
  EXPECT_NEAR(class_sum(j["cluster"]["memory_pct_time_weighted"]), 100.0, 1e-9);
}

// A layer-group model in a cluster: the recurrent-state and unused-layer classes have their
// cluster entries, and every set (rows, replicas, cluster) sums to the pool (issue 24, 2).
TEST_F(ClusterExperimentTest, LayerGroupClassesSumToAHundredInACluster) {
  const std::string file = write("jamba.yaml", "name: jamba\n"
                                               "workload:\n"
                                               "  kind: synthetic\n"
                                               "  arrival: {kind: poisson, rate: 30}\n"
                                               "  lengths: {kind: empirical, path: '" + kShareGpt + "'}\n"
                                               "  max_total_tokens: 2048\n"
                                               "  max_requests: 40\n"
                                               "model: jamba-v0.1\n"
                                               "gpu: h200\n"
                                               "kv: {slots: 65536}\n"
                                               "allocator: {kind: uniform}\n"
                                               "scheduler: {kind: vllm-v1}\n"
                                               "replicas: {count: 3, router: round_robin}\n");
  run_experiment_file(file, {}, dir_ / "out");
  const auto j = nlohmann::json::parse(read_file(dir_ / "out/summary.json"));
  EXPECT_NEAR(class_sum(j["memory_pct"], &j["layer_classes"]["memory_pct"]), 100.0, 1e-9);
  for (const auto& r : j["replicas"]) {
    EXPECT_NEAR(class_sum(r["memory_pct"], &r["layer_classes"]["memory_pct"]), 100.0, 1e-9) << r["index"];
    EXPECT_NEAR(class_sum(r["memory_pct_time_weighted"], &r["layer_classes"]["memory_pct_time_weighted"]), 100.0, 1e-9)
        << r["index"];
  }
  const auto& c = j["cluster"]["memory_pct_time_weighted"];
  ASSERT_TRUE(c.contains("recurrent_state") && c.contains("unused_layers")) << c;
  EXPECT_GT(c["recurrent_state"].get<double>() + c["unused_layers"].get<double>(), 0.0);
  EXPECT_NEAR(class_sum(c, &c), 100.0, 1e-9);
  // Each row's classes (in the allocator's unit) fill its replica's pool: one total per replica.
  std::map<std::string, std::int64_t> totals;
  for (const auto& row : testing::parse_csv(read_file(dir_ / "out/iterations.csv"))) {
    std::int64_t total = 0;
    for (const char* k : {"token_states", "reserved", "over_reserved", "rounding", "free", "out_of_window",
                          "recurrent_state", "unused_layers"})
      total += std::stoll(row.at(k));
    const auto it = totals.emplace(row.at("replica"), total).first;
    EXPECT_EQ(it->second, total) << "replica " << row.at("replica");
  }
  EXPECT_EQ(totals.size(), 3u);
}

// A global cache end to end (replicas.global_cache): summary.json's replicas[i].global_cache
// and cluster.global_cache hold each replica's and the summed fetches, local + remote hit
// rates make the prefix hit rate, every fetch is priced from the model's KV bytes at the
// configured link, round robin with peers hits more than without, and the resolved config
// (which writes the section) runs again to the same bytes.
TEST_F(ClusterExperimentTest, GlobalCacheFetchesAreCountedPerReplicaAndSummed) {
  auto yaml = [&](const std::string& global) {
    return "name: global\n"
           "seed: 1\n"
           "workload:\n"
           "  kind: trace\n"
           "  trace: {path: '" + kMooncake + "', format: mooncake}\n"
           "  max_requests: 300\n"
           "model: llama-3-8b\n"
           "gpu: h200\n"
           "max_model_len: off\n"
           "kv: {slots: 400000}\n"
           "allocator: {kind: paged, block_size: 16, prefix_cache: true}\n"
           "scheduler: {kind: vllm, max_num_batched_tokens: 131072}\n"
           "cost: {kind: roofline}\n"
           "replicas:\n  count: 3\n  router: round_robin\n" + global;
  };
  run_experiment_file(write("local.yaml", yaml("")), {}, dir_ / "local");
  run_experiment_file(write("g.yaml", yaml("  global_cache: {bandwidth_gbps: 100, latency_us: 10}\n")), {}, dir_ / "g");
  const auto local = nlohmann::json::parse(read_file(dir_ / "local/summary.json"));
  const auto j = nlohmann::json::parse(read_file(dir_ / "g/summary.json"));
  EXPECT_FALSE(local["cluster"].contains("global_cache"));
  EXPECT_FALSE(local["replicas"][0].contains("global_cache"));
  const auto& c = j["cluster"]["global_cache"];
  std::int64_t blocks = 0, remote = 0, fetch_iterations = 0;
  double seconds = 0;
  for (const auto& r : j["replicas"]) {
    const auto& g = r["global_cache"];
    blocks += g["fetched_blocks"].get<std::int64_t>();
    remote += g["remote_hit_tokens"].get<std::int64_t>();
    fetch_iterations += g["fetch_iterations"].get<std::int64_t>();
    seconds += g["fetch_s"].get<double>();
    EXPECT_EQ(g["local_hit_tokens"].get<std::int64_t>() + g["remote_hit_tokens"].get<std::int64_t>(),
              r["prefix_cache"]["hit_tokens"].get<std::int64_t>());
  }
  EXPECT_GT(blocks, 0);
  EXPECT_EQ(c["fetched_blocks"], blocks);
  EXPECT_EQ(c["remote_hit_tokens"], remote);
  EXPECT_NEAR(c["local_hit_rate"].get<double>() + c["remote_hit_rate"].get<double>(), j["prefix_hit_rate"].get<double>(),
              1e-12);
  // Llama-3-8B: 2 (K, V) x 32 layers x 8 KV heads x 128 x 2 bytes = 131,072 bytes per token.
  EXPECT_DOUBLE_EQ(c["fetched_bytes"].get<double>(), static_cast<double>(blocks) * 16 * 131072);
  EXPECT_NEAR(seconds, static_cast<double>(fetch_iterations) * 10e-6 + c["fetched_bytes"].get<double>() / (100e9 / 8),
              1e-9);
  EXPECT_GT(j["prefix_hit_rate"].get<double>(), local["prefix_hit_rate"].get<double>());
  // The resolved config holds the section and runs again to the same results.
  const std::string resolved = read_file(dir_ / "g/config.resolved.yaml");
  EXPECT_NE(resolved.find("global_cache"), std::string::npos);
  EXPECT_EQ(read_file(dir_ / "local/config.resolved.yaml").find("global_cache"), std::string::npos);
  run_experiment_file((dir_ / "g/config.resolved.yaml").string(), {}, dir_ / "again");
  EXPECT_EQ(read_file(dir_ / "g/requests.csv"), read_file(dir_ / "again/requests.csv"));
}

}  // namespace
}  // namespace pagesim::sim
