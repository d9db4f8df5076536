// Hand-traced timelines of offload-tier loads through the engine: a request whose prefix
// the GPU evicted to the CPU tier is admitted, loads it back, and its iteration takes the
// transfer time as configured — added (serial, the default) or hidden under compute
// (overlap). The per-iteration and summary tier records, and determinism, on the same run.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "allocator/paged/paged_allocator.h"
#include "sim/cost/constant_cost_model.h"
#include "sim/engine/simulation.h"
#include "sim/metrics/metrics.h"
#include "sim/scheduler/scheduler.h"
#include "sim_harness.h"
#include "traces/vector_source.h"

namespace pagesim::sim {
namespace {

using testing::parse_csv;
using testing::Row;

traces::TraceRequest req(std::uint64_t id, double t, std::int64_t prompt, std::vector<std::uint64_t> hash_ids) {
  traces::TraceRequest r = testing::trace_req(id, t, prompt, 1);
  r.hash_ids = std::move(hash_ids);
  return r;
}

struct TierRun {
  std::vector<Row> requests, iterations;
  Summary summary;
  std::string iterations_csv;
};

// GPU: 4 blocks of 4 tokens. CPU tier: 8 blocks of 1 MB, 1 ms per block read, 2 ms per
// block written, 0.1 ms per batched transfer. Cost: 1 s per iteration + 10 ms per prefill
// token. Trace:
//   t=0  request 1, 8 tokens (document A: blocks A0 A1): computed, cached; done at 1.08
//   t=2  request 2, 11 tokens (document B: B0 B1 + 3 tokens): 3 blocks, the 2 free ones
//        and A1 (released before A0: LRU), which moves to the CPU tier (0.1 + 2 ms)
//   t=4  request 3, 9 tokens starting with document A: A0 is found on the GPU, A1 in the
//        CPU tier and loaded (0.1 + 1 ms); its 2 new blocks are B's free last block and
//        B1, evicted into the tier (0.1 + 2 ms)
TierRun run(bool overlap) {
  alloc::PagedAllocatorSettings as;
  as.num_blocks = 4;
  as.block_size = 4;
  as.num_cpu_blocks = 8;
  as.prefix_cache = true;
  as.offload.overlap = overlap;
  as.offload.bytes_per_block = 1e6;
  as.offload.tiers.push_back({alloc::TierKind::kCpu, 8, 1e9, 5e8, 1e-4, alloc::EvictionKind::kLru});
  alloc::PagedAllocator allocator(as);
  SchedulerSettings ss;
  ss.kind = SchedulerKind::kVllm;
  ss.watermark = 0;
  auto scheduler = make_scheduler(ss, allocator);
  traces::VectorSource source({req(1, 0, 8, {1, 2}), req(2, 2, 11, {10, 11, 12}), req(3, 4, 9, {1, 2, 3})}, 4);
  ConstantCostModel cost(1.0, 0.01);
  std::ostringstream req_csv, it_csv;
  MetricsSettings ms;
  ms.kv_bytes_per_token = 1e6 / 4;
  ms.block_size = 4;
  Metrics metrics(ms, &req_csv, &it_csv, {&allocator});
  Simulation sim(source, *scheduler, cost, EngineSettings{});
  testing::InvariantChecker checker(*scheduler);
  sim.add_observer(metrics);
  sim.add_observer(checker);
  sim.run();
  TierRun r;
  r.summary = metrics.finish(sim.now(), 0);
  r.requests = parse_csv(req_csv.str());
  r.iterations = parse_csv(it_csv.str());
  r.iterations_csv = it_csv.str();
  return r;
}

double num(const Row& row, const char* column) { return std::stod(row.at(column)); }

const Row& request(const TierRun& r, int id) {
  for (const Row& row : r.requests)
    if (row.at("id") == std::to_string(id)) return row;
  throw std::out_of_range("no request");
}

TEST(TierTimeline, SerialLoadsAddTheirTimeToTheAdmittingIteration) {
  const TierRun r = run(false);
  ASSERT_EQ(r.iterations.size(), 3u);
  EXPECT_DOUBLE_EQ(num(r.iterations[0], "duration_s"), 1.08);
  EXPECT_DOUBLE_EQ(num(r.iterations[0], "tier_transfer_s"), 0);
  EXPECT_DOUBLE_EQ(num(r.iterations[1], "duration_s"), 1.11 + 0.0021);  // a write only
  EXPECT_DOUBLE_EQ(num(r.iterations[1], "tier_transfer_s"), 0.0021);
  EXPECT_DOUBLE_EQ(num(r.iterations[1], "cpu_write_bytes"), 1e6);
  EXPECT_NEAR(num(r.iterations[1], "prefill_saved_s"), -0.0021, 1e-12);  // nothing loaded
  // Request 3: 4 cached tokens from the GPU, 4 loaded from the CPU tier, 1 computed; the
  // load and the store run before the pass.
  const double transfer = (1e-4 + 1e-3) + (1e-4 + 2e-3);
  EXPECT_DOUBLE_EQ(num(r.iterations[2], "start_s"), 4);
  EXPECT_DOUBLE_EQ(num(r.iterations[2], "tier_transfer_s"), transfer);
  EXPECT_DOUBLE_EQ(num(r.iterations[2], "duration_s"), 1.01 + transfer);
  EXPECT_DOUBLE_EQ(num(r.iterations[2], "tier_added_s"), transfer);
  EXPECT_EQ(r.iterations[2].at("cpu_hit_tokens"), "4");
  EXPECT_EQ(r.iterations[2].at("gpu_hit_tokens"), "4");
  EXPECT_EQ(r.iterations[2].at("disk_hit_tokens"), "0");
  EXPECT_DOUBLE_EQ(num(r.iterations[2], "cpu_read_bytes"), 1e6);
  EXPECT_DOUBLE_EQ(num(r.iterations[2], "cpu_write_bytes"), 1e6);
  // Recomputing the 4 loaded tokens would have cost 40 ms of prefill instead.
  EXPECT_NEAR(num(r.iterations[2], "prefill_saved_s"), 1.05 - (1.01 + transfer), 1e-12);
  EXPECT_DOUBLE_EQ(num(request(r, 3), "ttft_s"), 1.01 + transfer);
  EXPECT_EQ(request(r, 3).at("cached_tokens"), "8");

  ASSERT_TRUE(r.summary.tiers.has_value());
  const TierSummary& t = *r.summary.tiers;
  EXPECT_EQ(t.cpu.hit_tokens, 4);
  EXPECT_DOUBLE_EQ(t.cpu.hit_rate, 4.0 / 28.0);
  EXPECT_EQ(t.gpu_hit_tokens, 4);
  EXPECT_DOUBLE_EQ(t.gpu_hit_rate, 4.0 / 28.0);
  EXPECT_EQ(t.disk.hit_tokens, 0);
  EXPECT_DOUBLE_EQ(t.cpu.read_bytes, 1e6);
  EXPECT_DOUBLE_EQ(t.cpu.write_bytes, 2e6);
  EXPECT_EQ(t.cpu.loaded_blocks, 1);
  EXPECT_EQ(t.cpu.stored_blocks, 2);
  EXPECT_EQ(t.dropped_blocks, 0);
  EXPECT_DOUBLE_EQ(t.transfer_s, 0.0021 + transfer);
  EXPECT_DOUBLE_EQ(t.added_s, 0.0021 + transfer);
  EXPECT_NEAR(t.prefill_saved_s, -0.0021 + (1.05 - (1.01 + transfer)), 1e-12);
}

TEST(TierTimeline, OverlappedLoadsHideUnderCompute) {
  const TierRun r = run(true);
  ASSERT_EQ(r.iterations.size(), 3u);
  EXPECT_DOUBLE_EQ(num(r.iterations[1], "duration_s"), 1.11);
  EXPECT_DOUBLE_EQ(num(r.iterations[2], "duration_s"), 1.01);  // max(1.01 s, 3.2 ms)
  EXPECT_DOUBLE_EQ(num(r.iterations[2], "tier_added_s"), 0);
  EXPECT_DOUBLE_EQ(num(r.iterations[2], "tier_transfer_s"), 0.0032);
  EXPECT_DOUBLE_EQ(num(request(r, 3), "ttft_s"), 1.01);
  EXPECT_NEAR(num(r.iterations[2], "prefill_saved_s"), 1.05 - 1.01, 1e-12);
}

TEST(TierTimeline, SameSettingsSameBytes) {
  EXPECT_EQ(run(false).iterations_csv, run(false).iterations_csv);
}

}  // namespace
}  // namespace pagesim::sim
