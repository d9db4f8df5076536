// BeamModelSettings: which model decides the surviving beams of a beam search, and its one
// parameter. Plain values with defaults; the names table is what configs write.
#pragma once

#include <array>
#include <string_view>
#include <utility>

namespace pagesim::sim {

enum class BeamModelKind {
  kNeutral,  // every next beam picks its parent uniformly (neutral_beam_model.h)
  kScores,   // vLLM's beam selection on stand-in log-probabilities (score_beam_model.h)
};

inline constexpr std::array<std::pair<BeamModelKind, std::string_view>, 2> kBeamModelNames = {{
    {BeamModelKind::kNeutral, "neutral"},
    {BeamModelKind::kScores, "scores"},
}};

struct BeamModelSettings {
  BeamModelKind model = BeamModelKind::kNeutral;
  // kScores: mean next-token entropy of the stand-in language model, nats; finite, >= 0.
  // Higher = flatter next-token distributions = beams collapse onto one hypothesis sooner
  // (more sharing); 0 = every token certain, beams never switch (prompt-only sharing). The
  // limits are in score_beam_model.h.
  double mean_entropy_nats = 1.0;
};

}  // namespace pagesim::sim
