#include "sim/engine/event_queue.h"

#include <algorithm>
#include <cassert>

namespace pagesim::sim {

void HeapEventQueue::set_tie_order(TieOrder order) {
  assert(empty());
  tie_order_ = order;
}

namespace {

// Event::order's kind ranks under kCanonical: arrivals 0, transfer ends 1, iteration ends 2.
constexpr std::uint64_t kRankShift = 56;

std::uint64_t iteration_end_order(std::int32_t replica) {
  return (std::uint64_t{2} << kRankShift) | static_cast<std::uint32_t>(replica);
}

}  // namespace

void HeapEventQueue::push(double time, double scheduled_s, EventKind kind, std::int32_t replica,
                          std::uint64_t request) {
  assert(time >= now_ && "events cannot be scheduled in the past");
  Event e{time, 0, next_order_++, kind, replica, request};
  if (tie_order_ == TieOrder::kCanonical) {
    e.scheduled_s = scheduled_s;
    switch (kind) {
      case EventKind::kArrival: break;
      case EventKind::kTransferEnd: e.order |= std::uint64_t{1} << kRankShift; break;
      case EventKind::kIterationEnd: e.order = iteration_end_order(replica); break;
    }
  }
  if (popped_root_) {
    popped_root_ = false;
    sift_down(0, e);
    return;
  }
  std::size_t hole = heap_.size();
  heap_.emplace_back();
  while (hole > 0) {
    const std::size_t parent = (hole - 1) / kArity;
    if (!earlier(e, heap_[parent])) break;
    heap_[hole] = heap_[parent];
    hole = parent;
  }
  heap_[hole] = e;
}

void HeapEventQueue::sift_down(std::size_t hole, const Event& e) {
  const std::size_t n = heap_.size();
  for (std::size_t first = kArity * hole + 1; first < n; first = kArity * hole + 1) {
    // The earliest child (orders are distinct: never a tie).
    std::size_t child = first;
    const std::size_t end = std::min(first + kArity, n);
    for (std::size_t c = first + 1; c < end; ++c) child = earlier(heap_[c], heap_[child]) ? c : child;
    if (!earlier(heap_[child], e)) break;
    heap_[hole] = heap_[child];
    hole = child;
  }
  heap_[hole] = e;
}

void HeapEventQueue::remove_root() {
  const Event last = heap_.back();
  heap_.pop_back();
  if (!heap_.empty()) sift_down(0, last);
}

std::optional<Event> HeapEventQueue::pop() {
  if (popped_root_) {
    popped_root_ = false;
    remove_root();
  }
  if (heap_.empty()) return std::nullopt;
  const Event top = heap_.front();
  popped_root_ = true;
  assert(top.time >= now_ && "time went backwards");
  now_ = top.time;
  return top;
}

double HeapEventQueue::next_time() const {
  if (!popped_root_) return heap_.empty() ? std::numeric_limits<double>::infinity() : heap_.front().time;
  // The root is spent: the earliest of the rest is one of its children.
  double t = std::numeric_limits<double>::infinity();
  for (std::size_t c = 1; c < std::min(kArity + 1, heap_.size()); ++c) t = std::min(t, heap_[c].time);
  return t;
}

const Event* HeapEventQueue::peek() const {
  if (!popped_root_) return heap_.empty() ? nullptr : &heap_.front();
  const Event* next = nullptr;  // the earliest child of the spent root
  for (std::size_t c = 1; c < std::min(kArity + 1, heap_.size()); ++c)
    if (!next || earlier(heap_[c], *next)) next = &heap_[c];
  return next;
}

bool HeapEventQueue::pops_before(double time, double scheduled_s, EventKind kind, std::int32_t replica,
                                 const Event& other) const {
  assert(tie_order_ == TieOrder::kCanonical && kind != EventKind::kTransferEnd);
  // An arrival's order is its insertion number: the next one's, were it pushed now.
  const std::uint64_t order = kind == EventKind::kIterationEnd ? iteration_end_order(replica) : next_order_;
  return earlier(Event{time, scheduled_s, order, kind, replica, 0}, other);
}

}  // namespace pagesim::sim
