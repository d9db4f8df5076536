#include "sim/engine/event_queue.h"

#include <cassert>

namespace pagesim::sim {

void BinaryHeapEventQueue::push(double time, EventKind kind, std::int32_t replica, std::uint64_t request) {
  assert(time >= now_ && "events cannot be scheduled in the past");
  const Event e{time, next_order_++, kind, replica, request};
  std::size_t hole = heap_.size();
  heap_.emplace_back();
  while (hole > 0) {
    const std::size_t parent = (hole - 1) / 2;
    if (!earlier(e, heap_[parent])) break;
    heap_[hole] = heap_[parent];
    hole = parent;
  }
  heap_[hole] = e;
}

std::optional<Event> BinaryHeapEventQueue::pop() {
  if (heap_.empty()) return std::nullopt;
  const Event top = heap_.front();
  const Event last = heap_.back();
  heap_.pop_back();
  const std::size_t n = heap_.size();
  if (n > 0) {
    std::size_t hole = 0;
    for (std::size_t child = 1; child < n; child = 2 * hole + 1) {
      // The earlier child (the right one when both tie: orders are distinct, so never).
      if (child + 1 < n) child += static_cast<std::size_t>(earlier(heap_[child + 1], heap_[child]));
      if (!earlier(heap_[child], last)) break;
      heap_[hole] = heap_[child];
      hole = child;
    }
    heap_[hole] = last;
  }
  assert(top.time >= now_ && "time went backwards");
  now_ = top.time;
  return top;
}

}  // namespace pagesim::sim
