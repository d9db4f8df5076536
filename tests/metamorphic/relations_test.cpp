// Metamorphic relations: what must hold between runs, and inside one run, whatever the
// features combined. Each relation would have caught one of the bugs of issue #24 (a prompt
// counted twice in a P/D cluster, memory classes short of 100%, a resolved config that does
// not run, ...). Random configurations (random_experiment.h, seeds fixed) draw from every
// allocator, scheduler, router, tier and workload kind; the simulator refuses some
// combinations, which are skipped. PAGESIM_METAMORPHIC_VERBOSE=1 prints each draw that ran
// and each refusal.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "random_experiment.h"
#include "sim/config/config_error.h"
#include "sim/experiment/experiment.h"
#include "temp_dir_test.h"

namespace pagesim::sim {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::RandomExperiment;
using testing::read_file;

// Configurations per random relation: enough to draw every kind of each feature several
// times (about half the draws are refused), few enough for a sanitizer build.
constexpr std::uint64_t kDraws = 48;

// The classes of a memory breakdown that partition the pool (allocator/memory_breakdown.h;
// cached_free and unusable_free are parts of free).
const char* const kClasses[] = {"token_states",      "reserved",          "over_reserved", "rounding",
                                "free",              "out_of_window",     "recurrent_state", "unused_layers",
                                "adapter_weights",   "proposed_accepted", "proposed_rejected", "lookahead",
                                "draft_kv"};

double class_sum(const json& pct) {
  double s = 0;
  for (const char* c : kClasses)
    if (pct.contains(c)) s += pct.at(c).get<double>();
  return s;
}

// The classes of `key` (memory_pct or memory_pct_time_weighted) in a summary object (a run's
// or a replica's), with the classes written apart: "layer_classes" (a heterogeneous model's:
// sim/metrics/layer_class_records.h), "adapter_weights" (LoRA) and "speculative_classes".
double class_sum(const json& summary, const char* key) {
  double s = class_sum(summary.at(key));
  if (summary.contains("layer_classes")) s += class_sum(summary.at("layer_classes").at(key));
  if (summary.contains("adapter_weights")) s += summary.at("adapter_weights").at(key).get<double>();
  if (summary.contains("speculative_classes")) s += class_sum(summary.at("speculative_classes").at(key));
  return s;
}

json summary_without_host_timings(const fs::path& dir) {
  json j = json::parse(read_file(dir / "summary.json"));
  for (const char* k : {"wall_s", "sim_seconds_per_wall_second", "iterations_per_wall_second"}) j.erase(k);
  return j;
}

// A CSV as a header and rows of fields (no quoting: pagesim's numeric CSVs need none).
struct Csv {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::size_t column(const std::string& name) const {
    const auto it = std::find(header.begin(), header.end(), name);
    return it == header.end() ? header.size() : static_cast<std::size_t>(it - header.begin());
  }
};

Csv read_csv(const fs::path& p) {
  Csv c;
  std::istringstream in(read_file(p));
  std::string line;
  auto split = [](const std::string& s) {
    std::vector<std::string> f;
    std::string cur;
    for (char ch : s) {
      if (ch == ',') {
        f.push_back(cur);
        cur.clear();
      } else {
        cur += ch;
      }
    }
    f.push_back(cur);
    return f;
  };
  if (std::getline(in, line)) c.header = split(line);
  while (std::getline(in, line))
    if (!line.empty()) c.rows.push_back(split(line));
  return c;
}

class Metamorphic : public testing::TempDirTest {
 protected:
  // Runs `yaml` (with `sets`) into dir_/name; nullopt when the simulator refuses the
  // combination. Any other failure fails the test.
  std::optional<fs::path> run(const std::string& name, const std::string& yaml,
                              const std::vector<std::string>& sets = {}) {
    const fs::path out = dir_ / name;
    try {
      run_experiment_file(write(name + ".yaml", yaml), sets, out);
    } catch (const ConfigError& e) {
      if (std::getenv("PAGESIM_METAMORPHIC_VERBOSE") != nullptr) std::cerr << name << " refused: " << e.what() << "\n";
      return std::nullopt;
    } catch (const std::exception& e) {
      ADD_FAILURE() << name << " does not run: " << e.what() << "\n" << yaml;
      return std::nullopt;
    }
    return out;
  }

