#include "traces/trace_stats.h"

#include <fmt/format.h>

#include <algorithm>
#include <cassert>

namespace pagesim::traces {
namespace {

// Nearest-rank percentile of sorted, non-empty `v`.
std::int64_t percentile(const std::vector<std::int64_t>& v, int p) {
  const std::size_t n = v.size();
  std::size_t rank = (static_cast<std::size_t>(p) * n + 99) / 100;  // ceil(p * n / 100)
  if (rank == 0) rank = 1;
  return v[rank - 1];
}

LengthSummary summarise(std::vector<std::int64_t>& v, std::int64_t total) {
  LengthSummary s;
  s.total = total;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  s.mean = static_cast<double>(total) / static_cast<double>(v.size());
  s.min = v.front();
  s.p50 = percentile(v, 50);
  s.p90 = percentile(v, 90);
  s.p99 = percentile(v, 99);
  s.max = v.back();
  return s;
}

nlohmann::json length_json(const LengthSummary& s) {
  return {{"mean", s.mean}, {"min", s.min}, {"p50", s.p50}, {"p90", s.p90},
          {"p99", s.p99},   {"max", s.max}, {"total", s.total}};
}

}  // namespace

void StatsAccumulator::add(const TraceRequest& r) {
  if (s_.requests == 0) s_.first_arrival_s = r.arrival_s;
  assert(r.arrival_s >= s_.last_arrival_s || s_.requests == 0);
  s_.last_arrival_s = r.arrival_s;
  ++s_.requests;
  prompts_.push_back(r.prompt_tokens);
  outputs_.push_back(r.output_tokens);
  s_.prompt.total += r.prompt_tokens;
  s_.output.total += r.output_tokens;
  n_sum_ += r.n;
  beam_sum_ += r.beam_width;
  if (!r.hash_ids.empty()) ++s_.requests_with_hash_ids;
  for (const std::uint64_t id : r.hash_ids) {
    ++s_.hash_block_refs;
    if (!seen_ids_.insert(id).second) ++s_.repeated_hash_block_refs;
  }
}

TraceStats StatsAccumulator::finish() {
  TraceStats out = s_;
  out.prompt = summarise(prompts_, s_.prompt.total);
  out.output = summarise(outputs_, s_.output.total);
  out.total_tokens = out.prompt.total + out.output.total;
  out.duration_s = out.last_arrival_s - out.first_arrival_s;
  if (out.duration_s > 0.0) out.mean_rate = static_cast<double>(out.requests) / out.duration_s;
  if (out.requests > 0) {
    out.mean_n = static_cast<double>(n_sum_) / static_cast<double>(out.requests);
    out.mean_beam_width = static_cast<double>(beam_sum_) / static_cast<double>(out.requests);
  }
  out.distinct_hash_ids = seen_ids_.size();
  if (out.hash_block_refs > 0) {
    out.hash_block_tokens = hash_block_tokens_;
    out.hash_reuse_fraction = static_cast<double>(out.repeated_hash_block_refs) /
                              static_cast<double>(out.hash_block_refs);
  }
  return out;
}

TraceStats compute_stats(RequestSource& source) {
  StatsAccumulator acc(source.hash_block_tokens());
  while (auto r = source.next()) acc.add(*r);
  return acc.finish();
}

std::string format_stats_table(const TraceStats& s) {
  std::string out;
  auto line = [&out](std::string_view label, const std::string& value) {
    out += fmt::format("{:<22}{}\n", label, value);
  };
  line("requests", fmt::format("{}", s.requests));
  line("arrivals", fmt::format("{:.3f} .. {:.3f} s", s.first_arrival_s, s.last_arrival_s));
  line("duration", fmt::format("{:.3f} s", s.duration_s));
  line("mean rate", fmt::format("{:.3f} req/s", s.mean_rate));
  out += fmt::format("{:<22}{:>14}{:>14}\n", "tokens", "prompt", "output");
  auto row = [&out](std::string_view label, const std::string& p, const std::string& o) {
    out += fmt::format("{:<22}{:>14}{:>14}\n", label, p, o);
  };
  row("  mean", fmt::format("{:.2f}", s.prompt.mean), fmt::format("{:.2f}", s.output.mean));
  row("  min", fmt::format("{}", s.prompt.min), fmt::format("{}", s.output.min));
  row("  p50", fmt::format("{}", s.prompt.p50), fmt::format("{}", s.output.p50));
  row("  p90", fmt::format("{}", s.prompt.p90), fmt::format("{}", s.output.p90));
  row("  p99", fmt::format("{}", s.prompt.p99), fmt::format("{}", s.output.p99));
  row("  max", fmt::format("{}", s.prompt.max), fmt::format("{}", s.output.max));
  row("  total", fmt::format("{}", s.prompt.total), fmt::format("{}", s.output.total));
  line("total tokens", fmt::format("{}", s.total_tokens));
  line("mean n / beam width", fmt::format("{:.3f} / {:.3f}", s.mean_n, s.mean_beam_width));
  if (s.hash_block_refs > 0) {
    line("hash block", s.hash_block_tokens > 0 ? fmt::format("{} tokens", s.hash_block_tokens)
                                               : std::string("unknown size"));
    line("hash block refs", fmt::format("{} in {} requests, {} distinct ids", s.hash_block_refs,
                                        s.requests_with_hash_ids, s.distinct_hash_ids));
    line("prefix reuse", fmt::format("{:.2f}% of refs repeat an earlier id ({})",
                                     100.0 * s.hash_reuse_fraction, s.repeated_hash_block_refs));
  }
  return out;
}

nlohmann::json stats_to_json(const TraceStats& s) {
  return {
      {"requests", s.requests},
      {"first_arrival_s", s.first_arrival_s},
      {"last_arrival_s", s.last_arrival_s},
      {"duration_s", s.duration_s},
      {"mean_rate", s.mean_rate},
      {"prompt_tokens", length_json(s.prompt)},
      {"output_tokens", length_json(s.output)},
      {"total_tokens", s.total_tokens},
      {"mean_n", s.mean_n},
      {"mean_beam_width", s.mean_beam_width},
      {"prefix_reuse",
       {{"hash_block_tokens", s.hash_block_tokens},
        {"requests_with_hash_ids", s.requests_with_hash_ids},
        {"hash_block_refs", s.hash_block_refs},
        {"repeated_hash_block_refs", s.repeated_hash_block_refs},
        {"distinct_hash_ids", s.distinct_hash_ids},
        {"fraction", s.hash_reuse_fraction}}},
  };
}

}  // namespace pagesim::traces
