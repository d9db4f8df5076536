// ConstantCostModel: a linear cost model for hand-checked scheduler tests.
//
//   iteration = a + b·prefill_tokens + c·decode_seqs + d·decode_context_tokens
//   swap      = blocks · (e + f·block_size)
// with a = seconds_per_iteration and the other coefficients 0 unless set; an empty batch
// costs 0 (no forward pass). Immutable; safe to share between threads.
#pragma once

#include <cstdint>
#include <string>

#include "sim/cost/cost_model.h"

namespace pagesim::sim {

// cost.kind constant's settings (cost.constant).
struct ConstantCostCoefficients {
  double seconds_per_iteration = 0;            // a: fixed per non-empty iteration (s)
  double seconds_per_prefill_token = 0;        // b: per prefill token (s/token)
  double seconds_per_decode_seq = 0;           // c: per decode sequence (s/sequence)
  double seconds_per_decode_context_token = 0;  // d: per token of KV read in decode (s/token)
  double seconds_per_swap_block = 0;           // e: per swapped block (s/block)
  double seconds_per_swap_token = 0;           // f: per swapped token slot (s/token)
  bool operator==(const ConstantCostCoefficients&) const = default;
};

class ConstantCostModel final : public CostModel {
 public:
  // Throws CostModelError naming the coefficient that is negative or not finite.
  explicit ConstantCostModel(const ConstantCostCoefficients& coefficients);
  explicit ConstantCostModel(double seconds_per_iteration, double seconds_per_prefill_token = 0,
                             double seconds_per_decode_seq = 0,
                             double seconds_per_decode_context_token = 0);

  double iteration_seconds(const BatchShape& batch) const override;
  double swap_seconds(std::int64_t blocks, std::int64_t block_size) const override;
  std::string describe() const override;

  const ConstantCostCoefficients& coefficients() const { return k_; }

 private:
  ConstantCostCoefficients k_;
};

}  // namespace pagesim::sim
