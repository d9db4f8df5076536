// VllmVersion: the vLLM release whose behaviour pagesim follows where releases differ
// (experiment key `vllm_version`). What depends on it, each with the release it changed in:
//   - vllm-v1's long_prefill_token_threshold caps a prefill only when more than one request
//     is running or waiting, from 0.31.0 (vllm/v1/core/sched/scheduler.py, Scheduler.schedule:
//     "when it is the only request there is nobody to starve"; PR vllm-project/vllm#57951,
//     absent from the 0.30.0 wheel, present in 0.31.0's); before, it always caps.
// The default is 0.15.1, the release of the measured runs (shared/sim2real) and of the first
// recorded decisions (experiments/engine_parity/recorded/0.15.1). A plain value.
#pragma once

#include <compare>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace pagesim::sim {

struct VllmVersion {
  std::int32_t major = 0, minor = 15, patch = 1;
  friend auto operator<=>(const VllmVersion&, const VllmVersion&) = default;
};

// "MAJOR.MINOR" or "MAJOR.MINOR.PATCH" (a missing patch is 0); throws std::invalid_argument
// naming what was expected.
inline VllmVersion parse_vllm_version(const std::string& text) {
  VllmVersion v{0, 0, 0};
  std::int32_t* parts[] = {&v.major, &v.minor, &v.patch};
  std::size_t i = 0, n = 0;
  for (std::size_t pos = 0; pos <= text.size(); ++pos) {
    if (pos == text.size() || text[pos] == '.') {
      if (pos == i || n == 3 || pos - i > 6)
        throw std::invalid_argument("expected a vLLM release as MAJOR.MINOR[.PATCH] (e.g. 0.15.1), found '" + text + "'");
      *parts[n++] = std::stoi(text.substr(i, pos - i));
      i = pos + 1;
    } else if (text[pos] < '0' || text[pos] > '9') {
      throw std::invalid_argument("expected a vLLM release as MAJOR.MINOR[.PATCH] (e.g. 0.15.1), found '" + text + "'");
    }
  }
  if (n < 2) throw std::invalid_argument("expected a vLLM release as MAJOR.MINOR[.PATCH] (e.g. 0.15.1), found '" + text + "'");
  return v;
}

inline std::string format_vllm_version(const VllmVersion& v) {
  return std::to_string(v.major) + "." + std::to_string(v.minor) + "." + std::to_string(v.patch);
}

// vLLM 0.31.0 and later leave a lone request's prefill uncapped by long_prefill_token_threshold.
inline bool long_prefill_cap_needs_company(const VllmVersion& v) { return v >= VllmVersion{0, 31, 0}; }

}  // namespace pagesim::sim
