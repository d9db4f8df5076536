#include "sim/cost/cost_model_factory.h"

#include <gtest/gtest.h>

#include <string>
#include <variant>

#include "sim/cost/cost_error.h"
#include "sim/cost/presets.h"
#include "sim/cost/profile_cost_model.h"
#include "sim/cost/roofline_cost_model.h"

namespace pagesim::sim {
namespace {

BatchShape one_decode() {
  BatchShape b;
  b.add_decode_seq(512);
  return b;
}

TEST(CostFactory, DefaultIsRooflineOfThePaperSetting) {
  const auto m = make_cost_model(CostModelSpec{});
  const auto* r = dynamic_cast<const RooflineCostModel*>(m.get());
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->model().name, "opt-13b");
  EXPECT_EQ(r->gpu().name, "a100-40gb");
  EXPECT_EQ(r->tp(), 1);
  EXPECT_EQ(m->describe().rfind("roofline(model=opt-13b, gpu=a100-40gb, tp=1", 0), 0u)
      << m->describe();
}

TEST(CostFactory, RooflineFromStructsAndTunedPresets) {
  CostModelSpec spec;
  GpuSpec g = gpu_preset("h100-sxm");
  g.memory_efficiency = 0.5;
  spec.model = model_preset("llama-2-70b");
  spec.gpu = g;
  spec.tp = 4;
  const auto slow = make_cost_model(spec);
  spec.gpu = std::string("h100-sxm");
  const auto fast = make_cost_model(spec);
  EXPECT_GT(slow->iteration_seconds(one_decode()), fast->iteration_seconds(one_decode()));
  EXPECT_NE(fast->describe().find("tp=4"), std::string::npos);
}

TEST(CostFactory, ConstantAndProfile) {
  CostModelSpec spec;
  spec.settings = ConstantCostCoefficients{.seconds_per_iteration = 0.03};
  spec.model = std::string("no-such-model");  // ignored by the constant kind
  EXPECT_EQ(make_cost_model(spec)->iteration_seconds(one_decode()), 0.03);

  spec.model = std::string("llama-2-7b");  // the profile kind checks its table fits the model
  spec.settings = ProfileCostSettings{.profile = "tests/sim/data/cost_profile_example.csv"};
  spec.input_file = [](const std::string& path) { return std::string(PAGESIM_SOURCE_DIR) + "/" + path; };
  const auto p = make_cost_model(spec);
  EXPECT_NE(dynamic_cast<const ProfileCostModel*>(p.get()), nullptr);
  std::get<ProfileCostSettings>(spec.settings).iteration_overhead_s = 0.002;  // reaches the profile model
  EXPECT_DOUBLE_EQ(make_cost_model(spec)->iteration_seconds(one_decode()), p->iteration_seconds(one_decode()) + 0.002);
  spec.model = std::string("mixtral-8x7b");  // MoE layers: the table has no moe rows
  try {
    make_cost_model(spec);
    ADD_FAILURE() << "expected ProfileFormatError";
  } catch (const ProfileFormatError& e) {
    EXPECT_NE(std::string(e.what()).find("cost_profile_example.csv"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("no 'moe' rows"), std::string::npos) << e.what();
  }
  spec.model = std::string("llama-2-7b");
  std::get<ProfileCostSettings>(spec.settings).profile.clear();
  EXPECT_THROW(make_cost_model(spec), CostModelError);
  std::get<ProfileCostSettings>(spec.settings).profile = "nonexistent.csv";
  EXPECT_THROW(make_cost_model(spec), ProfileFormatError);
}

TEST(CostFactory, UnknownPresetsListValidNames) {
  CostModelSpec spec;
  spec.model = std::string("gpt-4");
  try {
    (void)make_cost_model(spec);
    FAIL();
  } catch (const CostModelError& e) {
    // 35 names are too many for one line: `pagesim presets` lists them (issue 41).
    EXPECT_EQ(std::string(e.what()),
              "unknown model preset 'gpt-4', expected one of the " + std::to_string(model_preset_names().size()) +
                  " model presets (`pagesim presets` lists them)");
  }
  // A misspelling gets the close names.
  spec.model = std::string("llama3-8b");
  try {
    (void)make_cost_model(spec);
    FAIL();
  } catch (const CostModelError& e) {
    EXPECT_NE(std::string(e.what()).find("model presets: did you mean llama-3-8b? (`pagesim presets` lists them)"),
              std::string::npos)
        << e.what();
  }
  spec.model = std::string("opt-13b");
  spec.gpu = std::string("tpu-v5");
  try {
    (void)make_cost_model(spec);
    FAIL();
  } catch (const CostModelError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown gpu preset 'tpu-v5', expected one of: a100-40gb"),
              std::string::npos)
        << e.what();
  }
  // Five GPUs are listed in full, with the close one.
  spec.gpu = std::string("h100");
  try {
    (void)make_cost_model(spec);
    FAIL();
  } catch (const CostModelError& e) {
    EXPECT_EQ(std::string(e.what()),
              "unknown gpu preset 'h100', expected one of: a100-40gb, a100-80gb, h100-sxm, h200, l40s; did you mean "
              "h100-sxm or h200?");
  }
}

TEST(CostFactory, BuildsTheOperatorsModel) {
  CostModelSpec spec;
  spec.settings = OperatorsCostSettings{};  // the source tree's tables, the GPU's folder from its preset
  spec.model = std::string("llama-2-7b");
  spec.gpu = std::string("h100-sxm");
  const auto m = make_cost_model(spec);
  EXPECT_EQ(m->describe().rfind("operators(model=llama-2-7b, gpu=h100-sxm, tables=h100_sxm/vllm-0.14.0", 0), 0u)
      << m->describe();
  EXPECT_FALSE(m->notes().empty());
  spec.gpu = std::string("a100-40gb");  // no measured counterpart: cost.operators.gpu must name one
  try {
    (void)make_cost_model(spec);
    ADD_FAILURE() << "expected CostModelError";
  } catch (const CostModelError& e) {
    EXPECT_NE(std::string(e.what()).find("no measured operator tables for gpu 'a100-40gb'"), std::string::npos)
        << e.what();
  }
  spec.gpu = std::string("h100-sxm");
  spec.settings = RooflineCostSettings{};
  EXPECT_TRUE(make_cost_model(spec)->notes().empty());  // no "cost" object for other kinds
}

TEST(CostFactory, KindNames) {
  ASSERT_EQ(kCostModelKindNames.size(), 4u);
  EXPECT_EQ(to_string(CostModelKind::roofline), "roofline");
  EXPECT_EQ(to_string(CostModelKind::constant), "constant");
  EXPECT_EQ(to_string(CostModelKind::profile), "profile");
  EXPECT_EQ(to_string(CostModelKind::operators), "operators");
  EXPECT_EQ(to_string(static_cast<CostModelKind>(8)), "?");
  for (const auto& [kind, name] : kCostModelKindNames) EXPECT_EQ(to_string(kind), name);
  // Each kind's settings are the alternative at its index.
  EXPECT_EQ(kind_of(CostSettings{}), CostModelKind::roofline);
  EXPECT_EQ(kind_of(CostSettings{ConstantCostCoefficients{}}), CostModelKind::constant);
  EXPECT_EQ(kind_of(CostSettings{ProfileCostSettings{}}), CostModelKind::profile);
  EXPECT_EQ(kind_of(CostSettings{OperatorsCostSettings{}}), CostModelKind::operators);
}

// The roofline's overrides replace the preset's values they set, and keep the rest.
TEST(CostFactory, RooflineSettingsOverrideThePreset) {
  const GpuSpec preset = gpu_preset("h100-sxm");
  const GpuSpec kept = RooflineCostSettings{}.applied_to(preset);
  EXPECT_EQ(kept.compute_efficiency, preset.compute_efficiency);
  EXPECT_EQ(kept.iteration_overhead_seconds, preset.iteration_overhead_seconds);
  const GpuSpec tuned = RooflineCostSettings{.memory_efficiency = 0.5, .iteration_overhead_s = 0}.applied_to(preset);
  EXPECT_EQ(tuned.compute_efficiency, preset.compute_efficiency);
  EXPECT_EQ(tuned.memory_efficiency, 0.5);
  EXPECT_EQ(tuned.iteration_overhead_seconds, 0.0);
}

}  // namespace
}  // namespace pagesim::sim