  // Every file of `a` is in `b` with the same bytes (summary.json without host timings).
  void expect_same_files(const fs::path& a, const fs::path& b, const std::string& what) {
    for (const auto& entry : fs::directory_iterator(a)) {
      const std::string name = entry.path().filename().string();
      if (name == "summary.json") {
        EXPECT_EQ(summary_without_host_timings(a), summary_without_host_timings(b)) << what;
      } else {
        ASSERT_TRUE(fs::exists(b / name)) << what << ": " << name;
        EXPECT_TRUE(read_file(a / name) == read_file(b / name)) << what << ": " << name << " differs";
      }
    }
  }
};

// Within one run of any configuration:
//   - every memory-class set sums to 100% (run, each replica, the cluster), and every row of
//     iterations.csv to the same capacity per replica;
//   - finished + dropped = generated, and requests.csv has one row per finished request;
//   - a prompt's tokens are counted once by the prefix cache, whatever the topology:
//     prefix_cache.prompt_tokens = Σ prompt_tokens of requests.csv;
// and between runs: config.resolved.yaml runs again to the same bytes.
TEST_F(Metamorphic, RandomConfigurationsKeepEveryRelation) {
  int ran = 0, clusters = 0, disaggregated = 0, prefix = 0, layer_groups = 0, tiers = 0, speculative = 0, lora = 0,
      mla = 0, custom = 0;
  for (std::uint64_t seed = 0; seed < kDraws; ++seed) {
    const RandomExperiment e = testing::random_experiment(seed);
    SCOPED_TRACE("seed " + std::to_string(seed) + ": " + e.label);
    const std::string name = "r" + std::to_string(seed);
    const std::optional<fs::path> out = run(name, e.yaml);
    if (!out) continue;
    ++ran;
    if (std::getenv("PAGESIM_METAMORPHIC_VERBOSE") != nullptr) std::cerr << name << " ran: " << e.label << "\n";
    clusters += e.cluster;
    disaggregated += e.disaggregated;
    prefix += e.prefix_cache;
    layer_groups += e.layer_groups;
    tiers += e.tier;
    speculative += e.speculative;
    lora += e.lora;
    mla += e.mla;
    custom += e.custom_model;
    const json s = summary_without_host_timings(*out);

    for (const char* key : {"memory_pct", "memory_pct_time_weighted"}) {
      if (s.contains(key)) {
        EXPECT_NEAR(class_sum(s, key), 100.0, 1e-6) << key;
      }
    }
    if (s.contains("cluster")) {
      const json& cl = s.at("cluster");
      EXPECT_NEAR(class_sum(cl.at("memory_pct_time_weighted")), 100.0, 1e-6) << "cluster";
      // pct × kv_slots is the slots, class by class.
      for (const auto& [k, v] : cl.at("memory_pct_time_weighted").items())
        EXPECT_NEAR(v.get<double>() * cl.at("kv_slots").get<double>() / 100.0,
                    cl.at("memory_slots_time_weighted").at(k).get<double>(), 1e-6 * cl.at("kv_slots").get<double>())
            << "cluster " << k;
      for (const json& r : s.at("replicas")) {
        for (const char* key : {"memory_pct", "memory_pct_time_weighted"}) {
          if (r.contains(key)) {
            EXPECT_NEAR(class_sum(r, key), 100.0, 1e-6) << "replica " << key;
          }
        }
      }
    }
    const Csv it = read_csv(*out / "iterations.csv");
    const std::size_t replica_col = it.column("replica");
    std::map<std::string, double> capacity;  // per replica ("" without replicas)
    for (const auto& row : it.rows) {
      double sum = 0;
      for (const char* c : kClasses) {
        const std::size_t col = it.column(c);
        if (col < it.header.size()) sum += std::stod(row[col]);
      }
      const std::string replica = replica_col < it.header.size() ? row[replica_col] : "";
      const auto [entry, fresh] = capacity.emplace(replica, sum);
      if (!fresh) {
        ASSERT_EQ(sum, entry->second) << "iterations.csv: replica " << replica << "'s classes change sum";
      }
      EXPECT_GT(sum, 0);
      // In slots (a single-group pool), a row's classes are the whole pool.
      if (e.slot_units && !s.contains("cluster")) {
        EXPECT_EQ(sum, s.at("kv_slots").get<double>()) << "iterations.csv";
      }
    }
    // A speculative step emits no more than the requests had left: the steps' tokens never
    // exceed the tokens the requests produced.
    if (s.contains("speculative")) {
      const json& sp = s.at("speculative");
      EXPECT_LE(sp.at("mean_tokens_per_step").get<double>(), 1.0 + static_cast<double>(e.speculative_k) + 1e-12);
      double produced = 0;
      const Csv r = read_csv(*out / "requests.csv");
      for (const auto& row : r.rows) produced += std::stod(row[r.column("output_tokens")]);
      EXPECT_LE(sp.at("mean_tokens_per_step").get<double>() * sp.at("steps").get<double>(), produced + 1e-6);
    }

    const std::int64_t finished = s.at("requests_finished"), arrived = s.at("requests_arrived");
    const std::int64_t dropped = s.value("requests_dropped_oversize", std::int64_t{0});
    EXPECT_EQ(finished, arrived);
    EXPECT_EQ(arrived + dropped, e.requests);
    const Csv req = read_csv(*out / "requests.csv");
    EXPECT_EQ(static_cast<std::int64_t>(req.rows.size()), finished);
    if (s.contains("prefix_cache")) {
      double prompts = 0;
      for (const auto& row : req.rows) prompts += std::stod(row[req.column("prompt_tokens")]);
      EXPECT_EQ(s.at("prefix_cache").at("prompt_tokens").get<double>(), prompts) << "a prompt counted other than once";
    }

    const std::optional<fs::path> again = run(name + "-resolved", read_file(*out / "config.resolved.yaml"));
    ASSERT_TRUE(again.has_value()) << "config.resolved.yaml is refused:\n" << read_file(*out / "config.resolved.yaml");
    expect_same_files(*out, *again, "the resolved config's rerun");
  }
  // The draws reach every feature.
  EXPECT_GE(ran, 16);
  EXPECT_GE(clusters, 4);
  EXPECT_GE(disaggregated, 2);
  EXPECT_GE(prefix, 6);
  EXPECT_GE(layer_groups, 2);
  EXPECT_GE(tiers, 2);
  EXPECT_GE(speculative, 2);
  EXPECT_GE(lora, 2);
  EXPECT_GE(mla, 1);
  EXPECT_GE(custom, 1);
}

// Skipping runs of identical decode iterations (engine.skip_decode_runs, the default)
// changes no byte of any output against the engine that plans every iteration, whatever the
// scheduler, allocator, cluster and workload, and with the outputs and observers that look at
// every iteration: iterations.csv at strides 1 and 3, timeline.json, sampled batches
// (batches.jsonl), the client's token stream, SLOs, asynchronous scheduling.
TEST_F(Metamorphic, SkippingDecodeRunsChangesNoOutputByte) {
  int compared = 0, calls = 0;
  // Outputs with runs skipped equal those of the per-iteration engine, file by file.
  auto compare = [&](std::uint64_t seed, std::vector<std::string> sets,
                     const std::string& off = "engine.skip_decode_runs=false") {
    const RandomExperiment e = testing::random_experiment(seed);
    SCOPED_TRACE("seed " + std::to_string(seed) + ": " + e.label);
    const std::string name = "k" + std::to_string(seed) + "-" + std::to_string(calls++);
    const std::optional<fs::path> skip = run(name, e.yaml, sets);
    if (!skip) return;
    sets.push_back(off);
    const std::optional<fs::path> plain = run(name + "-plain", e.yaml, sets);
    ASSERT_TRUE(plain.has_value());
    ++compared;
    std::size_t files = 0;
    for (const auto& entry : fs::directory_iterator(*plain)) {
      const std::string file = entry.path().filename().string();
      ASSERT_TRUE(fs::exists(*skip / file)) << file;
      ++files;
      if (file == "summary.json") {
        EXPECT_EQ(summary_without_host_timings(*skip), summary_without_host_timings(*plain));
      } else if (file == "config.resolved.yaml") {  // the engine section is written where not at its defaults
        std::string text = read_file(*plain / file);
        const std::string key = off.substr(off.find('.') + 1, off.find('=') - off.find('.') - 1);
        const std::size_t at = text.find("engine:\n");
        ASSERT_NE(at, std::string::npos) << text;
        ASSERT_NE(text.find("  " + key + ": false\n", at), std::string::npos) << text;
        const std::size_t end = text.find("\n", text.find("compact_waiting", at));  // the section's last line
        text.erase(at, end + 1 - at);
        EXPECT_EQ(read_file(*skip / file), text);
      } else {
        EXPECT_TRUE(read_file(*skip / file) == read_file(*plain / file)) << file << " differs";
      }
    }
    EXPECT_EQ(files, static_cast<std::size_t>(std::distance(fs::directory_iterator(*skip), fs::directory_iterator())));
  };
  for (std::uint64_t seed = 300; seed < 300 + kDraws; ++seed) {
    std::vector<std::string> sets;
    switch (seed % 5) {
      case 1: sets = {"output.timeline=true", "output.iterations_stride=3"}; break;
      case 2: sets = {"validate.every_n_iterations=3", "validate.max_batches=5"}; break;
      case 3: sets = {"client.kind=inference_perf", "slo.ttft_s=1", "slo.tbt_s=0.05"}; break;
      case 4: sets = {"scheduler.async_steps=1"}; break;
      default: break;
    }
    compare(seed, sets);
  }
  EXPECT_GE(compared, 16);
  // Draws that once differed: disaggregated, a transfer routed among two decode replicas while
  // one of them was in a run.
  for (std::uint64_t seed : {700, 701, 710, 716, 739}) compare(seed, {"scheduler.kind=vllm-v1", "allocator.kind=paged"});
  // Each policy that promises its next plan at an iteration's end (Scheduler::plan_running_decodes),
  // over a paged pool.
  const std::array<std::string, 4> promising = {"vllm", "vllm-v0", "vllm-v1", "sarathi"};
  for (std::uint64_t seed = 900; seed < 924; ++seed)
    compare(seed, {"scheduler.kind=" + promising[seed % promising.size()], "allocator.kind=paged"});
  // vllm's promise while requests wait (VllmScheduler::admits_after_decodes): a pool a few
  // requests fill and token budgets near a prompt, so that the head's checks run at their edges.
  const std::array<std::string, 3> batched = {"scheduler.max_num_batched_tokens=620",
                                               "scheduler.max_num_batched_tokens=1600",
                                               "scheduler.max_num_batched_tokens=4096"};
  for (std::uint64_t seed = 930; seed < 970; ++seed)
    compare(seed, {"scheduler.kind=vllm", "allocator.kind=paged", seed % 2 ? "kv.slots=4608" : "kv.slots=6144",
                   batched[seed % batched.size()],
                   seed % 5 ? "scheduler.max_num_seqs=256" : "scheduler.max_num_seqs=6"});
  // A request finishing inside a run leaves the others going (Simulation::continue_run):
  // groups of parallel samples (several sequences each, in the middle of the run's), and
  // vllm-v1, whose promise depends on the token budget.
  int sampled = 0;
  for (std::uint64_t seed = 970; seed < 982; ++seed) {
    const int before = compared;
    compare(seed, {seed % 2 ? "scheduler.kind=vllm" : "scheduler.kind=vllm-v1", "allocator.kind=paged",
                   seed % 3 ? "workload.sampling=[{n: 2}]" : "workload.sampling=[{n: 3}]"});
    sampled += compared - before;
  }
  EXPECT_GE(sampled, 8);
  // The waiting backlog (engine.compact_waiting): vLLM policies that read at most
  // max_num_seqs + 1 queued requests, with a queue kept long by max_num_seqs = 2.
  int backlogged = 0;
  for (std::uint64_t seed = 300; seed < 300 + kDraws; ++seed) {
    const RandomExperiment e = testing::random_experiment(seed);
    if (e.prefix_cache || e.disaggregated || e.tier || e.label.find(" vllm") == std::string::npos) continue;
    const int before = compared;
    compare(seed, {"scheduler.max_num_seqs=2"}, "engine.compact_waiting=false");
    backlogged += compared - before;
  }
  EXPECT_GE(backlogged, 4);
  // Every router leaves the other replicas' runs going through an arrival or a transfer: those
  // that read free slots read them inside the runs (Replica::free_kv_slots, FreeSlotsIndex).
  // (Reading the slots as the runs began changed outputs under least_kv with 2 or 3 replicas,
  // seeds 700-739; prefix_aware reads the caches too, which runs leave alone.)
  for (std::uint64_t seed = 700; seed < 740; ++seed) {
    for (const char* router : {"least_outstanding", "round_robin", "least_kv"}) {
      if (seed % 8 != 0 && std::string_view(router) != "least_kv") continue;
      compare(seed, {"scheduler.kind=vllm-v1", "allocator.kind=paged", std::string("replicas.router=") + router});
    }
  }
  int prefix_routed = 0;
  for (std::uint64_t seed = 300; seed < 300 + kDraws; ++seed) {
    const RandomExperiment e = testing::random_experiment(seed);
    if (!e.cluster || !e.prefix_cache || e.label.find("global-cache") != std::string::npos) continue;
    const int before = compared;
    compare(seed, {"replicas.router=prefix_aware"});
    prefix_routed += compared - before;
  }
  EXPECT_GE(prefix_routed, 2);
  // Clusters whose runs go on past other replicas' events up to the next arrival (no
  // iterations.csv, whose rows interleave replicas; docs/engine.md), with requests.csv and SLOs.
  int ahead = 0;
  for (std::uint64_t seed = 300; seed < 300 + 2 * kDraws; ++seed) {
    const RandomExperiment e = testing::random_experiment(seed);
    if (!e.cluster || e.disaggregated || e.label.find("global-cache") != std::string::npos) continue;
    const int before = compared;
    compare(seed, {"output.iterations_stride=0", "slo.ttft_s=1", "slo.tbt_s=0.05"});
    ahead += compared - before;
  }
  EXPECT_GE(ahead, 8);
  // Large clusters (issue #40): every router over 96 replicas (the routers' load index,
  // docs/engine.md's runs going on past other replicas' events), and a disaggregated fleet of 24
  // prefill and 72 decode replicas behind least_outstanding both ways.
  int large = 0;
  for (std::uint64_t seed = 300; seed < 300 + 2 * kDraws && large < 12; ++seed) {
    const RandomExperiment e = testing::random_experiment(seed);
    if (!e.cluster || e.label.find("global-cache") != std::string::npos || e.lora) continue;
    const int before = compared;
    if (e.disaggregated) {
      compare(seed, {"replicas.count=96", "replicas.disaggregated.prefill=24", "replicas.router=least_outstanding",
                     "replicas.disaggregated.decode_router=least_outstanding", "output.iterations_stride=0"});
    } else {
      for (const char* router : {"least_outstanding", "round_robin", "random", "least_kv"})
        compare(seed, {"replicas.count=96", std::string("replicas.router=") + router, "output.iterations_stride=0"});
      if (e.prefix_cache) compare(seed, {"replicas.count=96", "replicas.router=prefix_aware"});
    }
    large += compared - before;
  }
  EXPECT_GE(large, 12);
}

// Deferred decode runs (issue #40, docs/engine.md): in a fleet where arrivals come far more
// often than a replica's iterations end, a replica's run is priced ahead in chunks and its
// repeats start only when an arrival routed to it, or the chunk's end, comes. Outputs equal
// the per-iteration engine's byte for byte under every router, disaggregated too (hand-offs
// and transfers touch decode replicas between arrivals), with iteration times and arrivals on
// one dyadic grid (so that iteration ends tie with arrivals and with each other exactly, and
// the event order decides) and with roofline times and Poisson arrivals.
TEST_F(Metamorphic, DeferredRunsOfFleetsChangeNoOutputByte) {
  const std::string fleet = R"(name: deferred-fleet
workload:
  kind: synthetic
  arrival: {kind: ARRIVAL, rate: 64}
  lengths: {kind: cycle_shuffle, path: traces/data/sharegpt_opt_lengths.csv}
  max_total_tokens: 2048
  duration_s: 40
model: opt-13b
gpu: a100-40gb
kv: {slots: 15728}
allocator: {kind: paged, block_size: 16}
scheduler: {kind: vllm}
replicas: {count: 48, router: least_outstanding}
output: {iterations_stride: 0, requests_csv: true}
slo: {ttft_s: 1, tbt_s: 0.05}
)";
  // Iterations last multiples of 2^-9 s, arrivals come every 2^-6 s: one end in eight ties.
  const std::string dyadic_cost =
      "cost:\n  kind: constant\n  constant: {seconds_per_iteration: 0.03125, seconds_per_decode_seq: 0.001953125}\n";
  const std::string roofline_cost = "cost: {kind: roofline}\n";
  int compared = 0;
  const auto compare = [&](const std::string& name, const std::string& yaml, const std::vector<std::string>& sets) {
    SCOPED_TRACE(name);
    const std::optional<fs::path> deferred = run(name, yaml, sets);
    std::vector<std::string> plain_sets = sets;
    plain_sets.push_back("engine.skip_decode_runs=false");
    const std::optional<fs::path> plain = run(name + "-plain", yaml, plain_sets);
    ASSERT_TRUE(deferred && plain);
    // config.resolved.yaml differs in the engine section alone; the rest byte for byte.
    fs::remove(*deferred / "config.resolved.yaml");
    fs::remove(*plain / "config.resolved.yaml");
    expect_same_files(*plain, *deferred, name);
    expect_same_files(*deferred, *plain, name);
    const json summary = json::parse(read_file(*deferred / "summary.json"));
    EXPECT_GT(summary.at("requests_finished").get<std::int64_t>(), 2000) << name;
    ++compared;
  };
  for (const bool ties : {true, false}) {
    std::string yaml = fleet;
    yaml.replace(yaml.find("ARRIVAL"), 7, ties ? "constant" : "poisson");
    yaml += ties ? dyadic_cost : roofline_cost;
    const std::string mode = ties ? "ties-" : "poisson-";
    for (const char* router : {"least_outstanding", "round_robin", "random", "least_kv"})
      compare(mode + router, yaml, {std::string("replicas.router=") + router});
    // Disaggregated: 12 prefill replicas hand off to 36 decode replicas, whose deferred runs a
    // transfer starting or ending, or a decode router reading free slots, brings up to it.
    const std::vector<std::string> disaggregated = {"replicas.disaggregated.prefill=12",
                                                    "replicas.disaggregated.transfer_gbps=200",
                                                    "replicas.disaggregated.transfer_latency_us=20"};
    for (const char* router : {"least_outstanding", "round_robin", "least_kv"}) {
      std::vector<std::string> sets = disaggregated;
      sets.push_back(std::string("replicas.disaggregated.decode_router=") + router);
      compare(mode + "disaggregated-" + router, yaml, sets);
    }
    // Decode pools too small for the load: hand-offs wait for room, and while one waits no run
    // is deferred (Simulation::undefer_runs; round_robin's turn moves at each try).
    std::vector<std::string> waits = disaggregated;
    waits.insert(waits.end(), {"kv.slots=4000", "workload.arrival.rate=96",
                               "replicas.disaggregated.decode_router=round_robin"});
    compare(mode + "disaggregated-waits", yaml, waits);
  }
  EXPECT_EQ(compared, 16);
}

