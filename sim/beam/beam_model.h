// BeamModel: decides which beams of a beam search survive each decode step — a seeded
// stochastic stand-in for the language model's real token scores.
//
// The engine tells the model when a group has been forked to its width (after its prompt,
// or after a recompute re-prefilled it), asks it for the parents of the next beams after
// every later decode step, and tells it when the group finishes. The next group is ordered
// as Scheduler::reshape_beams builds it: for each current beam i in index order that is
// picked m > 0 times, beam i itself, then its m - 1 forks. A model that keeps per-beam state
// keeps it in that order. Implementations: NeutralBeamModel (the default) and
// ScoreBeamModel. Deterministic given the seed; not thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "sim/beam/beam_model_settings.h"

namespace pagesim::sim {

class BeamModel {
 public:
  virtual ~BeamModel() = default;

  // Group `request` has just been forked from one sequence to `k` beams. REQUIRES: k >= 1.
  virtual void on_group_forked(std::uint64_t request, std::int32_t k) = 0;
  // After a decode step of `request`'s `k` beams: parents[j] in [0, k) is the parent of next
  // beam j (resized to k). REQUIRES: k >= 1.
  virtual void draw_parents(std::uint64_t request, std::int32_t k, std::vector<std::int32_t>& parents) = 0;
  // `request` finished: forget it (nothing happens for a request the model does not know).
  virtual void on_finished(std::uint64_t request) = 0;
};

// The model `settings` names, seeded with `seed`. REQUIRES: settings.mean_entropy_nats is
// finite and >= 0 (checked when the config is read).
std::unique_ptr<BeamModel> make_beam_model(const BeamModelSettings& settings, std::uint64_t seed);

}  // namespace pagesim::sim
