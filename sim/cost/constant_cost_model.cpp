#include "sim/cost/constant_cost_model.h"

#include <cassert>
#include <cmath>

#include <fmt/format.h>

#include "sim/cost/cost_error.h"

namespace pagesim::sim {

ConstantCostModel::ConstantCostModel(const ConstantCostCoefficients& coefficients)
    : k_(coefficients) {
  const struct {
    const char* field;
    double value;
  } fields[] = {{"seconds_per_iteration", k_.seconds_per_iteration},
                {"seconds_per_prefill_token", k_.seconds_per_prefill_token},
                {"seconds_per_decode_seq", k_.seconds_per_decode_seq},
                {"seconds_per_decode_context_token", k_.seconds_per_decode_context_token},
                {"seconds_per_swap_block", k_.seconds_per_swap_block},
                {"seconds_per_swap_token", k_.seconds_per_swap_token}};
  for (const auto& f : fields) {
    if (!(std::isfinite(f.value) && f.value >= 0)) {
      throw CostModelError(
          fmt::format("constant cost model: {} is {}, expected seconds >= 0", f.field, f.value));
    }
  }
}

ConstantCostModel::ConstantCostModel(double seconds_per_iteration,
                                     double seconds_per_prefill_token,
                                     double seconds_per_decode_seq,
                                     double seconds_per_decode_context_token)
    : ConstantCostModel(ConstantCostCoefficients{
          .seconds_per_iteration = seconds_per_iteration,
          .seconds_per_prefill_token = seconds_per_prefill_token,
          .seconds_per_decode_seq = seconds_per_decode_seq,
          .seconds_per_decode_context_token = seconds_per_decode_context_token}) {}

double ConstantCostModel::iteration_seconds(const BatchShape& batch) const {
  if (batch.empty()) return 0;
  return k_.seconds_per_iteration +
         k_.seconds_per_prefill_token * static_cast<double>(batch.prefill_tokens) +
         k_.seconds_per_decode_seq * static_cast<double>(batch.decode_seqs) +
         k_.seconds_per_decode_context_token * static_cast<double>(batch.decode_context_tokens);
}

double ConstantCostModel::swap_seconds(std::int64_t blocks, std::int64_t block_size) const {
  assert(blocks >= 0 && block_size >= 1);
  return static_cast<double>(blocks) *
         (k_.seconds_per_swap_block +
          k_.seconds_per_swap_token * static_cast<double>(block_size));
}

std::string ConstantCostModel::describe() const {
  return fmt::format(
      "constant(iteration={}s, prefill_token={}s, decode_seq={}s, decode_context_token={}s, "
      "swap_block={}s, swap_token={}s)",
      k_.seconds_per_iteration, k_.seconds_per_prefill_token, k_.seconds_per_decode_seq,
      k_.seconds_per_decode_context_token, k_.seconds_per_swap_block, k_.seconds_per_swap_token);
}

}  // namespace pagesim::sim
