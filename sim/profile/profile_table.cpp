#include "sim/profile/profile_table.h"

#include <cmath>

#include <fmt/format.h>

#include "sim/cost/cost_error.h"
#include "sim/output/atomic_file.h"

namespace pagesim::sim {

namespace {

void check_size(const std::vector<double>& v, std::size_t expected, const char* part) {
  if (v.size() != expected) {
    throw CostModelError(
        fmt::format("profile: {} timings: {} values for {} grid points", part, v.size(), expected));
  }
  for (const double s : v) {
    if (!std::isfinite(s) || s < 0) throw CostModelError(fmt::format("profile: {} timing {} is not a time", part, s));
  }
}

std::string number(double v) {
  if (v == std::floor(v) && std::abs(v) < 1e15) return fmt::format("{}", static_cast<long long>(v));
  return fmt::format("{:.9g}", v);
}

}  // namespace

std::vector<ProfileRow> profile_rows(const ModelSpec& model, const ProfileGrid& g, const ProfileTimings& t) {
  const std::size_t nc = g.decode_contexts.size();
  const std::size_t nb = g.swap_block_sizes.size();
  check_size(t.layer_linear, g.linear_tokens.size(), "linear");
  check_size(t.layer_prefill, g.prefill.size(), "attn_prefill");
  check_size(t.layer_decode, g.decode_seqs.size() * nc, "attn_decode");
  check_size(t.lm_head, g.lm_head_seqs.size(), "lm_head");
  check_size(t.swap, g.swap_blocks.size() * nb, "swap");
  const auto layers = static_cast<double>(model.layers);
  std::vector<ProfileRow> rows;
  for (std::size_t i = 0; i < g.linear_tokens.size(); ++i) {
    rows.push_back({"linear", static_cast<double>(g.linear_tokens[i]), std::nullopt, layers * t.layer_linear[i]});
  }
  for (std::size_t i = 0; i < g.prefill.size(); ++i) {
    rows.push_back({"attn_prefill", g.prefill[i].pairs(), std::nullopt, layers * t.layer_prefill[i]});
  }
  for (std::size_t i = 0; i < g.decode_seqs.size(); ++i) {
    for (std::size_t j = 0; j < nc; ++j) {
      rows.push_back({"attn_decode", static_cast<double>(g.decode_seqs[i]), static_cast<double>(g.decode_contexts[j]),
                      layers * t.layer_decode[i * nc + j]});
    }
  }
  for (std::size_t i = 0; i < g.lm_head_seqs.size(); ++i) {
    rows.push_back({"lm_head", static_cast<double>(g.lm_head_seqs[i]), std::nullopt, t.lm_head[i]});
  }
  for (std::size_t i = 0; i < g.swap_blocks.size(); ++i) {
    for (std::size_t j = 0; j < nb; ++j) {
      rows.push_back({"swap", static_cast<double>(g.swap_blocks[i]), static_cast<double>(g.swap_block_sizes[j]),
                      t.swap[i * nb + j]});
    }
  }
  return rows;
}

std::string profile_csv_text(const ProfileTable& table) {
  std::string s;
  for (const std::string& c : table.comments) s += c.empty() ? "#\n" : "# " + c + "\n";
  s += "part,x,y,seconds\n";
  for (const ProfileRow& r : table.rows) {
    s += fmt::format("{},{},{},{:.6e}\n", r.part, number(r.x), r.y ? number(*r.y) : "", r.seconds);
  }
  return s;
}

void write_profile_csv(const std::filesystem::path& path, const ProfileTable& table) {
  write_file_atomically(path, profile_csv_text(table));
}

}  // namespace pagesim::sim