// More KV never finishes fewer requests, nor drops more.
TEST_F(Metamorphic, DoublingKvNeverLowersFinishedRequests) {
  int compared = 0, bound = 0;  // bound: the smaller pool preempted, so its size decided
  for (std::uint64_t seed = 100; seed < 100 + kDraws / 2; ++seed) {
    const RandomExperiment e = testing::random_experiment(seed);
    SCOPED_TRACE("seed " + std::to_string(seed) + ": " + e.label);
    const std::optional<fs::path> small = run("s" + std::to_string(seed), e.yaml);
    if (!small) continue;
    const json a = json::parse(read_file(*small / "summary.json"));
    const std::optional<fs::path> big =
        run("b" + std::to_string(seed), e.yaml, {"kv.slots=" + std::to_string(2 * e.kv_slots)});
    if (!big) continue;
    const json b = json::parse(read_file(*big / "summary.json"));
    ++compared;
    EXPECT_GE(b.at("requests_finished").get<std::int64_t>(), a.at("requests_finished").get<std::int64_t>());
    EXPECT_LE(b.value("requests_dropped_oversize", 0), a.value("requests_dropped_oversize", 0));
    bound += a.at("preemptions").get<std::int64_t>() > 0;
  }
  EXPECT_GE(compared, 8);
  EXPECT_GE(bound, 1) << "no draw where the pool binds";
}

