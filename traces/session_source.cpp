#include "traces/session_source.h"

#include <fmt/format.h>

#include <algorithm>
#include <boost/random/uniform_int_distribution.hpp>
#include <cassert>

#include "traces/seed.h"
#include "traces/trace_error.h"

namespace pagesim::traces {
namespace {

// System prompts' segment ids have the top bit set; a session's segments count from 1.
constexpr std::uint64_t kSystemPromptTag = std::uint64_t{1} << 63;
constexpr std::uint64_t kRootId = 0x6a09e667f3bcc908ULL;

constexpr std::uint64_t combine(std::uint64_t h, std::uint64_t x) { return splitmix64(h ^ splitmix64(x)); }

}  // namespace

void validate(const SessionsSpec& s, std::string_view field) {
  const std::string f(field);
  validate(s.turns, f + ".turns", 1);
  validate(s.think_time, f + ".think_time");
  if (s.system_prompts < 0 || s.system_prompts > 1'000'000)
    throw SpecError(f + ".system_prompts", "a count in [0, 1000000] (0 = no system prompt)",
                    fmt::format("{}", s.system_prompts));
  if (s.system_prompts > 0) validate(s.system_prompt_tokens, f + ".system_prompt_tokens", 1);
  if (s.block_tokens < 1 || s.block_tokens > kMaxTokens)
    throw SpecError(f + ".block_tokens", "a number of tokens per hash id >= 1", fmt::format("{}", s.block_tokens));
  if (s.max_context_tokens < 0)
    throw SpecError(f + ".max_context_tokens", "a number of tokens >= 0 (0 = no limit)",
                    fmt::format("{}", s.max_context_tokens));
}

SessionSource::SessionSource(const SessionsSpec& spec, std::unique_ptr<ArrivalProcess> starts,
                             std::unique_ptr<LengthModel> turn_lengths, std::uint64_t seed)
    : spec_(spec),
      starts_(std::move(starts)),
      turn_lengths_(std::move(turn_lengths)),
      pick_engine_(derive_seed(seed, SeedStream::kSystemPromptChoice)) {
  assert(starts_ && turn_lengths_);
  validate(spec_);
  turn_counts_ = make_length_distribution(spec_.turns, derive_seed(seed, SeedStream::kSessionTurns),
                                          "sessions.turns", 1);
  think_ = make_think_time(spec_.think_time, derive_seed(seed, SeedStream::kThinkTimes), "sessions.think_time");
  if (spec_.system_prompts > 0) {
    auto lengths = make_length_distribution(spec_.system_prompt_tokens, derive_seed(seed, SeedStream::kSystemPrompts),
                                            "sessions.system_prompt_tokens", 1);
    for (std::int64_t p = 0; p < spec_.system_prompts; ++p)
      system_prompts_.push_back({kSystemPromptTag | static_cast<std::uint64_t>(p), lengths->next()});
  }
  next_start_s_ = starts_->next();
}

std::string SessionSource::describe() const {
  return fmt::format("sessions(turns {}, think {}, {} system prompts, lengths {}, {} tokens per hash id)",
                     turn_counts_->describe(), think_->describe(), spec_.system_prompts, turn_lengths_->describe(),
                     spec_.block_tokens);
}

void SessionSource::open_session(double start_s) {
  Session s;
  s.turns_left = turn_counts_->next();
  s.next_arrival_s = start_s;
  if (!system_prompts_.empty()) {
    boost::random::uniform_int_distribution<std::size_t> pick(0, system_prompts_.size() - 1);
    const Segment& sp = system_prompts_[pick(pick_engine_)];
    s.segments.push_back(sp);
    s.context = sp.tokens;
  }
  const std::uint64_t n = next_session_++;
  pending_.emplace(start_s, n);
  sessions_.emplace(n, std::move(s));
}

void SessionSource::update_ids(Session& s, std::int64_t prompt) const {
  const std::int64_t b = spec_.block_tokens;
  s.ids.resize(s.stable);
  std::uint64_t h = s.stable == 0 ? kRootId : s.ids.back();
  std::size_t seg = s.cursor_segment;
  std::int64_t off = s.cursor_offset;
  for (std::int64_t pos = static_cast<std::int64_t>(s.stable) * b; pos < prompt;) {
    const std::int64_t end = std::min(pos + b, prompt);
    const bool full = end - pos == b;
    h = combine(h, static_cast<std::uint64_t>(end - pos));
    while (pos < end) {
      const Segment& g = s.segments[seg];
      const std::int64_t take = std::min(g.tokens - off, end - pos);
      h = combine(combine(combine(h, g.id), static_cast<std::uint64_t>(off)), static_cast<std::uint64_t>(take));
      pos += take;
      off += take;
      if (off == g.tokens) {
        ++seg;
        off = 0;
      }
    }
    s.ids.push_back(h);
    if (full) {  // its contents are final: later turns only append
      s.stable = s.ids.size();
      s.cursor_segment = seg;
      s.cursor_offset = off;
    }
  }
}

std::optional<TraceRequest> SessionSource::next() {
  for (;;) {
    // Open every session that starts no later than the earliest pending turn.
    while (pending_.empty() || next_start_s_ <= pending_.begin()->first) {
      open_session(next_start_s_);
      next_start_s_ = starts_->next();
    }
    const auto [arrival, n] = *pending_.begin();
    pending_.erase(pending_.begin());
    Session& s = sessions_.at(n);
    const bool first = s.ids.empty();
    const LengthRow turn = turn_lengths_->next();
    const std::int64_t prompt = s.context + turn.prompt_tokens;
    if (first && prompt > kMaxTokens)  // else every session would end unwritten, and next() never return
      throw SpecError("sessions.system_prompt_tokens",
                      fmt::format("a system prompt + first input of at most {} tokens", kMaxTokens),
                      fmt::format("{} + {} tokens", s.context, turn.prompt_tokens));
    if (prompt > kMaxTokens ||
        (!first && spec_.max_context_tokens > 0 && prompt + turn.output_tokens > spec_.max_context_tokens)) {
      sessions_.erase(n);  // the conversation has reached its end
      continue;
    }
    s.segments.push_back({new_segment_id(), turn.prompt_tokens});
    update_ids(s, prompt);

    TraceRequest r;
    r.id = next_id_++;
    r.arrival_s = arrival;
    r.prompt_tokens = prompt;
    r.output_tokens = turn.output_tokens;
    r.hash_ids = s.ids;

    if (turn.output_tokens > 0) s.segments.push_back({new_segment_id(), turn.output_tokens});
    s.context = prompt + turn.output_tokens;
    if (--s.turns_left > 0) {
      s.next_arrival_s = arrival + think_->next();
      pending_.emplace(s.next_arrival_s, n);
    } else {
      sessions_.erase(n);
    }
    return r;
  }
}

}  // namespace pagesim::traces
