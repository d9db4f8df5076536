#include "sim/beam/beam_selection.h"

#include <algorithm>
#include <cassert>

namespace pagesim::sim {

void BeamSelector::select(std::span<const double> scores, std::span<const double> logprobs) {
  const std::size_t k = scores.size();
  assert(k >= 1 && logprobs.size() == k * k);
  candidates_.clear();
  for (std::size_t i = 0; i < k; ++i)
    for (std::size_t r = 0; r < k; ++r)
      candidates_.push_back({scores[i] + logprobs[i * k + r], static_cast<std::int32_t>(i), static_cast<std::int32_t>(r)});
  // A strict total order (ranks and beams are distinct pairs), so the top k is unique.
  const auto better = [](const Candidate& a, const Candidate& b) {
    if (a.score != b.score) return a.score > b.score;
    if (a.rank != b.rank) return a.rank < b.rank;
    return a.beam < b.beam;
  };
  std::partial_sort(candidates_.begin(), candidates_.begin() + static_cast<std::ptrdiff_t>(k), candidates_.end(), better);

  slot_parent_.assign(k, -1);
  slot_score_.assign(k, 0.0);
  outstanding_.clear();
  for (std::size_t c = 0; c < k; ++c) {
    const Candidate& cand = candidates_[c];
    const auto b = static_cast<std::size_t>(cand.beam);
    if (slot_parent_[b] < 0) {
      slot_parent_[b] = cand.beam;
      slot_score_[b] = cand.score;
    } else {
      outstanding_.push_back(cand);
    }
  }
  for (std::size_t i = 0; i < k; ++i) {
    if (slot_parent_[i] >= 0) continue;
    assert(!outstanding_.empty());  // k chosen = survivors + outstanding; one per discarded slot
    slot_parent_[i] = outstanding_.back().beam;
    slot_score_[i] = outstanding_.back().score;
    outstanding_.pop_back();
  }
  assert(outstanding_.empty());

  parents_.clear();
  scores_.clear();
  for (std::size_t i = 0; i < k; ++i) {
    if (slot_parent_[i] != static_cast<std::int32_t>(i)) continue;  // discarded: forks another beam
    parents_.push_back(slot_parent_[i]);
    scores_.push_back(slot_score_[i]);
    for (std::size_t s = 0; s < k; ++s)
      if (s != i && slot_parent_[s] == static_cast<std::int32_t>(i)) {
        parents_.push_back(slot_parent_[s]);
        scores_.push_back(slot_score_[s]);
      }
  }
}

}  // namespace pagesim::sim