// The same workload on one replica, on three behind each router, and on a P/D cluster (one
// prefill replica handing off to two decode replicas): every prompt is admitted once, so the
// cluster's prefix_cache.prompt_tokens is the workload's prompt tokens in every topology.
TEST_F(Metamorphic, APromptIsCountedOnceWhateverTheTopology) {
  const std::string base =
      "name: topology\nseed: 6\n"
      "workload:\n  kind: sessions\n  arrival: {kind: poisson, rate: 6.0}\n"
      "  lengths:\n    prompt: {kind: lognormal, median: 300, sigma: 0.8, lo: 4, hi: 2000}\n"
      "    output: {kind: lognormal, median: 60, sigma: 0.6, lo: 1, hi: 300}\n"
      "  sessions:\n    turns: {kind: uniform, lo: 1, hi: 5}\n    think_time: {kind: exponential, mean_s: 2}\n"
      "    system_prompts: 2\n    system_prompt_tokens: {kind: fixed, value: 512}\n    block_tokens: 16\n"
      "    max_context_tokens: 4000\n  max_requests: 60\n"
      "model: llama-3-8b\ngpu: h200\nkv: {slots: 16384}\n"
      "allocator: {kind: paged, block_size: 16, prefix_cache: true}\n"
      "scheduler: {kind: vllm, max_num_batched_tokens: 8192}\ncost: {kind: roofline}\n";
  const std::optional<fs::path> one = run("one", base);
  ASSERT_TRUE(one);
  const double prompts = json::parse(read_file(*one / "summary.json")).at("prefix_cache").at("prompt_tokens");
  EXPECT_GT(prompts, 0);
  for (const std::string topology :
       {"replicas: {count: 3, router: round_robin}", "replicas: {count: 3, router: prefix_aware}",
        "replicas: {count: 3, router: least_kv}",
        "replicas: {count: 3, router: least_outstanding, disaggregated: {prefill: 1, transfer_gbps: 100, "
        "transfer_latency_us: 10}}",
        "replicas: {count: 3, router: prefix_aware, global_cache: {bandwidth_gbps: 100, latency_us: 10}}"}) {
    SCOPED_TRACE(topology);
    const std::optional<fs::path> out = run("t" + std::to_string(std::hash<std::string>{}(topology) % 100000),
                                            base + topology + "\n");
    ASSERT_TRUE(out);
    const json s = json::parse(read_file(*out / "summary.json"));
    EXPECT_EQ(s.at("prefix_cache").at("prompt_tokens").get<double>(), prompts);
    EXPECT_EQ(s.at("requests_finished"), 60);
  }
}

