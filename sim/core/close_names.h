// Close names: "did you mean ...?" for a misspelt name — an unknown key, preset, choice
// (router, scheduler, ...) or subcommand. The one place every error that names what it
// expected asks for the names nearest to what it found, so all suggest alike.
//
// Nearness is the optimal-string-alignment edit distance (insert, delete, substitute, swap
// two neighbours: "rnu" is 1 from "run"), ignoring ASCII case. A name is close when its
// distance is at most a third of the longer name (at least 1), or when it begins with the
// typed name ("h100" for "h100-sxm", ranked as one edit), like Python difflib's
// get_close_matches with its 0.6 cutoff; only names within one edit of the best are kept, so
// "llama3-8b" gets "llama-3-8b" and not every llama. or_list words any list of names the
// same way. Header-only, no state, thread-safe.
#pragma once

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace pagesim::sim {

// The edit distance of `a` and `b`, ignoring ASCII case (see the header comment).
inline std::size_t name_distance(std::string_view a, std::string_view b) {
  const auto lower = [](char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); };
  const std::size_t n = a.size(), m = b.size();
  // Three rows of the dynamic-programming table: i - 2, i - 1 and i.
  std::vector<std::size_t> two(m + 1), one(m + 1), cur(m + 1);
  for (std::size_t j = 0; j <= m; ++j) one[j] = j;
  for (std::size_t i = 1; i <= n; ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= m; ++j) {
      const std::size_t cost = lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1;
      cur[j] = std::min({one[j] + 1, cur[j - 1] + 1, one[j - 1] + cost});
      if (i > 1 && j > 1 && lower(a[i - 1]) == lower(b[j - 2]) && lower(a[i - 2]) == lower(b[j - 1]))
        cur[j] = std::min(cur[j], two[j - 2] + 1);
    }
    std::swap(two, one);
    std::swap(one, cur);
  }
  return one[m];
}

// The names of `candidates` close to `typed`, best first (ties in the candidates' order), at
// most `max_count`; empty when none is close or `typed` is one of them. `candidates`: any
// range of things a std::string_view can be made from. The views point into `candidates`.
template <class Range>
std::vector<std::string_view> close_names(std::string_view typed, const Range& candidates,
                                          std::size_t max_count = 3) {
  std::vector<std::pair<std::size_t, std::string_view>> scored;
  for (const auto& c : candidates) {
    const std::string_view name(c);
    if (name == typed) return {};
    // A name `typed` begins (3 characters at least: "h100" for "h100-sxm") ranks as one edit.
    const bool prefix = typed.size() >= 3 && name.size() > typed.size() &&
                        name_distance(typed, name.substr(0, typed.size())) == 0;
    const std::size_t d = prefix ? 1 : name_distance(typed, name);
    if (prefix || d * 3 <= std::max<std::size_t>(3, std::max(typed.size(), name.size()))) scored.emplace_back(d, name);
  }
  std::stable_sort(scored.begin(), scored.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<std::string_view> out;
  for (const auto& [d, name] : scored)
    if (out.size() < max_count && d <= scored.front().first + 1) out.push_back(name);
  return out;
}

// Names as a message lists them: "x", "x or y", "x, y or z"; "" for none.
inline std::string or_list(std::span<const std::string_view> names) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += i + 1 == names.size() ? " or " : ", ";
    out += names[i];
  }
  return out;
}

// "did you mean x?" / "did you mean x or y?" / "did you mean x, y or z?" for the close names
// of close_names(); "" when none is close.
template <class Range>
std::string did_you_mean(std::string_view typed, const Range& candidates, std::size_t max_count = 3) {
  const std::vector<std::string_view> names = close_names(typed, candidates, max_count);
  if (names.empty()) return {};
  return "did you mean " + or_list(names) + "?";
}

}  // namespace pagesim::sim
