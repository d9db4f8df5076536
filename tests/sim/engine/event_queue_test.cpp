// EventQueue: events come out ordered by time, ties by insertion order (kInsertion) or by
// their own times, kinds and replicas (kCanonical); now() follows the popped events, and an
// empty queue says so.
#include "sim/engine/event_queue.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace pagesim::sim {
namespace {

TEST(EventQueue, EmptyQueue) {
  HeapEventQueue q;
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.now(), 0.0);
  EXPECT_FALSE(q.pop().has_value());
  EXPECT_EQ(q.now(), 0.0);  // popping nothing does not move the clock
}

TEST(EventQueue, PopsInTimeOrderAndAdvancesNow) {
  HeapEventQueue q;
  q.push(3.0, 0.0, EventKind::kIterationEnd);
  q.push(1.0, 0.0, EventKind::kArrival);
  q.push(2.5, 0.0, EventKind::kArrival);
  EXPECT_FALSE(q.empty());
  EXPECT_EQ(q.now(), 0.0);  // pushing does not move the clock

  auto e = q.pop();
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->time, 1.0);
  EXPECT_EQ(e->kind, EventKind::kArrival);
  EXPECT_EQ(e->order, 1u);  // the second event pushed
  EXPECT_EQ(q.now(), 1.0);

  e = q.pop();
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->time, 2.5);
  EXPECT_EQ(q.now(), 2.5);

  e = q.pop();
  ASSERT_TRUE(e.has_value());
  EXPECT_EQ(e->time, 3.0);
  EXPECT_EQ(e->kind, EventKind::kIterationEnd);
  EXPECT_EQ(q.now(), 3.0);

  EXPECT_TRUE(q.empty());
  EXPECT_FALSE(q.pop().has_value());
  EXPECT_EQ(q.now(), 3.0);  // the clock stays at the last event
}

TEST(EventQueue, TiesResolveByInsertionOrder) {
  HeapEventQueue q;
  const EventKind kinds[] = {EventKind::kIterationEnd, EventKind::kArrival, EventKind::kArrival,
                             EventKind::kIterationEnd, EventKind::kArrival};
  for (EventKind k : kinds) q.push(5.0, 0.0, k);
  for (std::uint64_t i = 0; i < std::size(kinds); ++i) {
    auto e = q.pop();
    ASSERT_TRUE(e.has_value());
    EXPECT_EQ(e->time, 5.0);
    EXPECT_EQ(e->order, i);
    EXPECT_EQ(e->kind, kinds[i]) << "event " << i;
  }
  EXPECT_TRUE(q.empty());
}

TEST(EventQueue, EventsPushedWhilePoppingKeepTheirPlace) {
  HeapEventQueue q;
  q.push(1.0, 0.0, EventKind::kArrival);     // order 0
  q.push(2.0, 0.0, EventKind::kArrival);     // order 1
  ASSERT_EQ(q.pop()->order, 0u);        // now = 1
  q.push(1.0, 0.0, EventKind::kIterationEnd);  // order 2: at now, allowed, and before t = 2
  q.push(2.0, 0.0, EventKind::kIterationEnd);  // order 3: ties with order 1, comes after it
  auto a = q.pop();
  EXPECT_EQ(a->order, 2u);
  EXPECT_EQ(a->time, 1.0);
  EXPECT_EQ(q.now(), 1.0);
  auto b = q.pop();
  auto c = q.pop();
  EXPECT_EQ(b->order, 1u);
  EXPECT_EQ(c->order, 3u);
  EXPECT_EQ(c->kind, EventKind::kIterationEnd);
  EXPECT_EQ(q.now(), 2.0);
  EXPECT_TRUE(q.empty());
}