// On a single-group model under vllm-v1, the layer-group pools are vLLM's one block pool:
// paged, uniform, hybrid and jenga serve every request identically (requests.csv byte for
// byte; their summaries differ only in the pool's unit and name), with prefix caching and
// eviction, on each workload kind that carries token identities.
TEST_F(Metamorphic, LayerGroupPoolsOnASingleGroupModelServeAsPaged) {
  const std::string mooncake = (fs::path(PAGESIM_SOURCE_DIR) / "traces/data/mooncake_conversation_trace.jsonl").string();
  const std::string workloads[] = {
      "workload:\n  kind: trace\n  trace: {path: '" + mooncake +
          "', format: mooncake}\n  max_requests: 60\n  oversize: truncate\n",
      "workload:\n  kind: sessions\n  arrival: {kind: poisson, rate: 8.0}\n"
      "  lengths:\n    prompt: {kind: lognormal, median: 300, sigma: 0.8, lo: 4, hi: 2000}\n"
      "    output: {kind: lognormal, median: 60, sigma: 0.6, lo: 1, hi: 300}\n"
      "  sessions:\n    turns: {kind: uniform, lo: 1, hi: 5}\n    think_time: {kind: exponential, mean_s: 2}\n"
      "    system_prompts: 3\n    system_prompt_tokens: {kind: fixed, value: 512}\n    block_tokens: 16\n"
      "    max_context_tokens: 4000\n  max_requests: 80\n"};
  int w = 0;
  for (const std::string& workload : workloads) {
    const std::string base = "name: single-group\nseed: 8\n" + workload +
                             "model: llama-3-8b\ngpu: h200\nmax_model_len: 4096\nkv: {slots: 4096}\n"
                             "scheduler: {kind: vllm-v1}\ncost: {kind: roofline}\n";
    const std::string tag = "w" + std::to_string(w++) + "-";
    const std::optional<fs::path> paged = run(tag + "paged", base + "allocator: {kind: paged, block_size: 16, prefix_cache: true}\n");
    ASSERT_TRUE(paged);
    const json p = json::parse(read_file(*paged / "summary.json"));
    ASSERT_GT(p.at("prefix_cache").at("evicted_blocks").get<std::int64_t>(), 0) << "no eviction pressure";
    for (const char* kind : {"uniform", "hybrid", "jenga"}) {
      SCOPED_TRACE(tag + kind);
      const std::optional<fs::path> pool =
          run(tag + kind, base + "allocator: {kind: " + kind + ", block_size: 16, prefix_cache: true}\n");
      ASSERT_TRUE(pool);
      EXPECT_TRUE(read_file(*paged / "requests.csv") == read_file(*pool / "requests.csv")) << "requests.csv differs";
      const json q = json::parse(read_file(*pool / "summary.json"));
      EXPECT_EQ(p.at("prefix_hit_rate"), q.at("prefix_hit_rate"));
      EXPECT_EQ(p.at("memory_pct_time_weighted"), q.at("memory_pct_time_weighted"));
      EXPECT_EQ(p.at("preemptions"), q.at("preemptions"));
    }
  }
}

