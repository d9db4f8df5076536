// SessionSource: multi-turn sessions (chat and agent traffic) as a stream of requests whose
// prompts grow turn by turn and share prefixes, with hash ids so a prefix cache sees it.
//
// Sessions start at the times of an ArrivalProcess. A session draws its number of turns
// (SessionsSpec::turns) and, when there are shared system prompts, picks one uniformly.
// Turn k's prompt is turn k-1's prompt + turn k-1's output + a new input; turn 1's prompt is
// the system prompt + the first input. New input and output lengths come from a LengthModel
// (a pair per turn). Arrival times: turn 1 at the session's start; turn k at turn k-1's
// arrival + a think time. That pause stands for the user's reading and typing *and* the
// server's answer: offline nothing knows when turn k-1 completes, so the think time is
// measured from the previous arrival (choose it longer than a turn's service time, or turns
// of one session will overlap in the simulator).
//
// Hash ids: every run of tokens (a system prompt, one input, one output) is a segment with
// its own identity; hash block i (block_tokens tokens, the last one possibly partial) gets
// the id hash(id of block i-1, the (segment, offset, length) pieces it holds). Equal ids mean
// equal prefixes: the ids are chained as Mooncake's are, so sim/engine/prefix_keys.h (with
// workload.trace.hash_block_tokens = block_tokens when replayed from a file) and
// `pagesim trace stats` read them as the sharing they describe. Sessions sharing a system
// prompt share its full blocks; turns of one session share everything before the previous
// prompt's last partial block.
//
// Requests come out in arrival order (ties: earlier session first); ids count from 0. The
// stream never ends (wrap it in LimitSource). Memory: the segments and ids of the sessions
// in progress. Deterministic for a given spec and seed. Not thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include "traces/arrival_process.h"
#include "traces/length_distribution.h"
#include "traces/length_model.h"
#include "traces/request_source.h"
#include "traces/think_time.h"

namespace pagesim::traces {

struct SessionsSpec {
  // Turns per session (a length distribution of counts), >= 1.
  LengthSpec turns = {.kind = LengthKind::kUniform, .value = 4, .lo = 1, .hi = 8};
  // Pause between one turn's arrival and the next's (includes the answer's service time).
  ThinkTimeSpec think_time;
  // Distinct system prompts shared across sessions (each session picks one uniformly);
  // 0 = none, prompts start with the first input. More prompts = less sharing.
  std::int64_t system_prompts = 0;
  // Length of each system prompt (tokens, >= 1), drawn once per prompt.
  LengthSpec system_prompt_tokens = {.kind = LengthKind::kFixed, .value = 512};
  // Tokens per hash id, >= 1. Equal to allocator.block_size the ids match the cache's blocks
  // one to one; larger blocks share less (a block is shared only when wholly equal).
  std::int64_t block_tokens = 16;
  // A session ends before a turn whose prompt + output would exceed this (tokens; 0 = no
  // limit), as a chat ends at the model's context length. A first turn is always written.
  std::int64_t max_context_tokens = 0;
};

// Throws SpecError naming `field`.<member> (sessions.turns.lo, sessions.block_tokens, ...).
void validate(const SessionsSpec& spec, std::string_view field = "sessions");

class SessionSource final : public RequestSource {
 public:
  // `starts`: session start times; `turn_lengths`: (new input, output) per turn. Every other
  // draw derives from `seed` (seed.h). Throws SpecError (validate()).
  // REQUIRES: starts, turn_lengths non-null.
  SessionSource(const SessionsSpec& spec, std::unique_ptr<ArrivalProcess> starts,
                std::unique_ptr<LengthModel> turn_lengths, std::uint64_t seed);

  // Never nullopt. Throws SpecError (sessions.system_prompt_tokens) if a first turn's prompt
  // would exceed kMaxTokens.
  std::optional<TraceRequest> next() override;
  std::string describe() const override;
  std::int64_t hash_block_tokens() const override { return spec_.block_tokens; }

 private:
  struct Segment {
    std::uint64_t id = 0;     // identity of these tokens' contents
    std::int64_t tokens = 0;  // >= 1
  };
  struct Session {
    std::int64_t turns_left = 0;   // turns still to write, the next included
    double next_arrival_s = 0.0;   // the next turn's arrival
    std::int64_t context = 0;      // tokens so far: prompt + output of the last turn written
    std::vector<Segment> segments;  // the context's contents, in order; lengths sum to context
    // Ids of the hash blocks written so far; the first `stable` are full blocks whose
    // contents can no longer change. Block `stable` starts in segments[cursor_segment] at
    // offset cursor_offset.
    std::vector<std::uint64_t> ids;
    std::size_t stable = 0;
    std::size_t cursor_segment = 0;
    std::int64_t cursor_offset = 0;
  };

  void open_session(double start_s);
  // Extends s.ids to cover `prompt` tokens (s.segments must hold at least that many).
  void update_ids(Session& s, std::int64_t prompt) const;
  std::uint64_t new_segment_id() { return next_segment_id_++; }

  SessionsSpec spec_;
  std::unique_ptr<ArrivalProcess> starts_;
  std::unique_ptr<LengthModel> turn_lengths_;
  std::unique_ptr<LengthDistribution> turn_counts_;
  std::unique_ptr<ThinkTime> think_;
  std::mt19937_64 pick_engine_;  // which system prompt a session uses
  std::vector<Segment> system_prompts_;
  double next_start_s_;
  std::uint64_t next_session_ = 0;
  std::uint64_t next_segment_id_ = 1;
  std::uint64_t next_id_ = 0;
  std::map<std::uint64_t, Session> sessions_;  // in progress, by session number
  std::set<std::pair<double, std::uint64_t>> pending_;  // (next arrival, session number)
};

}  // namespace pagesim::traces
