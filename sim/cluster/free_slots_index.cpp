#include "sim/cluster/free_slots_index.h"

namespace pagesim::sim {

FreeSlotsIndex::FreeSlotsIndex(std::span<const Replica> replicas)
    : index_(replicas.size()), marked_(replicas.size(), 0), asked_(replicas.size(), 0) {
  for (std::size_t i = 0; i < replicas.size(); ++i) mark(i);
}

void FreeSlotsIndex::set_marked(std::span<const Replica> replicas) {
  for (const std::int32_t i : marked_list_) {
    const auto k = static_cast<std::size_t>(i);
    index_.set(k, -replicas[k].free_kv_slots());
    marked_[k] = 0;
  }
  marked_list_.clear();
}

}  // namespace pagesim::sim
