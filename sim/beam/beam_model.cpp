#include "sim/beam/beam_model.h"

#include "sim/beam/neutral_beam_model.h"
#include "sim/beam/score_beam_model.h"

namespace pagesim::sim {

std::unique_ptr<BeamModel> make_beam_model(const BeamModelSettings& settings, std::uint64_t seed) {
  if (settings.model == BeamModelKind::kScores)
    return std::make_unique<ScoreBeamModel>(settings.mean_entropy_nats, seed);
  return std::make_unique<NeutralBeamModel>(seed);
}

}  // namespace pagesim::sim
