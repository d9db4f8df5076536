#include "sim/engine/event_queue.h"

#include <cassert>

namespace pagesim::sim {

void BinaryHeapEventQueue::push(double time, EventKind kind, std::int32_t replica, std::uint64_t request) {
  assert(time >= now_ && "events cannot be scheduled in the past");
  heap_.push(Event{time, next_order_++, kind, replica, request});
}

std::optional<Event> BinaryHeapEventQueue::pop() {
  if (heap_.empty()) return std::nullopt;
  Event e = heap_.top();
  heap_.pop();
  assert(e.time >= now_ && "time went backwards");
  now_ = e.time;
  return e;
}

}  // namespace pagesim::sim
