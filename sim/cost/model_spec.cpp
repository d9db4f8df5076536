#include "sim/cost/model_spec.h"

#include <fmt/format.h>

#include "sim/cost/cost_error.h"

namespace pagesim::sim {

std::int64_t ModelSpec::attention_params_per_layer() const {
  const std::int64_t weights = hidden * q_width()          // q
                               + 2 * hidden * kv_width()   // k, v
                               + q_width() * hidden;       // o
  const std::int64_t biases = linear_bias ? q_width() + 2 * kv_width() + hidden : 0;
  return weights + biases;
}

std::int64_t ModelSpec::mlp_params_per_layer() const {
  const std::int64_t in_matrices = gated_mlp ? 2 : 1;  // (gate,) up
  const std::int64_t weights = in_matrices * hidden * ffn + ffn * hidden;
  const std::int64_t biases = linear_bias ? in_matrices * ffn + hidden : 0;
  return weights + biases;
}

std::int64_t ModelSpec::norm_params_per_layer() const {
  // Two norms per block (before attention, before the MLP).
  return 2 * (linear_bias ? 2 * hidden : hidden);
}

std::int64_t ModelSpec::params_per_layer() const {
  return attention_params_per_layer() + mlp_params_per_layer() + norm_params_per_layer();
}

std::int64_t ModelSpec::nonembedding_params() const {
  const std::int64_t final_norm = linear_bias ? 2 * hidden : hidden;
  return layers * params_per_layer() + final_norm;
}

std::int64_t ModelSpec::embedding_params() const {
  return vocab * hidden + learned_positions * hidden;
}

std::int64_t ModelSpec::parameter_count() const {
  return nonembedding_params() + embedding_params() + (tied_lm_head ? 0 : lm_head_params());
}

void ModelSpec::validate() const {
  const struct {
    const char* field;
    std::int64_t value;
  } positive[] = {{"layers", layers}, {"hidden", hidden},           {"heads", heads},
                  {"kv_heads", kv_heads}, {"head_dim", head_dim},   {"ffn", ffn},
                  {"vocab", vocab},       {"dtype_bytes", dtype_bytes},
                  {"max_seq_len", max_seq_len}};
  for (const auto& f : positive) {
    if (f.value <= 0) {
      throw CostModelError(fmt::format("model '{}': {} is {}, expected a positive integer",
                                       name, f.field, f.value));
    }
  }
  if (heads % kv_heads != 0) {
    throw CostModelError(fmt::format(
        "model '{}': kv_heads {} does not divide heads {}, expected a divisor (GQA groups)", name,
        kv_heads, heads));
  }
  if (learned_positions < 0) {
    throw CostModelError(fmt::format("model '{}': learned_positions is {}, expected >= 0", name,
                                     learned_positions));
  }
}

void ModelSpec::check_tensor_parallel(int tp) const {
  if (tp < 1) {
    throw CostModelError(fmt::format("tensor-parallel degree is {}, expected >= 1", tp));
  }
  if (heads % tp != 0) {
    throw CostModelError(fmt::format(
        "model '{}': tensor-parallel degree {} does not divide heads {}, expected a divisor",
        name, tp, heads));
  }
  if (kv_heads % tp != 0 && tp % kv_heads != 0) {
    throw CostModelError(fmt::format(
        "model '{}': tensor-parallel degree {} and kv_heads {}: expected one to divide the other",
        name, tp, kv_heads));
  }
}

}  // namespace pagesim::sim
