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
  const std::int64_t dense_layers = model.layers - model.moe_layers;
  check_size(t.layer_linear, dense_layers > 0 ? g.linear_tokens.size() : 0, "linear (dense layers)");
  check_size(t.moe_layer_linear, model.moe_layers > 0 ? g.linear_tokens.size() : 0, "linear (MoE layers)");
  check_size(t.moe_layer, g.moe_tokens.size(), "moe");
  if ((model.moe_layers > 0) == g.moe_tokens.empty()) {
    throw CostModelError(fmt::format("profile: the grid has {} moe points for a model of {} MoE layers",
                                     g.moe_tokens.size(), model.moe_layers));
  }
  check_size(t.layer_prefill, g.prefill.size(), "attn_prefill");
  check_size(t.layer_decode, g.decode_seqs.size() * nc, "attn_decode");
  check_size(t.lm_head, g.lm_head_seqs.size(), "lm_head");
  check_size(t.swap, g.swap_blocks.size() * nb, "swap");
  const auto layers = static_cast<double>(model.layers);
  const auto moe_layers = static_cast<double>(model.moe_layers);
  std::vector<ProfileRow> rows;
  for (std::size_t i = 0; i < g.linear_tokens.size(); ++i) {
    const double dense = dense_layers > 0 ? static_cast<double>(dense_layers) * t.layer_linear[i] : 0.0;
    const double moe = model.moe_layers > 0 ? moe_layers * t.moe_layer_linear[i] : 0.0;
    rows.push_back({"linear", static_cast<double>(g.linear_tokens[i]), std::nullopt, dense + moe});
  }
  for (std::size_t i = 0; i < g.moe_tokens.size(); ++i) {
    rows.push_back({"moe", static_cast<double>(g.moe_tokens[i]), std::nullopt, moe_layers * t.moe_layer[i]});
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