// Many events with few distinct times: the pop order is the stable sort of the push order
// by time, and the clock never goes backwards.
TEST(EventQueue, MatchesStableSortByTime) {
  std::unique_ptr<EventQueue> q = std::make_unique<HeapEventQueue>();
  std::mt19937_64 rng(42);
  std::uniform_int_distribution<int> t(0, 20);
  std::vector<std::pair<double, std::uint64_t>> pushed;
  for (std::uint64_t i = 0; i < 500; ++i) {
    const double time = 0.5 * t(rng);
    q->push(time, 0.0, i % 3 == 0 ? EventKind::kIterationEnd : EventKind::kArrival);
    pushed.emplace_back(time, i);
  }
  std::stable_sort(pushed.begin(), pushed.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  double last = 0;
  for (const auto& [time, order] : pushed) {
    auto e = q->pop();
    ASSERT_TRUE(e.has_value());
    ASSERT_EQ(e->time, time);
    ASSERT_EQ(e->order, order);
    ASSERT_GE(q->now(), last);
    last = q->now();
  }
  EXPECT_TRUE(q->empty());
}

// Pushes, pops and next_time() interleaved at random (a pop often followed by a push, the
// step the heap does in place): every answer is a sorted reference's, by (time, order).
TEST(EventQueue, InterleavedOperationsMatchASortedReference) {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    HeapEventQueue q;
    std::mt19937_64 rng(seed);
    std::set<std::pair<double, std::uint64_t>> ref;  // (time, order)
    std::uint64_t order = 0;
    for (int step = 0; step < 3000; ++step) {
      const int op = static_cast<int>(rng() % 10);
      if (op < 5 || ref.empty()) {
        const double time = q.now() + 0.25 * static_cast<double>(rng() % 8);
        q.push(time, 0.0, EventKind::kIterationEnd, static_cast<std::int32_t>(rng() % 4));
        ref.emplace(time, order++);
      } else {
        const auto e = q.pop();
        ASSERT_TRUE(e.has_value());
        ASSERT_EQ(std::make_pair(e->time, e->order), *ref.begin());
        ref.erase(ref.begin());
      }
      ASSERT_EQ(q.empty(), ref.empty());
      ASSERT_EQ(q.next_time(), ref.empty() ? std::numeric_limits<double>::infinity() : ref.begin()->first);
    }
    while (!ref.empty()) {
      const auto e = q.pop();
      ASSERT_TRUE(e.has_value());
      ASSERT_EQ(std::make_pair(e->time, e->order), *ref.begin());
      ref.erase(ref.begin());
    }
    EXPECT_FALSE(q.pop().has_value());
    EXPECT_TRUE(q.empty());
  }
}

// kCanonical: at one instant, the earlier scheduled first; then arrivals, transfer ends (in
// insertion order) and iteration ends by replica, whatever order they were pushed in.
TEST(EventQueue, CanonicalTiesFollowScheduledTimeThenKindThenReplica) {
  HeapEventQueue q;
  q.set_tie_order(TieOrder::kCanonical);
  q.push(2.0, 1.5, EventKind::kIterationEnd, 3);
  q.push(2.0, 1.0, EventKind::kIterationEnd, 5);
  q.push(2.0, 1.5, EventKind::kIterationEnd, 1);
  q.push(2.0, 1.5, EventKind::kTransferEnd, 0, 77);
  q.push(2.0, 1.5, EventKind::kArrival);
  q.push(2.0, 1.5, EventKind::kTransferEnd, 0, 66);
  q.push(1.0, 1.0, EventKind::kIterationEnd, 9);
  // (time, scheduled_s, kind, replica, request) in the order they must pop.
  const std::vector<std::tuple<double, double, EventKind, std::int32_t, std::uint64_t>> expected = {
      {1.0, 1.0, EventKind::kIterationEnd, 9, 0}, {2.0, 1.0, EventKind::kIterationEnd, 5, 0},
      {2.0, 1.5, EventKind::kArrival, 0, 0},      {2.0, 1.5, EventKind::kTransferEnd, 0, 77},
      {2.0, 1.5, EventKind::kTransferEnd, 0, 66}, {2.0, 1.5, EventKind::kIterationEnd, 1, 0},
      {2.0, 1.5, EventKind::kIterationEnd, 3, 0}};
  for (const auto& [time, scheduled, kind, replica, request] : expected) {
    const auto e = q.pop();
    ASSERT_TRUE(e.has_value());
    EXPECT_EQ(e->time, time);
    EXPECT_EQ(e->scheduled_s, scheduled);
    EXPECT_EQ(e->kind, kind);
    EXPECT_EQ(e->replica, replica);
    EXPECT_EQ(e->request, request);
  }
  EXPECT_TRUE(q.empty());
}