// Zero LoRA adapters equal none: a lora section under unified paging (nothing reserved up
// front) whose workload names no adapter runs exactly as the same configuration without it.
// Its outputs differ only where LoRA writes itself: the adapter_weights column (all 0) of
// iterations.csv, summary.json's "lora" and "adapter_weights" objects (a replica's too), and the lora section of
// config.resolved.yaml. Runs with adapters keep the classes plus adapter_weights at 100%.
// Spilling to temporary files changes no byte of any output but the keys' own lines in
// config.resolved.yaml: latency samples (output.latency_samples_in_memory, here 3 values, so
// that every distribution is merged from many sorted runs) on random draws, and the waiting
// backlog (engine.backlog_in_memory, here about 2 entries) on vLLM draws whose queue
// max_num_seqs = 2 keeps long.
TEST_F(Metamorphic, SpillingToTemporaryFilesChangesNoOutputByte) {
  int compared = 0, backlogged = 0;
  // Runs e with `sets` and with `sets` + `spill`; `resolved`: the lines `spill` adds to
  // config.resolved.yaml.
  auto compare = [&](std::uint64_t seed, const RandomExperiment& e, std::vector<std::string> sets,
                     const std::string& spill, const std::string& resolved) {
    SCOPED_TRACE("seed " + std::to_string(seed) + ": " + e.label + ", " + spill);
    const std::string name = "l" + std::to_string(seed) + "-" + std::to_string(compared);
    const std::optional<fs::path> memory = run(name, e.yaml, sets);
    if (!memory) return false;
    sets.push_back(spill);
    const std::optional<fs::path> spilled = run(name + "-spilled", e.yaml, sets);
    EXPECT_TRUE(spilled.has_value());
    if (!spilled) return false;
    ++compared;
    for (const auto& entry : fs::directory_iterator(*memory)) {
      const std::string file = entry.path().filename().string();
      if (file == "summary.json") {
        EXPECT_EQ(summary_without_host_timings(*memory), summary_without_host_timings(*spilled));
      } else if (file == "config.resolved.yaml") {
        std::string text = read_file(*spilled / file);
        const std::size_t at = text.find(resolved);
        EXPECT_NE(at, std::string::npos) << text;
        if (at != std::string::npos) {
          EXPECT_EQ(read_file(entry.path()), text.erase(at, resolved.size()));
        }
      } else {
        EXPECT_TRUE(read_file(entry.path()) == read_file(*spilled / file)) << file << " differs";
      }
    }
    return true;
  };
  for (std::uint64_t seed = 600; seed < 600 + kDraws / 2; ++seed)
    compare(seed, testing::random_experiment(seed), {}, "output.latency_samples_in_memory=3",
            "  latency_samples_in_memory: 3\n");
  EXPECT_GE(compared, 8);
  for (std::uint64_t seed = 300; seed < 300 + kDraws; ++seed) {
    const RandomExperiment e = testing::random_experiment(seed);
    if (e.prefix_cache || e.disaggregated || e.tier || e.label.find(" vllm") == std::string::npos) continue;
    backlogged += compare(seed, e, {"scheduler.max_num_seqs=2"}, "engine.backlog_in_memory=2",
                          "engine:\n  skip_decode_runs: true\n  compact_waiting: true\n  backlog_in_memory: 2\n");
  }
  EXPECT_GE(backlogged, 4);
}

