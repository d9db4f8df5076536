// BeamSelector: one decode step of beam search as vLLM's paper artifact does it
// (cacheflow's sampler, _sample_from_generation_tokens with use_beam_search).
//
// The group has k beams with cumulative log-probabilities s_i. Every (beam i, token t) is a
// candidate scored s_i + ln P_i(t); the k best candidates overall are chosen, so only each
// beam's k likeliest tokens can matter and only those are given. A beam among the chosen
// continues as itself with its first chosen candidate; its other chosen candidates are
// outstanding, in the order chosen. Each beam not chosen is discarded and, taking the beams
// in index order, takes the candidate popped from the BACK of the outstanding list: it
// becomes a fork of that candidate's beam. New score = the candidate's score.
// Ties, which have probability zero unless log-probabilities are -inf (a certain model), go
// to the lower token rank, then the lower beam index: a beam's own likeliest token comes
// before another beam's impossible one, so a certain model never moves a hypothesis.
// Owns scratch space reused across steps (no allocation once warm); not thread-safe.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace pagesim::sim {

class BeamSelector {
 public:
  // Runs one step. scores[i] = s_i; logprobs[i*k + r] = beam i's log-probability of its
  // (r+1)-th likeliest token. REQUIRES: k = scores.size() >= 1, logprobs.size() == k*k, each
  // row non-increasing, no NaN and no +inf anywhere.
  void select(std::span<const double> scores, std::span<const double> logprobs);

  // The artifact's view, per beam slot i: the beam it continues (i itself, or the beam it now
  // forks) and its new score. Valid until the next select().
  std::span<const std::int32_t> slot_parents() const { return slot_parent_; }
  std::span<const double> slot_scores() const { return slot_score_; }

  // The same group in Scheduler::reshape_beams order: parents non-decreasing; each surviving
  // beam i first (its own continuation), then its forks in slot order. Pass parents() to
  // reshape_beams; scores()[j] is then next beam j's score. Valid until the next select().
  std::span<const std::int32_t> parents() const { return parents_; }
  std::span<const double> scores() const { return scores_; }

 private:
  struct Candidate {
    double score;
    std::int32_t beam;
    std::int32_t rank;  // 0 = the beam's likeliest token
  };

  std::vector<Candidate> candidates_, outstanding_;
  std::vector<std::int32_t> slot_parent_, parents_;
  std::vector<double> slot_score_, scores_;
};

}  // namespace pagesim::sim
