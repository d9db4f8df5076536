// InferencePerfSource: the requests the load generator inference-perf (kubernetes-sigs/
// inference-perf, commit fc877d3, 2026-02-12) sends with its `shared_prefix` data generator
// and `constant` or `poisson` load stages; InferencePerfSpec, its settings struct.
//
// What inference-perf does, and what this source reproduces (file:line at fc877d3):
//   Prompt pool  num_groups system prompts of system_prompt_len random tokens; per group
//                num_prompts_per_group questions; prompt = system + " " + question
//                (datagen/shared_prefix_datagen.py:141-170). Question and output lengths are
//                drawn per group from generate_distribution (utils/distribution.py:19-61:
//                normal(mean, std_dev), clipped to [min, max], rounded half to even, clipped)
//                when question_distribution / output_distribution are given, else fixed
//                (shared_prefix_datagen.py:48-75). The pool is shuffled once, prompts and
//                output lengths together (:184-187).
//   Data index   every stage takes a new get_data() generator, so its request i uses prompt
//                i % pool size (load_generator.py:318, shared_prefix_datagen.py:98,113-121),
//                with max_tokens = that prompt's output length (:99,111); ignore_eos is true
//                by default (config.py:289), so the server generates exactly max_tokens.
//   Stage timer  int(rate * duration) requests per stage (load_generator.py:313,324).
//                constant: exponential intervals normalised to sum to the duration, request i
//                at origin + interval_0 + ... + interval_i (load_timer.py:48-65).
//                poisson: each second a Poisson(rate) count c; none: the next second; else c
//                requests spread over that second as a constant timer of rate c would
//                (load_timer.py:78-97); the stage takes its int(rate * duration) first.
//   Between stages inference-perf waits until every request of the stage has finished, then
//                sleeps load.interval (default 1 s, config.py:189; load_generator.py:549-550),
//                and the next stage's timer starts 1 s after it begins (:307-308). A request
//                stream is made before it is served, so the drain cannot be known here:
//                stage k+1's timer origin is stage k's last send + stage_gap_s (set it to
//                cover the drain; the client metrics warn when a stage was still in flight).
// Differences, by necessity: inference-perf seeds none of its generators (NumPy's global and
// default_rng(), CPython's random), so its draws cannot be replayed; this source draws from
// std::mt19937_64 engines seeded from the experiment seed (seed.h) with Boost.Random. Token
// contents are not modelled, only lengths and identities: the server re-tokenizes the
// decoded text (about +4% tokens in the measured runs, sim2real/README.md), which
// prompt_token_overhead may stand in for (added to every prompt, as a unique tail). Times are
// origin + duration * (partial sum / total), so a constant stage's last send is exactly at
// origin + duration (inference-perf accumulates the scaled intervals, equal up to rounding).
// Multi-turn chat (enable_multi_turn_chat) is refused: its prompts grow with the answers.
//
// Hash ids (one per hash_block_tokens tokens, the last block possibly partial) are chained
// from the prompt's start, as SessionSource's: a block wholly inside the system prompt is
// named by (group, block), so the prompts of a group share their first
// floor(system_prompt_len / B) ids; any block holding question or overhead tokens is named by
// the prompt, so the same prompt sent again (later in a stage, or in a later stage) carries
// identical ids, and different prompts share nothing past their system prompt.
//
// Requests come out in arrival order, ids counting from 0 over all stages: stage k's are
// [first_id(k), first_id(k) + count(k)) (inference_perf_stages()). Memory: the pool and one
// stage's send times. Deterministic for a given spec and seed. Not thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "traces/request_source.h"

