// Disaggregated prefill/decode (docs/engine.md): hand-traced timelines of the hand-off (first
// token at the prefill replica, transfer start and end, the first decode iteration, the
// finish), including a decode replica too full to take the KV at once and parallel samples
// forking on the decode side; randomized runs (several batching policies) with
// every replica's invariants checked after every one of its iterations; determinism.
#include <gtest/gtest.h>

#include <random>

#include "cluster_harness.h"

namespace pagesim::sim {
namespace {

using testing::ClusterOutcome;
using testing::ReplicaShape;
using testing::simulate_cluster;
using testing::trace_req;

// Replica 0 prefills, replica 1 decodes; 1 byte of KV per token over a link of 4 bytes/s
// with a 0.25 s latency: a prompt of 8 tokens moves in 0.25 + 8 / 4 = 2.25 s.
DisaggregationSettings one_to_one() {
  DisaggregationSettings d;
  d.prefill = 1;
  d.transfer_gbps = 4 * 8 / 1e9;  // 4 bytes/s (the harness's KV: 1 byte per token)
  d.transfer_latency_us = 0.25e6;
  return d;
}

std::vector<testing::Row> rows_of(const ClusterOutcome& o, const std::string& replica) {
  std::vector<testing::Row> out;
  for (const auto& row : testing::parse_csv(o.iterations_csv))
    if (row.at("replica") == replica) out.push_back(row);
  return out;
}

TEST(Disaggregation, HandOffTimeline) {
  // Prefill iterations take 1 s, decode iterations 0.5 s. Request 0: prompt 8, 3 tokens.
  //   0.00  arrives; replica 0 prefills it                        [0, 1]
  //   1.00  first token (TTFT 1.00); hand-off; replica 1 allocates 8 slots; transfer starts
  //   2.00  request 1 (prompt 4, 1 token) arrives; replica 0 prefills it [2, 3] while the KV
  //         of request 0 is held on both replicas (8 token slots each)
  //   3.00  request 1 finishes at its prefill (nothing to hand off)
  //   3.25  transfer ends: replica 0 frees, replica 1 decodes      [3.25, 3.75]
  //   3.75  token 2 (gap 2.75: the transfer is in it)              [3.75, 4.25]
  //   4.25  token 3: finished
  std::vector<ReplicaShape> shapes(2);
  shapes[1].seconds_per_iteration = 0.5;
  RouterSettings rs;
  int probed = 0;
  testing::IterationProbe probe = [&](std::int32_t replica, const IterationSample& s, const auto& pools) {
    if (replica == 0 && s.start_s == 2.0) {
      EXPECT_EQ(s.memory.token_states, 8 + 4);                   // request 0 in transfer + request 1
      EXPECT_EQ(pools[1]->breakdown().token_states, 8);          // the receiving side
      ++probed;
    }
  };
  const ClusterOutcome o = simulate_cluster({trace_req(0, 0.0, 8, 3), trace_req(1, 2.0, 4, 1)}, shapes, rs, 0,
                                            one_to_one(), probe);
  EXPECT_EQ(probed, 1);
  const testing::Placed& a = o.placed.at(0);
  EXPECT_EQ(a.prefill_replica, 0);
  EXPECT_EQ(a.replica, 1);
  EXPECT_DOUBLE_EQ(a.first_token_s, 1.0);
  EXPECT_DOUBLE_EQ(a.transfer_start_s, 1.0);
  EXPECT_DOUBLE_EQ(a.transfer_end_s, 3.25);
  EXPECT_DOUBLE_EQ(a.max_token_gap_s, 2.75);
  EXPECT_DOUBLE_EQ(a.finish_s, 4.25);
  const testing::Placed& b = o.placed.at(1);
  EXPECT_EQ(b.replica, 0);
  EXPECT_EQ(b.prefill_replica, -1);  // finished by its prefill: never handed off
  EXPECT_DOUBLE_EQ(b.first_token_s, 3.0);
  EXPECT_DOUBLE_EQ(b.finish_s, 3.0);
  const auto r0 = rows_of(o, "0"), r1 = rows_of(o, "1");
  ASSERT_EQ(r0.size(), 2u);
  EXPECT_DOUBLE_EQ(std::stod(r0[0].at("start_s")), 0.0);
  EXPECT_DOUBLE_EQ(std::stod(r0[1].at("start_s")), 2.0);
  ASSERT_EQ(r1.size(), 2u);
  EXPECT_DOUBLE_EQ(std::stod(r1[0].at("start_s")), 3.25);
  EXPECT_DOUBLE_EQ(std::stod(r1[1].at("start_s")), 3.75);
  EXPECT_EQ(o.routed_requests, (std::vector<std::int64_t>{2, 0}));
  EXPECT_EQ(o.handed_in, (std::vector<std::int64_t>{0, 1}));
  // requests.csv: the TTFT of request 0 is the prefill's.
  for (const auto& row : testing::parse_csv(o.requests_csv))
    if (row.at("id") == "0") {
      EXPECT_DOUBLE_EQ(std::stod(row.at("ttft_s")), 1.0);
    }
}

TEST(Disaggregation, FullDecodeReplicaKeepsTheKvOnThePrefillSide) {
  // Both replicas: 1 s iterations, blocks of 4. The decode replica has 4 blocks (16 slots;
  // vllm keeps one block of headroom, so a group may reach 3 blocks there). 1 byte per token
  // at 8 bytes/s, no latency: 8 tokens move in 1 s, 9 in 1.125 s.
  // Requests 0 (prompt 8, 3 tokens) and 1 (prompt 9, 2 tokens) arrive at 0.
  //   0      replica 0 prefills both                               [0, 1]
  //   1      both first tokens; 0 is handed off and takes 2 of the decode replica's 4
  //          blocks, transfer [1, 2]; 1 needs 3 blocks, finds 2 and waits, its 3 blocks
  //          held on replica 0
  //   2      0 arrives; decode [2, 3] grows it to 9 tokens = 3 blocks (1 free)
  //   3      0's token 2 (gap 2); 1 still does not fit; decode    [3, 4]
  //   4      0's token 3: finished, freed; 1's transfer starts    [4, 5.125]
  //   5.125  1 arrives; decode                                    [5.125, 6.125]
  //   6.125  1's token 2 (gap 5.125 = 6.125 - 1): finished
  std::vector<ReplicaShape> shapes(2);
  shapes[1].slots = 16;
  DisaggregationSettings d = one_to_one();
  d.transfer_gbps = 8 * 8 / 1e9;  // 8 bytes/s
  d.transfer_latency_us = 0;
  int probed = 0;
  testing::IterationProbe probe = [&](std::int32_t replica, const IterationSample& s, const auto& pools) {
    if (replica == 1 && s.start_s == 3.0) {
      EXPECT_EQ(s.memory.token_states, 10);              // request 0 with this iteration's slot
      EXPECT_EQ(pools[0]->breakdown().token_states, 9);  // request 1 waits, held on replica 0
      ++probed;
    }
  };
  const ClusterOutcome o = simulate_cluster({trace_req(0, 0.0, 8, 3), trace_req(1, 0.0, 9, 2)}, shapes, RouterSettings{},
                                            0, d, probe);
  EXPECT_EQ(probed, 1);
  const testing::Placed& a = o.placed.at(0);
  EXPECT_DOUBLE_EQ(a.first_token_s, 1.0);
  EXPECT_DOUBLE_EQ(a.transfer_start_s, 1.0);
  EXPECT_DOUBLE_EQ(a.transfer_end_s, 2.0);
  EXPECT_DOUBLE_EQ(a.max_token_gap_s, 2.0);
  EXPECT_DOUBLE_EQ(a.finish_s, 4.0);
  const testing::Placed& b = o.placed.at(1);
  EXPECT_EQ(b.replica, 1);
  EXPECT_DOUBLE_EQ(b.first_token_s, 1.0);
  EXPECT_DOUBLE_EQ(b.transfer_start_s, 4.0);
  EXPECT_DOUBLE_EQ(b.transfer_end_s, 5.125);
  EXPECT_DOUBLE_EQ(b.max_token_gap_s, 5.125);
  EXPECT_DOUBLE_EQ(b.finish_s, 6.125);
  const auto r1 = rows_of(o, "1");
  ASSERT_EQ(r1.size(), 3u);
  EXPECT_DOUBLE_EQ(std::stod(r1[0].at("start_s")), 2.0);
  EXPECT_DOUBLE_EQ(std::stod(r1[1].at("start_s")), 3.0);
  EXPECT_DOUBLE_EQ(std::stod(r1[2].at("start_s")), 5.125);
  EXPECT_EQ(rows_of(o, "0").size(), 1u);
}

TEST(Disaggregation, ParallelSamplesForkOnTheDecodeReplica) {
  // HandOffTimeline's request 0 with n = 2: the prompt's one sequence (8 slots) is handed
  // off, then forks into 2 on the decode replica at 3.25, sharing the prompt's blocks; the
  // decode iterations batch 2 sequences. The times are those of n = 1 (constant cost).
  std::vector<ReplicaShape> shapes(2);
  shapes[1].seconds_per_iteration = 0.5;
  int probed = 0;
  testing::IterationProbe probe = [&](std::int32_t replica, const IterationSample& s, const auto&) {
    if (replica == 1 && s.start_s == 3.25) {
      EXPECT_EQ(s.batch_seqs, 2);
      EXPECT_EQ(s.physical_blocks, 2 + 2);  // the shared prompt blocks + each sample's new block
      ++probed;
    }
  };
  const ClusterOutcome o =
      simulate_cluster({trace_req(0, 0.0, 8, 3, 2)}, shapes, RouterSettings{}, 0, one_to_one(), probe);
  EXPECT_EQ(probed, 1);
  const testing::Placed& a = o.placed.at(0);
  EXPECT_EQ(a.replica, 1);
  EXPECT_DOUBLE_EQ(a.first_token_s, 1.0);
  EXPECT_DOUBLE_EQ(a.transfer_end_s, 3.25);
  EXPECT_DOUBLE_EQ(a.max_token_gap_s, 2.75);
  EXPECT_DOUBLE_EQ(a.finish_s, 4.25);
  const auto r0 = rows_of(o, "0");
  ASSERT_EQ(r0.size(), 1u);
  EXPECT_EQ(r0[0].at("batch_seqs"), "1");  // the prefill replica never forks
}

TEST(Disaggregation, NeedsADecodeReplica) {
  std::vector<ReplicaShape> shapes(2);
  DisaggregationSettings d = one_to_one();
  d.prefill = 2;
  EXPECT_THROW(simulate_cluster({trace_req(0, 0.0, 8, 3)}, shapes, RouterSettings{}, 0, d), SimulationError);
}

// Bursty arrivals, some parallel sampling (n = 2), prompts sharing a few prefixes, mixed output lengths.
std::vector<traces::TraceRequest> random_trace(std::uint64_t seed, int n) {
  std::mt19937_64 rng(seed);
  std::vector<traces::TraceRequest> trace;
  double t = 0;
  for (int i = 0; i < n; ++i) {
    t += (rng() % 4 == 0) ? 0.0 : static_cast<double>(rng() % 1000) / 4000.0;
    const std::int64_t blocks = 1 + static_cast<std::int64_t>(rng() % 6);
    traces::TraceRequest r = trace_req(static_cast<std::uint64_t>(i), t, blocks * 4 - static_cast<std::int64_t>(rng() % 3),
                                       1 + static_cast<std::int64_t>(rng() % 16), rng() % 6 == 0 ? 2 : 1);
    const std::uint64_t family = rng() % 3;
    for (std::int64_t b = 0; b < blocks; ++b) r.hash_ids.push_back(family * 100 + static_cast<std::uint64_t>(b));
    trace.push_back(std::move(r));
  }
  return trace;
}

struct RandomCase {
  RouterKind prefill_router;
  RouterKind decode_router;
  SchedulerKind prefill_scheduler = SchedulerKind::kVllm;
  SchedulerKind decode_scheduler = SchedulerKind::kVllm;
};

class DisaggregationRandomized : public ::testing::TestWithParam<RandomCase> {};

TEST_P(DisaggregationRandomized, InvariantsAfterEveryIterationHandOffsInOrderAndDeterminism) {
  std::int64_t waited = 0, preemptions = 0;
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    // 4 replicas, heterogeneous: 1 or 2 prefill replicas; small decode pools so that
    // transfers wait for room and decode replicas preempt.
    std::vector<ReplicaShape> shapes(4);
    shapes[0].slots = 128;
    shapes[1].slots = 96;
    shapes[1].seconds_per_iteration = 0.75;
    shapes[2].slots = 80;
    shapes[2].seconds_per_iteration = 0.25;
    shapes[3].slots = 72;
    shapes[3].seconds_per_iteration = 0.5;
    shapes[0].scheduler = shapes[1].scheduler = GetParam().prefill_scheduler;
    shapes[2].scheduler = shapes[3].scheduler = GetParam().decode_scheduler;
    const bool cached = seed % 2 == 0;
    for (auto& s : shapes) s.prefix_cache = cached;
    RouterSettings rs;
    rs.kind = GetParam().prefill_router;
    rs.seed = seed;
    DisaggregationSettings d;
    d.prefill = seed % 3 == 0 ? 1 : 2;
    d.transfer_gbps = 64 * 8 / 1e9;  // 64 bytes/s, of 2 bytes per token (below)
    d.transfer_latency_us = 0.05e6 * static_cast<double>(seed % 2);
    d.decode_router = GetParam().decode_router;
    const int n = 150;
    const ClusterOutcome o =
        simulate_cluster(random_trace(seed, n), shapes, rs, cached ? 4 : 0, d, {}, {}, 2.0, seed + 7);
    ASSERT_EQ(static_cast<int>(o.placed.size()), n) << "seed " << seed;
    EXPECT_GT(o.invariant_checks, 0);
    std::int64_t handed = 0, expect_handed = 0;
    for (std::int64_t h : o.handed_in) handed += h;
    for (std::int32_t i = 0; i < d.prefill; ++i) EXPECT_EQ(o.handed_in[static_cast<std::size_t>(i)], 0);
    for (std::int32_t i = d.prefill; i < 4; ++i) EXPECT_EQ(o.routed_requests[static_cast<std::size_t>(i)], 0);
    for (const auto& [id, p] : o.placed) {
      EXPECT_GT(p.first_token_s, 0);
      EXPECT_GE(p.finish_s, p.first_token_s);
      if (p.prefill_replica < 0) {  // one token: finished by its prefill, on a prefill replica
        EXPECT_LT(p.replica, d.prefill) << "request " << id;
        continue;
      }
      ++expect_handed;
      EXPECT_LT(p.prefill_replica, d.prefill);
      EXPECT_GE(p.replica, d.prefill);
      EXPECT_GE(p.transfer_start_s, p.first_token_s);
      EXPECT_GT(p.transfer_end_s, p.transfer_start_s);
      EXPECT_GT(p.finish_s, p.transfer_end_s);
      // The first decode token comes after the transfer: its gap covers it.
      EXPECT_GE(p.max_token_gap_s, p.transfer_end_s - p.first_token_s - 1e-12) << "request " << id;
      if (p.transfer_start_s > p.first_token_s) ++waited;
    }
    EXPECT_EQ(handed, expect_handed);
    const ClusterOutcome again =
        simulate_cluster(random_trace(seed, n), shapes, rs, cached ? 4 : 0, d, {}, {}, 2.0, seed + 7);
    EXPECT_EQ(again.iterations_csv, o.iterations_csv) << "seed " << seed;
    EXPECT_EQ(again.requests_csv, o.requests_csv) << "seed " << seed;
    for (const auto& row : testing::parse_csv(o.iterations_csv)) preemptions += std::stoll(row.at("preemptions"));
  }
  EXPECT_GT(waited, 0);       // some decode replica was full at a hand-off
  EXPECT_GT(preemptions, 0);  // and some preempted (decode side re-prefills there)
}

INSTANTIATE_TEST_SUITE_P(Routers, DisaggregationRandomized,
                         ::testing::Values(RandomCase{RouterKind::kRoundRobin, RouterKind::kLeastKv},
                                           RandomCase{RouterKind::kLeastOutstanding, RouterKind::kLeastOutstanding},
                                           RandomCase{RouterKind::kPrefixAware, RouterKind::kRoundRobin},
                                           RandomCase{RouterKind::kRandom, RouterKind::kRandom},
                                           // Other batching policies on either side.
                                           RandomCase{RouterKind::kRoundRobin, RouterKind::kLeastKv,
                                                      SchedulerKind::kSarathi, SchedulerKind::kVllmV1},
                                           RandomCase{RouterKind::kLeastKv, RouterKind::kLeastOutstanding,
                                                      SchedulerKind::kVllmV1, SchedulerKind::kSarathi},
                                           RandomCase{RouterKind::kRoundRobin, RouterKind::kRoundRobin,
                                                      SchedulerKind::kVllmV0, SchedulerKind::kOrca}));

}  // namespace
}  // namespace pagesim::sim
