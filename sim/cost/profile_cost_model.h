// ProfileCostModel: iteration and swap times interpolated from a table of measured times.
//
// The table is a CSV file; '#' starts a comment line, blank lines are ignored, the first other
// line is the header `part,x,y,seconds`, and each row gives the measured seconds of one part
// of a forward pass at one grid point (y empty for 1-D parts):
//
//   part          x                                y                          required
//   linear        tokens in the batch (N)          -                          yes
//   moe           tokens in the batch (N)          -                          MoE models
//   attn_prefill  query-key pairs (BatchShape::    -                          yes
//                 prefill_attention_pairs)
//   attn_decode   decode sequences                 mean context tokens per    yes
//                                                  decode sequence
//   lm_head       sampled sequences                -                          no
//   swap          blocks copied (one direction)    block size (tokens)        yes
//
// `linear` is everything in a forward pass but attention: projections, norms, communication,
// and the LM head too when no lm_head rows are given. `moe` is a model's MoE blocks (router,
// top-k, experts, shared experts; sim/profile/profile_grid.h moe_layer_shape) over all its
// MoE layers; `linear` then holds the MoE layers' other GEMMs and the dense layers' MLPs, so
// linear + moe counts every layer once. A table is for a model with MoE layers exactly when
// it has moe rows (check_model). `iteration_overhead` (seconds, >= 0;
// a constructor argument, cost.iteration_overhead_s in an experiment, default 0) is the
// host's time per iteration that the table leaves out: a profile of GPU work only, as
// `pagesim profile` measures (sim/profile/profile_measure.h), lacks the engine's scheduling,
// input preparation, sampling and the launch gaps between kernels, which serving engines
// spend on the CPU every step; a profile timed around whole engine steps includes them
// (leave it 0). Rows may come in any
// order; a 2-D part needs a row for every combination of its x and y values.
//
//   iteration = linear(N) + [moe rows] moe(N) + [prefill_seqs > 0] attn_prefill(pairs)
//             + [decode_seqs > 0] attn_decode(decode_seqs, decode_context_tokens/decode_seqs)
//             + [lm_head rows, S > 0] lm_head(S) + iteration_overhead   (0 for an empty batch)
//   swap      = [blocks > 0] swap(blocks, block_size)
// Lookups are piecewise linear (bilinear in 2-D) between grid points and extrapolate along the
// last segment beyond the grid; each part is clamped at 0 s so that extrapolation below the
// grid never goes negative.
//
// A malformed file throws ProfileFormatError naming file:line, the column, what was found and
// what was expected; so does a table whose iteration parts are all 0 s with no overhead (every
// iteration would take no time). Immutable after construction; safe to share between threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

#include "sim/cost/cost_model.h"
#include "sim/cost/model_spec.h"
#include "sim/cost/piecewise_linear.h"

namespace pagesim::sim {

// cost.kind profile's settings: the measured table and the host time it lacks.
struct ProfileCostSettings {
  std::string profile;               // the CSV's path as the experiment gives it (required)
  double iteration_overhead_s = -1;  // host seconds added to every non-empty iteration; < 0: none
  bool operator==(const ProfileCostSettings&) const = default;
};

class ProfileCostModel final : public CostModel {
 public:
  // Reads and parses the CSV at `path`; errors name the path. Throws CostModelError when
  // `iteration_overhead_s` is negative or not finite.
  // `name`: how errors and describe() name the file ("" = `path`).
  explicit ProfileCostModel(const std::filesystem::path& path, double iteration_overhead_s = 0,
                            std::string name = {});
  // Parses CSV text; errors name `source_name` as the file.
  ProfileCostModel(std::string_view csv_text, std::string source_name, double iteration_overhead_s = 0);

  double iteration_seconds(const BatchShape& batch) const override;
  double swap_seconds(std::int64_t blocks, std::int64_t block_size) const override;
  std::string describe() const override;

  bool has_lm_head() const { return tables_.lm_head.has_value(); }
  bool has_moe() const { return tables_.moe.has_value(); }

  // Throws ProfileFormatError naming the file when the table does not fit `model`: a model
  // with MoE layers and no 'moe' rows (its MoE blocks would cost nothing), or moe rows for a
  // model without MoE layers (a table profiled for another model).
  void check_model(const ModelSpec& model) const;

 private:
  struct Tables {
    std::string source;
    std::size_t rows = 0;
    bool iteration_rows_all_zero = false;  // no iteration part has a time > 0
    PiecewiseLinear linear;
    PiecewiseLinear attn_prefill;
    BilinearGrid attn_decode;
    BilinearGrid swap;
    std::optional<PiecewiseLinear> lm_head;
    std::optional<PiecewiseLinear> moe;
  };
  ProfileCostModel(Tables tables, double iteration_overhead_s);
  static Tables parse(std::string_view text, std::string source);

  Tables tables_;
  double iteration_overhead_s_;  // added to every non-empty iteration; finite, >= 0
};

}  // namespace pagesim::sim