// kCanonical: the iteration ends of several replicas (one each), with few distinct times,
// pop in the same order whatever order they were pushed in, interleaved with pops.
TEST(EventQueue, CanonicalOrderDoesNotDependOnPushOrder) {
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937_64 rng(seed);
    struct Pending {
      double time, scheduled;
      std::int32_t replica;
    };
    std::vector<Pending> events;
    for (std::int32_t r = 0; r < 16; ++r) {
      const double scheduled = 0.5 * static_cast<double>(rng() % 3);
      events.push_back({scheduled + 0.5 * static_cast<double>(1 + rng() % 3), scheduled, r});
    }
    std::vector<std::vector<std::int32_t>> orders;
    for (int shuffle = 0; shuffle < 3; ++shuffle) {
      std::shuffle(events.begin(), events.end(), rng);
      HeapEventQueue q;
      q.set_tie_order(TieOrder::kCanonical);
      for (const Pending& e : events) q.push(e.time, e.scheduled, EventKind::kIterationEnd, e.replica);
      std::vector<std::int32_t> popped;
      std::pair<double, double> last{0, 0};
      while (const auto e = q.pop()) {
        const std::pair<double, double> key{e->time, e->scheduled_s};
        EXPECT_LE(last, key);
        if (last == key) {
          EXPECT_GT(e->replica, popped.back());
        }
        last = key;
        popped.push_back(e->replica);
      }
      ASSERT_EQ(popped.size(), events.size());
      orders.push_back(std::move(popped));
    }
    EXPECT_EQ(orders[0], orders[1]);
    EXPECT_EQ(orders[0], orders[2]);
  }
}

// pops_before says, for an iteration end not pushed, what pushing it would decide: with the
// same events queued, every event popped before the pushed end is one it does not precede,
// and every event popped after it one it does.
TEST(EventQueue, PopsBeforeAgreesWithPushingTheEvent) {
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<int> time(0, 4), kind(0, 1), replica(0, 3);
  for (int trial = 0; trial < 500; ++trial) {
    HeapEventQueue q;
    q.set_tie_order(TieOrder::kCanonical);
    for (int i = 0; i < 8; ++i) {
      const double t = time(rng), at = std::min<double>(t, time(rng));
      if (kind(rng) == 0) q.push(t, at, EventKind::kArrival);
      else q.push(t, at, EventKind::kIterationEnd, replica(rng) + 10 * i);  // one end per replica
    }
    const double t = time(rng), at = std::min<double>(t, time(rng));
    const std::int32_t r = replica(rng) + 100;
    q.push(t, at, EventKind::kIterationEnd, r);
    bool seen = false;
    int popped = 0;
    while (auto e = q.pop()) {
      ++popped;
      if (e->kind == EventKind::kIterationEnd && e->replica == r) {
        seen = true;
        continue;
      }
      EXPECT_EQ(q.pops_before(t, at, EventKind::kIterationEnd, r, *e), seen) << "trial " << trial;
    }
    EXPECT_TRUE(seen);
    EXPECT_EQ(popped, 9);
  }
}

#ifndef NDEBUG
TEST(EventQueueDeathTest, PushingIntoThePastAsserts) {
  EXPECT_DEATH(
      {
        HeapEventQueue q;
        q.push(2.0, 0.0, EventKind::kArrival);
        q.pop();
        q.push(1.0, 0.0, EventKind::kArrival);
      },
      "past");
}
#endif

}  // namespace
}  // namespace pagesim::sim
