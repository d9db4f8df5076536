// FreeSlotsIndex: the replica with the most free KV slots (Replica::free_kv_slots()) among a
// routed set, kept as the slots change instead of found by a scan of every replica at every
// arrival (issue #40: least_kv's scan was 60% of a 1,000-replica run).
//
// A LoadIndex over -free_kv_slots(), whose argmin is the lowest index among the most free
// slots, as a scan in index order finds. Its owner (the Simulation) marks an entry after
// anything that can change that replica's free slots; most_free() first sets the marked
// entries. An entry may also run ahead of its replica: a deferred decode run's repeats
// (docs/engine.md) start when something looks, and they only take slots, so an unmarked
// entry is the replica's free slots now or more. most_free() brings the best entry's replica
// up to the routing instant (its owner's `bring_up`), sets it, and looks again, until the
// best is exact: every other entry is an upper bound, so no other replica can hold more,
// and one that holds as much has a higher index. Plain value type; not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "sim/cluster/load_index.h"
#include "sim/cluster/replica.h"

namespace pagesim::sim {

class FreeSlotsIndex {
 public:
  FreeSlotsIndex() = default;
  // Entries for `replicas`, every one marked.
  explicit FreeSlotsIndex(std::span<const Replica> replicas);

  std::size_t size() const { return index_.size(); }
  // The replica at position i may have changed its free slots. REQUIRES: i < size().
  void mark(std::size_t i) {
    if (marked_[i]) return;
    marked_[i] = 1;
    marked_list_.push_back(static_cast<std::int32_t>(i));
  }

  // The position of the lowest-indexed replica with the most free slots at the routing
  // instant. bring_up(i) brings the replica at position i up to that instant and returns
  // whether it may have changed (false: its state was already that instant's); it is asked
  // at most once per replica per call. REQUIRES: replicas as given to the constructor, their
  // changes marked; size() > 0.
  template <class BringUp>
  std::int32_t most_free(std::span<const Replica> replicas, BringUp&& bring_up) {
    set_marked(replicas);
    ++route_;
    for (;;) {
      const std::int32_t i = index_.argmin();
      const auto k = static_cast<std::size_t>(i);
      if (asked_[k] == route_) return i;
      asked_[k] = route_;
      if (!bring_up(i)) return i;
      index_.set(k, -replicas[k].free_kv_slots());
    }
  }

  // For debug builds' checks: every unmarked entry equals its replica's free slots now, or,
  // where may_lag(i) (a run deferred), is more.
  template <class MayLag>
  bool entries_hold(std::span<const Replica> replicas, MayLag&& may_lag) const {
    for (std::size_t k = 0; k < replicas.size(); ++k) {
      if (marked_[k]) continue;
      const std::int64_t entry = -index_.load(k), now = replicas[k].free_kv_slots();
      if (entry < now || (entry > now && !may_lag(static_cast<std::int32_t>(k)))) return false;
    }
    return true;
  }

 private:
  void set_marked(std::span<const Replica> replicas);

  LoadIndex index_;                        // -free_kv_slots() of each replica, by position
  std::vector<char> marked_;               // per position: its entry awaits set_marked()
  std::vector<std::int32_t> marked_list_;  // those positions, each once
  std::vector<std::uint64_t> asked_;       // per position: the last most_free() that asked bring_up
  std::uint64_t route_ = 0;                // most_free() calls so far
};

}  // namespace pagesim::sim
