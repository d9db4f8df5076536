#include "traces/inference_perf_source.h"

#include <fmt/format.h>

#include <algorithm>
#include <boost/random/exponential_distribution.hpp>
#include <boost/random/normal_distribution.hpp>
#include <boost/random/poisson_distribution.hpp>
#include <boost/random/uniform_int_distribution.hpp>
#include <cmath>
#include <string>

#include "traces/seed.h"
#include "traces/trace_error.h"
#include "traces/trace_request.h"

namespace pagesim::traces {
namespace {

constexpr std::uint64_t kSystemTag = std::uint64_t{1} << 63;  // ids of system-prompt blocks
constexpr std::uint64_t kRootId = 0x243f6a8885a308d3ULL;

constexpr std::uint64_t combine(std::uint64_t h, std::uint64_t x) { return splitmix64(h ^ splitmix64(x)); }

void validate_distribution(const InferencePerfDistribution& d, const std::string& f, std::int64_t min_length) {
  // utils/distribution.py:36-43 refuses the same; lengths below min_length are ours.
  if (d.min < min_length || d.min > kMaxTokens)
    throw SpecError(f + ".min", fmt::format("a length in [{}, {}] tokens", min_length, kMaxTokens),
                    fmt::format("{}", d.min));
  if (d.max < d.min || d.max > kMaxTokens)
    throw SpecError(f + ".max", fmt::format("a length >= min = {} and <= {} tokens", d.min, kMaxTokens),
                    fmt::format("{}", d.max));
  if (!(d.mean >= static_cast<double>(d.min) && d.mean <= static_cast<double>(d.max)))
    throw SpecError(f + ".mean", fmt::format("a mean in [min, max] = [{}, {}]", d.min, d.max), fmt::format("{}", d.mean));
  if (!(d.std_dev >= 0 && std::isfinite(d.std_dev)))
    throw SpecError(f + ".std_dev", "a finite standard deviation >= 0", fmt::format("{}", d.std_dev));
}

// generate_distribution (utils/distribution.py:49-59): normal draws clipped to [min, max],
// rounded half to even (np.round), clipped again. `count` draws from `engine`.
std::vector<std::int64_t> draw_lengths(const InferencePerfDistribution& d, std::int64_t count,
                                       std::mt19937_64& engine) {
  std::vector<std::int64_t> out;
  out.reserve(static_cast<std::size_t>(count));
  const double lo = static_cast<double>(d.min), hi = static_cast<double>(d.max);
  for (std::int64_t i = 0; i < count; ++i) {
    double x = d.mean;
    if (d.std_dev > 0) x = boost::random::normal_distribution<double>(d.mean, d.std_dev)(engine);
    x = std::nearbyint(std::clamp(x, lo, hi));  // the default rounding mode: half to even
    out.push_back(std::clamp(static_cast<std::int64_t>(x), d.min, d.max));
  }
  return out;
}

// `count` send times after `origin_s`: exponential intervals scaled to sum to `span_s`
// (ConstantLoadTimer, load_timer.py:49-65); the last one is origin_s + span_s.
void constant_times(std::uint64_t count, double rate, double origin_s, double span_s, std::mt19937_64& engine,
                    std::vector<double>& out) {
  boost::random::exponential_distribution<double> gap(rate);
  std::vector<double> partial(count);
  double total = 0;
  for (std::uint64_t i = 0; i < count; ++i) partial[i] = total += gap(engine);
  for (std::uint64_t i = 0; i < count; ++i)
    out.push_back(origin_s + (total > 0 ? span_s * (partial[i] / total) : span_s));
}

}  // namespace

std::string_view to_string(InferencePerfLoad load) {
  for (const auto& [v, name] : kInferencePerfLoadNames)
    if (v == load) return name;
  return "?";
}

void validate(const InferencePerfSpec& spec, std::string_view field) {
  const std::string f(field);
  const SharedPrefixSpec& s = spec.shared_prefix;
  const std::string sp = f + ".shared_prefix";
  if (s.enable_multi_turn_chat)
    throw SpecError(sp + ".enable_multi_turn_chat",
                    "false (multi-turn chat grows each user's prompt with the answers, "
                    "shared_prefix_datagen.py:101-109; not modelled: the measured runs sent single turns)",
                    "true");
  if (s.num_groups < 1) throw SpecError(sp + ".num_groups", "a count >= 1", fmt::format("{}", s.num_groups));
  if (s.num_prompts_per_group < 1)
    throw SpecError(sp + ".num_prompts_per_group", "a count >= 1", fmt::format("{}", s.num_prompts_per_group));
  if (s.num_groups > kMaxInferencePerfPrompts / s.num_prompts_per_group)
    throw SpecError(sp + ".num_prompts_per_group",
                    fmt::format("num_groups * num_prompts_per_group <= {} prompts", kMaxInferencePerfPrompts),
                    fmt::format("{} * {}", s.num_groups, s.num_prompts_per_group));
  if (s.system_prompt_len < 0 || s.system_prompt_len > kMaxTokens)
    throw SpecError(sp + ".system_prompt_len", fmt::format("a length in [0, {}] tokens", kMaxTokens),
                    fmt::format("{}", s.system_prompt_len));
  if (s.question_distribution.given) validate_distribution(s.question_distribution, sp + ".question_distribution", 0);
  else if (s.question_len < 0 || s.question_len > kMaxTokens)
    throw SpecError(sp + ".question_len", fmt::format("a length in [0, {}] tokens", kMaxTokens),
                    fmt::format("{}", s.question_len));
  // max_tokens 0 would make the client send its own default instead (apis/completion.py:40-41).
  if (s.output_distribution.given) validate_distribution(s.output_distribution, sp + ".output_distribution", 1);
  else if (s.output_len < 1 || s.output_len > kMaxTokens)
    throw SpecError(sp + ".output_len",
                    fmt::format("a length in [1, {}] tokens (0 makes inference-perf send its default max_tokens)",
                                kMaxTokens),
                    fmt::format("{}", s.output_len));
  if (spec.prompt_token_overhead < 0 || spec.prompt_token_overhead > kMaxTokens)
    throw SpecError(f + ".prompt_token_overhead", fmt::format("a number of tokens in [0, {}]", kMaxTokens),
                    fmt::format("{}", spec.prompt_token_overhead));
  const std::int64_t question_max = s.question_distribution.given ? s.question_distribution.max : s.question_len;
  const std::int64_t question_min = s.question_distribution.given ? s.question_distribution.min : s.question_len;
  if (s.system_prompt_len + question_max + spec.prompt_token_overhead > kMaxTokens)
    throw SpecError(sp + ".system_prompt_len", fmt::format("prompts of at most {} tokens", kMaxTokens),
                    fmt::format("system {} + question {} + overhead {}", s.system_prompt_len, question_max,
                                spec.prompt_token_overhead));
  if (s.system_prompt_len + question_min + spec.prompt_token_overhead < 1)
    throw SpecError(sp + ".system_prompt_len", "prompts of at least 1 token (system + question + overhead)",
                    "0 tokens");
  if (spec.hash_block_tokens < 1 || spec.hash_block_tokens > kMaxTokens)
    throw SpecError(f + ".hash_block_tokens", "a number of tokens per hash id >= 1",
                    fmt::format("{}", spec.hash_block_tokens));
  if (!(spec.stage_gap_s >= 0 && std::isfinite(spec.stage_gap_s)))
    throw SpecError(f + ".stage_gap_s", "a finite number of seconds >= 0", fmt::format("{}", spec.stage_gap_s));
  if (spec.stages.empty())
    throw SpecError(f + ".stages", "a list of at least one stage ({rate: requests/s, duration_s: seconds})",
                    "no stage");
  for (std::size_t i = 0; i < spec.stages.size(); ++i) {
    const InferencePerfStage& st = spec.stages[i];
    const std::string at = fmt::format("{}.stages[{}]", f, i);
    if (!(st.rate > 0 && std::isfinite(st.rate)))
      throw SpecError(at + ".rate", "a finite rate > 0 requests/s", fmt::format("{}", st.rate));
    if (!(st.duration_s > 0 && std::isfinite(st.duration_s)))
      throw SpecError(at + ".duration_s", "a finite duration > 0 seconds", fmt::format("{}", st.duration_s));
    const double n = st.rate * st.duration_s;
    if (!(n >= 1) || n >= static_cast<double>(kMaxInferencePerfStageRequests) + 1)
      throw SpecError(at + ".rate",
                      fmt::format("rate * duration_s in [1, {}] (int(rate * duration) requests, "
                                  "load_generator.py:313)",
                                  kMaxInferencePerfStageRequests),
                      fmt::format("{} * {} = {}", st.rate, st.duration_s, n));
  }
}

std::vector<InferencePerfStagePlan> inference_perf_stages(const InferencePerfSpec& spec) {
  validate(spec);
  std::vector<InferencePerfStagePlan> plan;
  std::uint64_t first = 0;
  for (const InferencePerfStage& st : spec.stages) {
    // Python's int() truncates toward zero; the product is >= 1 (validate()).
    const auto count = static_cast<std::uint64_t>(st.rate * st.duration_s);
    plan.push_back({st.rate, st.duration_s, first, count});
    first += count;
  }
  return plan;
}

InferencePerfSource::InferencePerfSource(const InferencePerfSpec& spec, std::uint64_t seed)
    : spec_(spec), plan_(inference_perf_stages(spec)), arrival_engine_(derive_seed(seed, SeedStream::kArrivals)) {
  const SharedPrefixSpec& s = spec_.shared_prefix;
  const InferencePerfDistribution fixed_question{true, s.question_len, s.question_len,
                                                 static_cast<double>(s.question_len), 0};
  const InferencePerfDistribution fixed_output{true, s.output_len, s.output_len, static_cast<double>(s.output_len), 0};
  const InferencePerfDistribution& qd = s.question_distribution.given ? s.question_distribution : fixed_question;
  const InferencePerfDistribution& od = s.output_distribution.given ? s.output_distribution : fixed_output;
  std::mt19937_64 question_engine(derive_seed(seed, SeedStream::kPromptLengths));
  std::mt19937_64 output_engine(derive_seed(seed, SeedStream::kOutputLengths));
  const std::int64_t b = spec_.hash_block_tokens;
  // Groups in order, each drawing its questions' then its outputs' lengths
  // (shared_prefix_datagen.py:58-75), prompts in (group, prompt) order (:141-177).
  for (std::int64_t g = 0; g < s.num_groups; ++g) {
    const std::vector<std::int64_t> questions = draw_lengths(qd, s.num_prompts_per_group, question_engine);
    const std::vector<std::int64_t> outputs = draw_lengths(od, s.num_prompts_per_group, output_engine);
    for (std::int64_t p = 0; p < s.num_prompts_per_group; ++p) {
      Prompt prompt;
      prompt.group = g;
      prompt.prompt_tokens = s.system_prompt_len + questions[static_cast<std::size_t>(p)] + spec_.prompt_token_overhead;
      prompt.output_tokens = outputs[static_cast<std::size_t>(p)];
      const auto uid = static_cast<std::uint64_t>(g * s.num_prompts_per_group + p);
      std::uint64_t h = kRootId;
      for (std::int64_t start = 0; start < prompt.prompt_tokens; start += b) {
        const std::int64_t end = std::min(start + b, prompt.prompt_tokens);
        const bool system = end <= s.system_prompt_len;
        h = combine(combine(combine(h, system ? kSystemTag | static_cast<std::uint64_t>(g) : uid),
                            static_cast<std::uint64_t>(start)),
                    static_cast<std::uint64_t>(end - start));
        prompt.hash_ids.push_back(h);
      }
      pool_.push_back(std::move(prompt));
    }
  }
  // One shuffle of the pool (shared_prefix_datagen.py:184-187), Fisher-Yates.
  std::mt19937_64 shuffle_engine(derive_seed(seed, SeedStream::kShuffle));
  for (std::size_t i = pool_.size(); i > 1; --i) {
    boost::random::uniform_int_distribution<std::size_t> pick(0, i - 1);
    std::swap(pool_[i - 1], pool_[pick(shuffle_engine)]);
  }
  start_stage(0, 0.0);
}

void InferencePerfSource::start_stage(std::size_t k, double origin_s) {
  stage_ = k;
  sent_in_stage_ = 0;
  sends_.clear();
  if (k >= plan_.size()) return;
  const InferencePerfStagePlan& st = plan_[k];
  sends_.reserve(st.count);
  if (spec_.load_type == InferencePerfLoad::kConstant) {
    constant_times(st.count, st.rate, origin_s, st.duration_s, arrival_engine_, sends_);
    return;
  }
  // PoissonLoadTimer: second w holds Poisson(rate) sends spread as a constant timer of that
  // rate over the second; the stage takes its first st.count.
  for (std::uint64_t w = 0; sends_.size() < st.count; ++w) {
    const auto c = boost::random::poisson_distribution<std::uint64_t, double>(st.rate)(arrival_engine_);
    if (c == 0) continue;
    constant_times(c, static_cast<double>(c), origin_s + static_cast<double>(w), 1.0, arrival_engine_, sends_);
  }
  sends_.resize(st.count);
}

std::optional<TraceRequest> InferencePerfSource::next() {
  while (stage_ < plan_.size() && sent_in_stage_ == plan_[stage_].count)
    start_stage(stage_ + 1, sends_.back() + spec_.stage_gap_s);
  if (stage_ >= plan_.size()) return std::nullopt;
  // Every stage restarts the data index at 0 (load_generator.py:318).
  const Prompt& p = pool_[sent_in_stage_ % pool_.size()];
  TraceRequest r;
  r.id = next_id_++;
  r.arrival_s = sends_[sent_in_stage_++];
  r.prompt_tokens = p.prompt_tokens;
  r.output_tokens = p.output_tokens;
  r.hash_ids = p.hash_ids;
  return r;
}

std::string InferencePerfSource::describe() const {
  const SharedPrefixSpec& s = spec_.shared_prefix;
  std::string stages;
  for (const InferencePerfStagePlan& st : plan_)
    stages += fmt::format("{}{} req/s x {} s", stages.empty() ? "" : ", ", st.rate, st.duration_s);
  return fmt::format("inference-perf shared_prefix ({} groups x {} prompts, system {} + question {} (+{}) tokens, "
                     "output {}), {} load stages [{}], gap {} s, {} tokens per hash id",
                     s.num_groups, s.num_prompts_per_group, s.system_prompt_len,
                     s.question_distribution.given ? std::string("distribution") : std::to_string(s.question_len),
                     spec_.prompt_token_overhead,
                     s.output_distribution.given ? std::string("distribution") : std::to_string(s.output_len),
                     to_string(spec_.load_type), stages, spec_.stage_gap_s, spec_.hash_block_tokens);
}

}  // namespace pagesim::traces
