// TimelineWriter on the hand-traced vLLM runs of tests/sim/scheduler/scheduler_test.cpp
// (constant cost of 1 s per iteration): every iteration slice and every request phase at
// the times worked out there, and the bounds (stride, window, iteration cap); and a
// disaggregated run's phases on its prefill and decode replicas.
#include "sim/metrics/timeline.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "allocator/paged/paged_allocator.h"
#include "sim/cluster/replica.h"
#include "sim/cluster/router.h"
#include "sim/cost/constant_cost_model.h"
#include "sim/engine/simulation.h"
#include "sim_harness.h"
#include "traces/vector_source.h"

namespace pagesim::sim {
namespace {

using testing::paged;
using testing::trace_req;

// A slice of the timeline: name and [begin, end) in simulated seconds.
struct Slice {
  std::string name;
  double begin_s = 0, end_s = 0;
  bool operator==(const Slice&) const = default;
};
std::ostream& operator<<(std::ostream& os, const Slice& s) {
  return os << s.name << " [" << s.begin_s << ", " << s.end_s << ")";
}

// A request slice as written: on lane `tid` of process `pid`, for request `id`.
struct LaneSlice {
  std::uint64_t id = 0;
  int pid = 0, tid = 0;
  Slice slice;
  bool outer = false;  // the request's slice, not one of its phases
};

struct Timeline {
  nlohmann::json doc;
  std::vector<nlohmann::json> iterations;                    // the "X" events, in file order
  std::vector<LaneSlice> slices;                             // request slices, in the order they end
  std::map<std::uint64_t, std::vector<Slice>> phases;        // request id -> its phases, in order
  std::map<std::uint64_t, Slice> requests;                   // request id -> its (last) outer slice
  std::map<std::uint64_t, std::vector<int>> lanes;           // request id -> the tids it was on
  std::map<std::pair<int, int>, std::string> lane_names;     // (pid, tid) -> thread name
  std::map<std::string, std::vector<nlohmann::json>> counters;  // counter name -> its events
};

// Parses the writer's output and pairs every "B" with its "E" on its lane (a stack per
// (pid, tid), so an unbalanced or crossed pair, or two requests at once on a lane, fails
// the test).
Timeline parse(const std::string& text) {
  Timeline t;
  t.doc = nlohmann::json::parse(text);
  std::map<std::pair<int, int>, std::vector<std::pair<std::string, double>>> open;
  std::map<std::pair<int, int>, std::uint64_t> holder;  // lane -> the request open on it
  for (const auto& e : t.doc.at("traceEvents")) {
    const std::string ph = e.at("ph");
    if (ph == "X") t.iterations.push_back(e);
    if (ph == "C") t.counters[e.at("name")].push_back(e);
    if (ph == "M" && e.at("name") == "thread_name") t.lane_names[{e.at("pid"), e.at("tid")}] = e.at("args").at("name");
    if (ph == "b" || ph == "e") ADD_FAILURE() << "an async event: requests are on lanes";
    if (ph != "B" && ph != "E") continue;
    EXPECT_EQ(e.at("cat"), "request");
    const std::pair<int, int> lane{e.at("pid"), e.at("tid")};
    EXPECT_GE(lane.second, 2);
    EXPECT_TRUE(t.lane_names.count(lane)) << "lane " << lane.second << " used before it is named";
    const double ts = e.at("ts").get<double>() / 1e6;
    auto& stack = open[lane];
    if (ph == "B") {
      if (stack.empty()) {
        const std::string name = e.at("name");
        EXPECT_EQ(name.rfind("request ", 0), 0u) << name;
        holder[lane] = std::stoull(name.substr(8));
        EXPECT_EQ(e.at("args").at("lane"), lane.second - 2);
      }
      stack.push_back({e.at("name"), ts});
      continue;
    }
    EXPECT_FALSE(stack.empty()) << "an \"E\" without its \"B\" on lane " << lane.second;
    if (stack.empty()) continue;
    EXPECT_EQ(stack.back().first, e.at("name").get<std::string>());
    const Slice s{stack.back().first, stack.back().second, ts};
    EXPECT_LE(s.begin_s, s.end_s);
    stack.pop_back();
    const std::uint64_t id = holder[lane];
    t.slices.push_back({id, lane.first, lane.second, s, stack.empty()});
    if (stack.empty()) {
      t.requests[id] = s;
      t.lanes[id].push_back(lane.second);
    } else {
      t.phases[id].push_back(s);
    }
  }
  for (const auto& [lane, stack] : open) EXPECT_TRUE(stack.empty()) << "lane " << lane.second << " left open";
  return t;
}

// Runs `trace` through the vLLM scheduler over `allocator` at 1 s per iteration (+ swap_s
// per swapped block) and returns the timeline written.
std::string run(std::vector<traces::TraceRequest> trace, alloc::PagedAllocator& allocator, const TimelineSettings& ts,
                PreemptionMode preemption = PreemptionMode::kRecompute, double swap_s = 0) {
  SchedulerSettings s = testing::no_watermark(SchedulerKind::kVllm);
  s.preemption = preemption;
  auto scheduler = make_scheduler(s, allocator);
  ConstantCostCoefficients k;
  k.seconds_per_iteration = 1.0;
  k.seconds_per_swap_block = swap_s;
  ConstantCostModel cost(k);
  traces::VectorSource source(std::move(trace));
  Simulation sim(source, *scheduler, cost, EngineSettings{});
  std::ostringstream out;
  TimelineWriter writer(ts, out, {&allocator});
  sim.add_observer(writer);
  sim.run();
  writer.finish(sim.now());
  return out.str();
}

// r0 (prompt 10, output 3) at 0; r1 (5, 2) at 0.5. it0 [0,1): prefill r0. it1 [1,2):
// decode r0 + prefill r1. it2 [2,3): decode both; both finish at 3.
TEST(Timeline, ContinuousBatchingSlices) {
  auto a = paged(100, 4);
  const Timeline t = parse(run({trace_req(0, 0, 10, 3), trace_req(1, 0.5, 5, 2)}, a, {}));
  EXPECT_EQ(t.doc.at("displayTimeUnit"), "ms");
  ASSERT_EQ(t.iterations.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    const auto& x = t.iterations[static_cast<std::size_t>(i)];
    EXPECT_EQ(x.at("name"), "iteration");
    EXPECT_EQ(x.at("pid"), 1);
    EXPECT_EQ(x.at("tid"), 1);
    EXPECT_DOUBLE_EQ(x.at("ts").get<double>(), i * 1e6);
    EXPECT_DOUBLE_EQ(x.at("dur").get<double>(), 1e6);
    EXPECT_EQ(x.at("args").at("index"), i);
    EXPECT_DOUBLE_EQ(x.at("args").at("duration_ms").get<double>(), 1000.0);
  }
  const auto& it1 = t.iterations[1].at("args");
  EXPECT_EQ(it1.at("batch_requests"), 2);
  EXPECT_EQ(it1.at("batch_seqs"), 2);
  EXPECT_EQ(it1.at("prefill_tokens"), 5);
  EXPECT_EQ(it1.at("decode_tokens"), 1);
  EXPECT_EQ(t.iterations[0].at("args").at("prefill_tokens"), 10);
  EXPECT_EQ(t.iterations[2].at("args").at("decode_tokens"), 2);

  EXPECT_EQ(t.requests.at(0), (Slice{"request 0", 0, 3}));
  EXPECT_EQ(t.requests.at(1), (Slice{"request 1", 0.5, 3}));
  EXPECT_EQ(t.phases.at(0), (std::vector<Slice>{{"prefill", 0, 1}, {"decode", 1, 3}}));
  EXPECT_EQ(t.phases.at(1), (std::vector<Slice>{{"queued", 0.5, 1}, {"prefill", 1, 2}, {"decode", 2, 3}}));
  // Both in the system at once: two lanes of replica 0's process, after its iterations thread.
  EXPECT_EQ(t.lanes.at(0), (std::vector<int>{2}));
  EXPECT_EQ(t.lanes.at(1), (std::vector<int>{3}));
  EXPECT_EQ(t.lane_names, (std::map<std::pair<int, int>, std::string>{
                              {{1, 1}, "iterations"}, {{1, 2}, "requests 0"}, {{1, 3}, "requests 1"}}));

  // Counters at each iteration's start: the memory classes (at it1, r0's 10 prompt tokens +
  // its first token and r1's 5 prompt tokens) and the queues.
  ASSERT_EQ(t.counters.at("memory").size(), 3u);
  const auto& m1 = t.counters.at("memory")[1];
  EXPECT_DOUBLE_EQ(m1.at("ts").get<double>(), 1e6);
  EXPECT_EQ(m1.at("args").at("token_states"), 16);
  std::int64_t sum = 0;
  for (const char* c : {"token_states", "reserved", "over_reserved", "rounding", "free"})
    sum += m1.at("args").at(c).get<std::int64_t>();
  EXPECT_EQ(sum, 400);  // the classes partition the pool
  EXPECT_EQ(t.counters.at("queues")[1].at("args").at("running"), 2);
  EXPECT_EQ(t.counters.count("prefix"), 0u);  // no prefix cache
}

// Pool of 5 blocks of 4 slots; r0 (8, 8) and r1 (4, 4) at 0. it2 preempts r1 (recompute),
// it3 re-admits it, it4 preempts it again; r0 finishes at 8 (it7); it8 [8,9) re-prefills
// r1, whose token from that prefill is its last.
TEST(Timeline, RecomputePreemptionPhases) {
  auto a = paged(5, 4);
  const Timeline t = parse(run({trace_req(0, 0, 8, 8), trace_req(1, 0, 4, 4)}, a, {}));
  EXPECT_EQ(t.iterations.size(), 9u);
  EXPECT_EQ(t.phases.at(1), (std::vector<Slice>{{"prefill", 0, 1},
                                                {"decode", 1, 2},
                                                {"preempted", 2, 3},
                                                {"prefill", 3, 4},
                                                {"preempted", 4, 8},
                                                {"prefill", 8, 9}}));
  EXPECT_EQ(t.phases.at(0), (std::vector<Slice>{{"prefill", 0, 1}, {"decode", 1, 8}}));
  EXPECT_EQ(t.requests.at(1), (Slice{"request 1", 0, 9}));
}

// Same trace, swap preemption at 0.5 s per block: it2 [2,4) swaps r1 out; r0 finishes at 9;
// it8 [9,11) swaps r1 in and decodes it; it9 [11,12) finishes it.
TEST(Timeline, SwapPhases) {
  auto a = paged(5, 4, 8);
  const Timeline t =
      parse(run({trace_req(0, 0, 8, 8), trace_req(1, 0, 4, 4)}, a, {}, PreemptionMode::kSwap, 0.5));
  EXPECT_EQ(t.phases.at(1), (std::vector<Slice>{{"prefill", 0, 1},
                                                {"decode", 1, 2},
                                                {"swapped", 2, 9},
                                                {"decode", 9, 12}}));
  ASSERT_EQ(t.iterations.size(), 10u);
  EXPECT_DOUBLE_EQ(t.iterations[2].at("dur").get<double>(), 2e6);
  EXPECT_EQ(t.counters.at("queues")[2].at("args").at("swapped"), 1);
}

// The timeline of a disaggregated run: per replica a PagedAllocator (blocks of 4), the vllm
// scheduler and 1 s per iteration; replica 0 (64 slots) prefills, replica 1 (decode_slots)
// decodes.
std::string run_disaggregated(std::vector<traces::TraceRequest> trace, std::int64_t decode_slots,
                              const DisaggregationSettings& d) {
  std::vector<std::unique_ptr<alloc::PagedAllocator>> pools;
  std::vector<std::unique_ptr<Scheduler>> schedulers;
  ConstantCostModel cost(1.0);
  std::vector<Replica> replicas;
  SchedulerSettings s;
  s.kind = SchedulerKind::kVllm;
  for (std::int32_t i = 0; i < 2; ++i) {
    alloc::PagedAllocatorSettings a;
    a.num_blocks = i == 0 ? 16 : decode_slots / 4;
    a.block_size = 4;
    pools.push_back(std::make_unique<alloc::PagedAllocator>(a));
    schedulers.push_back(make_scheduler(s, *pools.back()));
    replicas.emplace_back(i, *schedulers.back(), cost);
  }
  traces::VectorSource source(std::move(trace));
  EngineSettings es;
  es.disaggregation = d;
  es.kv_bytes_per_token = 1;
  Simulation sim(source, std::move(replicas), make_router(RouterSettings{}), es);
  std::ostringstream out;
  TimelineWriter writer({}, out, {pools[0].get(), pools[1].get()});
  sim.add_observer(writer);
  sim.run();
  writer.finish(sim.now());
  return out.str();
}

// The outer slices and phases of each request per process (pid), in the order they end.
std::map<std::pair<std::uint64_t, int>, std::vector<Slice>> slices_by_process(const Timeline& t) {
  std::map<std::pair<std::uint64_t, int>, std::vector<Slice>> out;
  for (const LaneSlice& s : t.slices) out[{s.id, s.pid}].push_back(s.slice);
  return out;
}

// Replica 0 prefills, replica 1 decodes (16 slots in blocks of 4); 1 s iterations; 1 byte of
// KV per token at 8 bytes/s: 8 tokens move in 1 s, 9 in 1.125 s (the hand-traced run of
// tests/sim/cluster/disaggregation_test.cpp, FullDecodeReplicaKeepsTheKvOnThePrefillSide).
// r0 (prompt 8, 3 tokens) and r1 (9, 2) arrive at 0; replica 0 prefills both [0, 1]; both
// first tokens at 1. r0's KV moves [1, 2] and it decodes on replica 1 [2, 4]. r1's 3 blocks
// do not fit there until r0 finishes at 4: it waits [1, 4], moves [4, 5.125] and decodes
// [5.125, 6.125]. Prefill ends at the first token, the wait and the transfer are phases of
// their own on the prefill replica (process 1), decode is on the decode replica (process 2).
TEST(Timeline, DisaggregatedPhasesFollowTheRequestToItsDecodeReplica) {
  DisaggregationSettings d;
  d.prefill = 1;
  d.transfer_gbps = 8 * 8 / 1e9;  // 8 bytes/s, of 1 byte per token (run_disaggregated)
  const std::string text = run_disaggregated({trace_req(0, 0, 8, 3), trace_req(1, 0, 9, 2)}, 16, d);
  const Timeline t = parse(text);  // every "B" paired with its "E"
  const auto by_process = slices_by_process(t);
  using V = std::vector<Slice>;
  // Each process's slices of a request, phases first and the outer slice last (the order of
  // the "E" events); phases that last no time (r0's wait for the transfer) have no slice.
  EXPECT_EQ(by_process.at({0, 1}), (V{{"prefill", 0, 1},
                                      {"kv_transfer", 1, 2},
                                      {"request 0", 0, 2}}));
  EXPECT_EQ(by_process.at({0, 2}), (V{{"decode", 2, 4}, {"request 0", 2, 4}}));
  EXPECT_EQ(by_process.at({1, 1}), (V{{"prefill", 0, 1},
                                      {"transfer_queued", 1, 4},
                                      {"kv_transfer", 4, 5.125},
                                      {"request 1", 0, 5.125}}));
  EXPECT_EQ(by_process.at({1, 2}), (V{{"decode", 5.125, 6.125}, {"request 1", 5.125, 6.125}}));
  EXPECT_EQ(by_process.size(), 4u);
  // Lanes: r0 and r1 overlap on the prefill replica (lanes 0 and 1, tids 2 and 3); on the
  // decode replica r1 arrives at 5.125, after r0 left at 4, and reuses lane 0.
  EXPECT_EQ(t.lanes.at(0), (std::vector<int>{2, 2}));
  EXPECT_EQ(t.lanes.at(1), (std::vector<int>{3, 2}));
  EXPECT_EQ(t.lane_names.at({1, 3}), "requests 1");
  EXPECT_EQ(t.lane_names.count({2, 3}), 0u);  // the decode replica needed one lane only
  // Iterations: one of the prefill replica (both prompts), three of the decode replica.
  std::map<int, int> iterations;
  for (const auto& x : t.iterations) ++iterations[x.at("pid").get<int>()];
  EXPECT_EQ(iterations, (std::map<int, int>{{1, 1}, {2, 3}}));
}

// A lane is reused once free, the lowest first: r0 [0, 3) and r1 [0.5, 3) take lanes 0 and
// 1; r2 arrives at 3.25, when both are free again, and takes lane 0; r3 at 3.5 lane 1.
TEST(Timeline, LanesAreReusedLowestFirst) {
  auto a = paged(100, 4);
  const Timeline t = parse(run(
      {trace_req(0, 0, 10, 3), trace_req(1, 0.5, 5, 2), trace_req(2, 3.25, 5, 2), trace_req(3, 3.5, 5, 2)}, a, {}));
  EXPECT_EQ(t.requests.at(0).end_s, 3);
  EXPECT_EQ(t.requests.at(2).begin_s, 3.25);
  EXPECT_EQ(t.lanes.at(0), (std::vector<int>{2}));
  EXPECT_EQ(t.lanes.at(1), (std::vector<int>{3}));
  EXPECT_EQ(t.lanes.at(2), (std::vector<int>{2}));
  EXPECT_EQ(t.lanes.at(3), (std::vector<int>{3}));
  EXPECT_EQ(t.lane_names.size(), 3u);  // iterations + 2 lanes for 4 requests
}

// Bounds: every 2nd iteration; a window that starts after r0's arrival keeps r1 only; a
// cap of 2 iterations closes the window at the second one written.
TEST(Timeline, StrideWindowAndCap) {
  auto a = paged(5, 4);
  TimelineSettings every2;
  every2.stride = 2;
  Timeline t = parse(run({trace_req(0, 0, 8, 8), trace_req(1, 0, 4, 4)}, a, every2));
  ASSERT_EQ(t.iterations.size(), 5u);  // it0, 2, 4, 6, 8
  EXPECT_EQ(t.iterations[1].at("args").at("index"), 2);
  EXPECT_EQ(t.counters.at("memory").size(), 5u);
  EXPECT_EQ(t.phases.at(1).size(), 6u);  // phases are followed at every iteration

  auto b = paged(100, 4);
  TimelineSettings window;
  window.start_s = 0.25;
  window.end_s = 2.5;
  t = parse(run({trace_req(0, 0, 10, 3), trace_req(1, 0.5, 5, 2)}, b, window));
  EXPECT_EQ(t.requests.count(0), 0u);
  EXPECT_EQ(t.requests.at(1), (Slice{"request 1", 0.5, 3}));
  ASSERT_EQ(t.iterations.size(), 2u);  // it1 at 1 s, it2 at 2 s
  EXPECT_DOUBLE_EQ(t.iterations[0].at("ts").get<double>(), 1e6);

  auto c = paged(100, 4);
  TimelineSettings cap;
  cap.max_iterations = 2;
  t = parse(run({trace_req(0, 0, 10, 3), trace_req(1, 1.5, 5, 2)}, c, cap));
  EXPECT_EQ(t.iterations.size(), 2u);
  EXPECT_EQ(t.requests.count(1), 0u);  // arrived after the window closed at it1
  EXPECT_EQ(t.requests.at(0), (Slice{"request 0", 0, 3}));
}

}  // namespace
}  // namespace pagesim::sim