TEST_F(Metamorphic, ZeroLoraAdaptersEqualNone) {
  int compared = 0, with_adapters = 0;
  for (std::uint64_t seed = 500; seed < 500 + kDraws; ++seed) {
    const RandomExperiment e = testing::random_experiment(seed);
    if (e.lora) continue;  // the draw has a lora section of its own
    SCOPED_TRACE("seed " + std::to_string(seed) + ": " + e.label);
    const std::string name = "z" + std::to_string(seed);
    const std::optional<fs::path> lora = run(name, e.yaml, {"lora.placement=unified", "lora.adapters=0"});
    if (!lora) continue;  // lora refuses this allocator, scheduler or topology
    const std::optional<fs::path> none = run(name + "-none", e.yaml);
    ASSERT_TRUE(none.has_value());
    ++compared;
    EXPECT_TRUE(read_file(*none / "requests.csv") == read_file(*lora / "requests.csv")) << "requests.csv differs";
    Csv a = read_csv(*none / "iterations.csv"), b = read_csv(*lora / "iterations.csv");
    // The adapter column (before the speculative classes, where a draw has them) is all 0.
    const std::size_t ac = b.column("adapter_weights");
    ASSERT_LT(ac, b.header.size());
    ASSERT_EQ(a.rows.size(), b.rows.size());
    b.header.erase(b.header.begin() + static_cast<std::ptrdiff_t>(ac));
    EXPECT_EQ(a.header, b.header);
    for (std::size_t i = 0; i < a.rows.size(); ++i) {
      ASSERT_EQ(b.rows[i][ac], "0") << "row " << i;
      b.rows[i].erase(b.rows[i].begin() + static_cast<std::ptrdiff_t>(ac));
      ASSERT_EQ(a.rows[i], b.rows[i]) << "row " << i;
    }
    json sa = summary_without_host_timings(*none), sb = summary_without_host_timings(*lora);
    EXPECT_EQ(sb.at("lora").at("loads"), 0);
    EXPECT_EQ(sb.at("adapter_weights").at("memory_pct"), 0.0);
    sb.erase("lora");
    sb.erase("adapter_weights");
    if (sb.contains("replicas"))
      for (json& r : sb.at("replicas")) r.erase("adapter_weights");
    if (sb.contains("cluster")) {  // the cluster's classes include the adapters' (0 here)
      EXPECT_EQ(sb.at("cluster").at("memory_pct_time_weighted").at("adapter_weights"), 0.0);
      sb.at("cluster").at("memory_pct_time_weighted").erase("adapter_weights");
      sb.at("cluster").at("memory_slots_time_weighted").erase("adapter_weights");
    }
    EXPECT_EQ(sa, sb);
    std::string resolved = read_file(*lora / "config.resolved.yaml");
    const std::size_t at = resolved.find("lora:\n");
    ASSERT_NE(at, std::string::npos);
    std::size_t end = resolved.find('\n', at) + 1;
    while (end < resolved.size() && resolved[end] == ' ') end = resolved.find('\n', end) + 1;
    resolved.erase(at, end - at);
    EXPECT_EQ(read_file(*none / "config.resolved.yaml"), resolved);

    // With adapters (vLLM's slots this time), every slot is still in exactly one class.
    const std::optional<fs::path> used =
        run(name + "-used", e.yaml, {"lora.placement=vllm", "lora.max_loras=2", "lora.adapters=5", "lora.rank=8"});
    if (!used) continue;
    ++with_adapters;
    const json s = json::parse(read_file(*used / "summary.json"));
    for (const char* key : {"memory_pct", "memory_pct_time_weighted"})
      EXPECT_NEAR(class_sum(s, key), 100.0, 1e-6) << key;  // adapter_weights included
  }
  EXPECT_GE(compared, 4);
  EXPECT_GE(with_adapters, 2);
}

