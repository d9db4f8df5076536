// EventQueue: the simulation's future events, ordered by time, ties resolved by a TieOrder.
//
// Ties resolve deterministically, so a run is reproducible bit for bit. A cluster's
// replicas share one queue: an iteration end carries the replica it belongs to. Popping an event
// earlier than the last one popped is a broken contract (time never goes backwards) and
// asserts. The queue is an interface so that other orderings (calendar queues, ...) can be
// dropped in; HeapEventQueue is the default. Not thread-safe; owned by one Simulation.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <vector>

namespace pagesim::sim {

// kTransferEnd: a request's KV has reached its decode replica (disaggregated prefill/decode).
enum class EventKind : std::uint8_t { kArrival, kIterationEnd, kTransferEnd };

// How events at one instant are ordered (EventQueue::set_tie_order).
//   kInsertion  in insertion order (the order they were pushed in);
//   kCanonical  by when each was scheduled (Event::scheduled_s: an iteration end's is its
//               iteration's start), then arrivals, KV transfer ends (in insertion order
//               between them) and iteration ends by replica index. What it depends on is
//               each event's own times, never when the engine happened to push it, so a
//               replica's iterations may be computed ahead of other replicas' earlier events
//               (a cluster's decode runs, docs/engine.md). Where pushes follow the clock (an
//               event is pushed at its scheduled_s), it differs from kInsertion only for
//               events alike in both times.
enum class TieOrder : std::uint8_t { kInsertion, kCanonical };

struct Event {
  double time = 0;
  double scheduled_s = 0;  // kCanonical: when the event was scheduled; kInsertion: 0
  // Set by the queue: kInsertion, the insertion number; kCanonical, the kind's rank (high
  // byte) and then the insertion number (arrivals, transfer ends) or the replica.
  std::uint64_t order = 0;
  EventKind kind = EventKind::kArrival;
  std::int32_t replica = 0;  // kIterationEnd: whose iteration ended
  std::uint64_t request = 0;  // kTransferEnd: whose KV arrived
};

class EventQueue {
 public:
  virtual ~EventQueue() = default;
  // REQUIRES: empty() (set before the first push). Default: kInsertion.
  virtual void set_tie_order(TieOrder order) = 0;
  // An event at `time`, scheduled at `scheduled_s` (read under kCanonical only). REQUIRES:
  // time >= now() (events cannot be scheduled in the past); under kCanonical at most one
  // iteration end per replica queued at once.
  virtual void push(double time, double scheduled_s, EventKind kind, std::int32_t replica = 0,
                    std::uint64_t request = 0) = 0;
  // The earliest event, removed; nullopt when empty. Advances now().
  virtual std::optional<Event> pop() = 0;
  virtual bool empty() const = 0;
  virtual double now() const = 0;
  // The earliest event's time, +infinity when empty.
  virtual double next_time() const = 0;
  // The event the next pop() returns, left in place; null when empty. (The engine reads it
  // to fetch that event's replica into the cache while it handles the present one.)
  virtual const Event* peek() const = 0;
  // Whether an event pushed now as push(time, scheduled_s, kind, replica) would pop before
  // `other`, an event popped from this queue. REQUIRES: kCanonical (an event's place then
  // depends on its own fields alone, never on when it is pushed), kind != kTransferEnd.
  virtual bool pops_before(double time, double scheduled_s, EventKind kind, std::int32_t replica,
                           const Event& other) const = 0;
};

class HeapEventQueue final : public EventQueue {
 public:
  void set_tie_order(TieOrder order) override;
  void push(double time, double scheduled_s, EventKind kind, std::int32_t replica = 0,
            std::uint64_t request = 0) override;
  std::optional<Event> pop() override;
  bool empty() const override { return heap_.size() == (popped_root_ ? 1 : 0); }
  double now() const override { return now_; }
  double next_time() const override;
  const Event* peek() const override;
  bool pops_before(double time, double scheduled_s, EventKind kind, std::int32_t replica,
                   const Event& other) const override;

 private:
  // a pops before b.
  static bool earlier(const Event& a, const Event& b) {
    if (a.time != b.time) return a.time < b.time;
    return a.scheduled_s < b.scheduled_s || (a.scheduled_s == b.scheduled_s && a.order < b.order);
  }
  // A 4-ary min-heap by `earlier` (heap_[0] first; heap_[i]'s children are heap_[4i + 1 ..
  // 4i + 4]), sifted by moving a hole: one copy per level, and the earliest child picked
  // without a branch (the times compared are those of different replicas' iterations, whose
  // order a predictor cannot guess). Four children rather than two halve the levels a sift
  // crosses: a fleet's queue holds an iteration end per replica, and its deep levels are
  // cache misses. `earlier` is a total order (Event::order is distinct), so the events pop in
  // the same order whatever the heap's shape.
  static constexpr std::size_t kArity = 4;
  std::vector<Event> heap_;
  // heap_[0] was popped and is still in place: the next push takes its slot and sifts down
  // once (an iteration end popped, its successor pushed: the common step) instead of the pop
  // sifting the last event down and the push sifting up; a pop first removes it.
  bool popped_root_ = false;
  // Removes heap_[0]: the last event takes its place and sifts down.
  void remove_root();
  // Puts e at heap_[hole] and sifts it down.
  void sift_down(std::size_t hole, const Event& e);
  std::uint64_t next_order_ = 0;
  TieOrder tie_order_ = TieOrder::kInsertion;
  double now_ = 0;
};

}  // namespace pagesim::sim
