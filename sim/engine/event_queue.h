// EventQueue: the simulation's future events, ordered by (time, insertion number).
//
// Ties resolve by insertion order, so a run is reproducible bit for bit. A cluster's
// replicas share one queue: an iteration end carries the replica it belongs to. Popping an event
// earlier than the last one popped is a broken contract (time never goes backwards) and
// asserts. The queue is an interface so that other orderings (calendar queues, ...) can be
// dropped in; BinaryHeapEventQueue is the default. Not thread-safe; owned by one Simulation.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <vector>

namespace pagesim::sim {

// kTransferEnd: a request's KV has reached its decode replica (disaggregated prefill/decode).
enum class EventKind : std::uint8_t { kArrival, kIterationEnd, kTransferEnd };

struct Event {
  double time = 0;
  std::uint64_t order = 0;  // insertion number, set by the queue
  EventKind kind = EventKind::kArrival;
  std::int32_t replica = 0;  // kIterationEnd: whose iteration ended
  std::uint64_t request = 0;  // kTransferEnd: whose KV arrived
};

class EventQueue {
 public:
  virtual ~EventQueue() = default;
  // REQUIRES: time >= now() (events cannot be scheduled in the past).
  virtual void push(double time, EventKind kind, std::int32_t replica = 0, std::uint64_t request = 0) = 0;
  // The earliest event, removed; nullopt when empty. Advances now().
  virtual std::optional<Event> pop() = 0;
  virtual bool empty() const = 0;
  virtual double now() const = 0;
  // The earliest event's time, +infinity when empty.
  virtual double next_time() const = 0;
};

class BinaryHeapEventQueue final : public EventQueue {
 public:
  void push(double time, EventKind kind, std::int32_t replica = 0, std::uint64_t request = 0) override;
  std::optional<Event> pop() override;
  bool empty() const override { return heap_.size() == (popped_root_ ? 1 : 0); }
  double now() const override { return now_; }
  double next_time() const override;

 private:
  // a pops before b.
  static bool earlier(const Event& a, const Event& b) {
    return a.time < b.time || (a.time == b.time && a.order < b.order);
  }
  // A binary min-heap by `earlier` (heap_[0] first), sifted by moving a hole: one copy per
  // level, and the smaller child picked without a branch (the times compared are those of
  // different replicas' iterations, whose order a predictor cannot guess).
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
  double now_ = 0;
};

}  // namespace pagesim::sim
