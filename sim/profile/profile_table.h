// ProfileTable: measured times turned into the rows of a profile CSV, in exactly the format
// ProfileCostModel reads (sim/cost/profile_cost_model.h): '#' comment lines naming the
// device, date, command and method, the header `part,x,y,seconds`, then one row per grid
// point. Per-layer times (linear, moe, attention) are multiplied by the model's layer counts
// here; lm_head and swap are whole-model times already. In a model with MoE layers the
// linear row is (layers - moe_layers) dense layers' GEMMs + moe_layers MoE layers' qkv and
// o_proj, and the moe row moe_layers MoE blocks, so linear + moe is every layer once.
//
// The conversion and the writer are pure host code (no CUDA), so they are tested with fake
// timings. Plain value types.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "sim/cost/model_spec.h"
#include "sim/profile/profile_grid.h"

namespace pagesim::sim {

// Median seconds measured at each grid point, in the grid's order.
struct ProfileTimings {
  std::vector<double> layer_linear;   // [linear_tokens]: one dense layer's GEMMs (layer_gemms);
                                      // empty when every layer is an MoE layer
  std::vector<double> moe_layer_linear;  // [linear_tokens]: one MoE layer's GEMMs outside its
                                         // MoE block (attention_gemms); empty for a dense model
  std::vector<double> moe_layer;      // [moe_tokens]: one MoE block (moe_layer_shape)
  std::vector<double> layer_prefill;  // [prefill]: one layer's prefill attention
  std::vector<double> layer_decode;   // [decode_seqs × decode_contexts], context fastest
  std::vector<double> lm_head;        // [lm_head_seqs]
  std::vector<double> swap;           // [swap_blocks × swap_block_sizes], block size fastest;
                                      // every layer's K and V, the slower direction
};

struct ProfileRow {
  std::string part;          // linear, moe, attn_prefill, attn_decode, lm_head, swap
  double x = 0;
  std::optional<double> y;   // 2-D parts only
  double seconds = 0;
};

struct ProfileTable {
  std::vector<std::string> comments;  // written as "# <line>" before the header
  std::vector<ProfileRow> rows;
};

// The rows for `grid`, per-layer times scaled by model.layers. Throws CostModelError when a
// timing vector's size does not match the grid or a time is negative or not finite.
std::vector<ProfileRow> profile_rows(const ModelSpec& model, const ProfileGrid& grid, const ProfileTimings& t);

// The CSV text: comments, header, rows (x as an integer when it is one, seconds with 6
// significant digits). Rows keep their order.
std::string profile_csv_text(const ProfileTable& table);

// Writes profile_csv_text(table) to `path` atomically (a temporary renamed into place).
// Throws std::runtime_error naming the path on an I/O error.
void write_profile_csv(const std::filesystem::path& path, const ProfileTable& table);

}  // namespace pagesim::sim