// "A zero-capacity tier or global cache equals none" holds by refusal: a tier or a shared
// pool that cannot hold one block is refused, naming its key, rather than simulated as a
// tier that never stores anything.
TEST_F(Metamorphic, TierOrGlobalCacheOfNoBlockIsRefused) {
  const std::string base =
      "name: tier\nseed: 4\n"
      "workload:\n  kind: trace\n  trace: {path: '" +
      (fs::path(PAGESIM_SOURCE_DIR) / "traces/data/mooncake_conversation_trace.jsonl").string() +
      "', format: mooncake}\n  max_requests: 20\n  oversize: truncate\n"
      "model: llama-3-8b\ngpu: h200\nmax_model_len: 4096\nkv: {slots: 8192}\n"
      "scheduler: {kind: vllm}\ncost: {kind: roofline}\n";
  const std::string alloc = "allocator: {kind: paged, block_size: 16, prefix_cache: true, cpu_swap_gib: 16";
  auto refusal = [&](const std::string& yaml) -> std::string {
    try {
      run_experiment_file(write("refused.yaml", yaml), {}, dir_ / "refused");
    } catch (const ConfigError& e) {
      return e.what();
    }
    return "";
  };
  for (const char* gib : {"0", "1.0e-9"}) {
    const std::string tier = refusal(base + alloc + ", offload: {tiers: [{kind: cpu, capacity_gib: " + gib +
                                     ", read_gbps: 25, write_gbps: 25, latency_us: 10}]}}\n");
    EXPECT_NE(tier.find("allocator.offload.tiers[0].capacity_gib"), std::string::npos) << gib << ": " << tier;
    const std::string pool = refusal(base + alloc + "}\nreplicas:\n  count: 2\n  router: prefix_aware\n"
                                     "  global_cache: {source: shared_pool, bandwidth_gbps: 100, shared_pool_gib: " +
                                     gib + "}\n");
    EXPECT_NE(pool.find("replicas.global_cache.shared_pool_gib"), std::string::npos) << gib << ": " << pool;
  }
  EXPECT_FALSE(fs::exists(dir_ / "refused" / "summary.json"));
}

}  // namespace
}  // namespace pagesim::sim

namespace pagesim::sim {
namespace {

// Speculative decoding proposing k = 0 tokens per step is no speculation: every output byte
// is the same (config.resolved.yaml aside, which writes the section), whatever the drafter.
// With k > 0 the memory classes, the speculative ones (summary.json's "speculative") included,
// still sum to 100%. Random draws run under vllm-v1 over a paged pool, which speculation needs.
// Both sides plan every iteration (engine.skip_decode_runs false): speculative steps never
// start a decode run, so this relation compares speculation alone.
TEST_F(Metamorphic, ZeroProposedTokensIsNoSpeculation) {
  int compared = 0;
  const char* const methods[] = {"eagle", "ngram", "draft_model"};
  for (std::uint64_t seed = 700; seed < 700 + kDraws; ++seed) {
    const RandomExperiment e = testing::random_experiment(seed);
    if (e.speculative) continue;  // the draw has a speculative section of its own
    SCOPED_TRACE("seed " + std::to_string(seed) + ": " + e.label);
    std::vector<std::string> sets = {"scheduler.kind=vllm-v1", "allocator.kind=paged", "engine.skip_decode_runs=false"};
    const std::string name = "s" + std::to_string(seed);
    const std::optional<fs::path> plain = run(name, e.yaml, sets);
    if (!plain) continue;
    const std::string method = methods[seed % 3];
    sets.push_back("speculative.method=" + method);
    if (method == "draft_model") sets.push_back("speculative.draft_model=llama-2-7b");
    if (seed % 2 == 0) sets.push_back("speculative.acceptance=0.6");
    std::vector<std::string> zero = sets;
    zero.push_back("speculative.num_speculative_tokens=0");
    const std::optional<fs::path> spec = run(name + "-k0", e.yaml, zero);
    ++compared;
    for (const auto& entry : fs::directory_iterator(*plain)) {
      const std::string file = entry.path().filename().string();
      ASSERT_TRUE(fs::exists(*spec / file)) << file;
      if (file == "summary.json") {
        EXPECT_EQ(summary_without_host_timings(*plain), summary_without_host_timings(*spec));
      } else if (file == "config.resolved.yaml") {  // the same, plus the section at its end
        const std::string a = read_file(*plain / file), b = read_file(*spec / file);
        ASSERT_EQ(b.substr(0, a.size()), a);
        EXPECT_EQ(b.substr(a.size(), 12), "speculative:");
      } else {
        EXPECT_TRUE(read_file(*plain / file) == read_file(*spec / file)) << file << " differs";
      }
    }
    // k > 0: the classes still partition the pool.
    std::vector<std::string> two = sets;
    two.push_back("speculative.num_speculative_tokens=2");
    const std::optional<fs::path> spec2 = run(name + "-k2", e.yaml, two);
    if (!spec2) continue;  // 1 + 2 (+ 2 lookahead) slots may not fit a tiny pool's table
    const json j = summary_without_host_timings(*spec2);
    const double s = class_sum(j, "memory_pct");  // the speculative (and adapter) classes included
    if (j.at("window_iterations").get<std::int64_t>() > 0) {
      EXPECT_NEAR(s, 100.0, 1e-6);
    }
  }
  EXPECT_GE(compared, 12);
}

}  // namespace
}  // namespace pagesim::sim
