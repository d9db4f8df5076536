// LengthModel: a seeded source of (prompt, output) length pairs for synthetic workloads.
//
// IndependentLengths draws the prompt and the output from two LengthDistributions.
// EmpiricalLengths draws whole rows of a LengthTable, uniformly with replacement, so the
// correlation of prompt and output in the data is kept. Both can enforce a total-length
// limit (prompt + output < max_total_tokens, strict, as the vLLM artifact filters): the
// table is filtered when it is loaded; independent pairs are redrawn until they fit, so a
// limit never thins the arrival stream. Owns its engines; not thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <random>
#include <string>

#include "traces/length_distribution.h"
#include "traces/lengths_csv_reader.h"

namespace pagesim::traces {

class LengthModel {
 public:
  LengthModel() = default;
  virtual ~LengthModel() = default;
  LengthModel(const LengthModel&) = delete;
  LengthModel& operator=(const LengthModel&) = delete;

  // The next pair: prompt >= 1, output >= 0. Throws SpecError when a limit cannot be met.
  virtual LengthRow next() = 0;
  virtual std::string describe() const = 0;
};

class IndependentLengths final : public LengthModel {
 public:
  // Pairs rejected in a row before next() gives up with SpecError.
  static constexpr int kMaxRedraws = 10'000;

  // max_total_tokens: keep pairs with prompt + output < it; 0 = no limit.
  // REQUIRES: prompt, output non-null; max_total_tokens >= 0.
  IndependentLengths(std::unique_ptr<LengthDistribution> prompt,
                     std::unique_ptr<LengthDistribution> output, std::int64_t max_total_tokens);

  LengthRow next() override;
  std::string describe() const override;

 private:
  std::unique_ptr<LengthDistribution> prompt_;
  std::unique_ptr<LengthDistribution> output_;
  std::int64_t max_total_tokens_;
};

class EmpiricalLengths final : public LengthModel {
 public:
  // Draws rows of `table` (already filtered, see load_lengths()). Throws SpecError if the
  // table has no rows.
  EmpiricalLengths(LengthTable table, std::uint64_t seed);

  LengthRow next() override;
  std::string describe() const override;

 private:
  LengthTable table_;
  std::mt19937_64 engine_;
};

}  // namespace pagesim::traces