namespace pagesim::traces {

enum class InferencePerfLoad { kConstant, kPoisson };

inline constexpr std::array<std::pair<InferencePerfLoad, std::string_view>, 2> kInferencePerfLoadNames = {{
    {InferencePerfLoad::kConstant, "constant"},
    {InferencePerfLoad::kPoisson, "poisson"},
}};

// inference-perf's Distribution (config.py:61-65) as shared_prefix reads it; its defaults.
struct InferencePerfDistribution {
  bool given = false;      // the section is in the config (else the fixed length is used)
  std::int64_t min = 10;   // tokens, >= 0 (outputs: >= 1), <= max
  std::int64_t max = 1024;
  double mean = 512;       // in [min, max]
  double std_dev = 200;    // >= 0
};

// inference-perf's SharedPrefix (config.py:70-90), its defaults.
struct SharedPrefixSpec {
  std::int64_t num_groups = 10;             // system prompts, >= 1
  std::int64_t num_prompts_per_group = 10;  // questions per system prompt, >= 1
  std::int64_t system_prompt_len = 100;     // tokens, >= 0
  std::int64_t question_len = 50;           // tokens, >= 0 (without question_distribution)
  std::int64_t output_len = 50;             // tokens, >= 1 (without output_distribution)
  InferencePerfDistribution question_distribution;
  InferencePerfDistribution output_distribution;
  bool enable_multi_turn_chat = false;      // true is refused (see above)
};

struct InferencePerfStage {
  double rate = 1.0;         // requests per second, > 0
  double duration_s = 60.0;  // seconds, > 0; rate * duration_s >= 1
};

struct InferencePerfSpec {
  SharedPrefixSpec shared_prefix;
  InferencePerfLoad load_type = InferencePerfLoad::kConstant;
  std::vector<InferencePerfStage> stages;  // in order, at least one
  // Seconds from a stage's last send to the next stage's timer origin (its first send comes
  // one interval later), >= 0. The default is inference-perf's load.interval (1 s) + the
  // 1 s head start of a stage's timer; the time the real client waits for a stage to drain
  // comes on top, and depends on the server.
  double stage_gap_s = 2.0;
  // Tokens added to every prompt (>= 0): the server's re-tokenization of the decoded text
  // makes prompts longer than system_prompt_len + question_len (the measured runs: ~+4%).
  std::int64_t prompt_token_overhead = 0;
  // Tokens per hash id, >= 1; equal to allocator.block_size, ids and cache blocks match 1:1.
  std::int64_t hash_block_tokens = 16;
};

// At most this many prompts in the pool (each keeps its hash ids) and requests per stage
// (a stage's send times are drawn at once, as inference-perf does).
inline constexpr std::int64_t kMaxInferencePerfPrompts = 1'000'000;
inline constexpr std::int64_t kMaxInferencePerfStageRequests = 10'000'000;

// Throws SpecError naming `field`.<member> (inference_perf.stages[1].rate, ...).
void validate(const InferencePerfSpec& spec, std::string_view field = "inference_perf");

// One stage as sent: its settings and the ids of its requests.
struct InferencePerfStagePlan {
  double rate = 0;
  double duration_s = 0;
  std::uint64_t first_id = 0;  // its requests' ids are [first_id, first_id + count)
  std::uint64_t count = 0;     // int(rate * duration_s) (load_generator.py:313)
};

// The stages of `spec`, from the spec alone. Throws SpecError (validate()).
std::vector<InferencePerfStagePlan> inference_perf_stages(const InferencePerfSpec& spec);

class InferencePerfSource final : public RequestSource {
 public:
  // Every draw derives from `seed` (seed.h). Throws SpecError (validate()).
  InferencePerfSource(const InferencePerfSpec& spec, std::uint64_t seed);

  // nullopt after the last stage's last request.
  std::optional<TraceRequest> next() override;
  std::string describe() const override;
  std::int64_t hash_block_tokens() const override { return spec_.hash_block_tokens; }

  // The pool after its shuffle: prompt i of a stage's data index. Valid while the source lives.
  struct Prompt {
    std::int64_t group = 0;          // which system prompt
    std::int64_t prompt_tokens = 0;  // system + question + overhead
    std::int64_t output_tokens = 0;
    std::vector<std::uint64_t> hash_ids;
  };
  const std::vector<Prompt>& pool() const { return pool_; }

 private:
  void start_stage(std::size_t k, double origin_s);

  InferencePerfSpec spec_;
  std::vector<InferencePerfStagePlan> plan_;
  std::vector<Prompt> pool_;
  std::mt19937_64 arrival_engine_;
  std::size_t stage_ = 0;              // the stage being sent
  std::vector<double> sends_;          // its send times
  std::uint64_t sent_in_stage_ = 0;
  std::uint64_t next_id_ = 0;
};

std::string_view to_string(InferencePerfLoad load);

}  // namespace pagesim::traces
