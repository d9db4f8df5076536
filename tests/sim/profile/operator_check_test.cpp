// The operator check of `pagesim profile` without a GPU: its points, the device → tables map,
// the published values (the cost model's own lookups, per layer), the CSV and the summary,
// with fake measured times.
#include "sim/profile/operator_check.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>

#include "sim/cost/batch_shape.h"
#include "sim/cost/operators_cost_model.h"
#include "sim/cost/presets.h"

namespace pagesim::sim {
namespace {

TEST(OperatorCheck, DeviceNamesMapToTheTablesOfTheSameKind) {
  EXPECT_EQ(operator_check_gpu_preset("NVIDIA H200"), "h200");
  EXPECT_EQ(operator_check_gpu_preset("NVIDIA H100 80GB HBM3"), "h100-sxm");
  EXPECT_EQ(operator_check_gpu_preset("NVIDIA A100-SXM4-80GB"), "a100-80gb");
  EXPECT_EQ(operator_check_gpu_preset("NVIDIA L40S"), "l40s");
  EXPECT_EQ(operator_check_gpu_preset("NVIDIA H100 PCIe"), std::nullopt);  // the tables measured SXM
  EXPECT_EQ(operator_check_gpu_preset("NVIDIA A100-SXM4-40GB"), std::nullopt);
  EXPECT_EQ(operator_check_gpu_preset("NVIDIA GeForce RTX 4090"), std::nullopt);
}

TEST(OperatorCheck, OnlyFullAttentionTwoByteModelsAreChecked) {
  EXPECT_EQ(operator_check_skip_reason(model_preset("llama-2-7b")), "");
  EXPECT_EQ(operator_check_skip_reason(model_preset("opt-13b")), "");
  EXPECT_EQ(operator_check_skip_reason(model_preset("mixtral-8x7b")), "");  // its MoE is checked
  EXPECT_NE(operator_check_skip_reason(model_preset("gpt-oss-120b")), "");
  EXPECT_NE(operator_check_skip_reason(model_preset("llama-4-scout")), "");  // chunked-local groups
}

TEST(OperatorCheck, MoeModelsGetMoePointsAndPublishedMoePerLayer) {
  const ModelSpec m = model_preset("mixtral-8x7b");
  const std::vector<OperatorCheckPoint> points = operator_check_points(m, 0);
  std::vector<OperatorCheckPoint> moe;
  for (const OperatorCheckPoint& p : points)
    if (p.op == CheckedOperator::kMoe) moe.push_back(p);
  ASSERT_EQ(moe.size(), 7u);
  EXPECT_EQ(moe.front().batch, 1);
  EXPECT_EQ(moe.back().batch, 8192);
  for (const OperatorCheckPoint& p : operator_check_points(model_preset("llama-2-7b"), 0))
    EXPECT_NE(p.op, CheckedOperator::kMoe);

  std::vector<double> measured(points.size(), 2e-3);
  const std::vector<OperatorCheckRow> rows = operator_check_rows(m, "h100-sxm", default_operator_tables(), points, measured);
  for (const OperatorCheckRow& r : rows) {
    if (r.point.op != CheckedOperator::kMoe) continue;
    EXPECT_FALSE(r.published_extrapolated) << r.point.batch;  // Mixtral's shape is in the h100 table
    // sim/cost/operator_tables/h100_sxm/vllm-0.14.0/moe.csv: bfloat16,4096,14336,2,8,1,1,<tokens>
    if (r.point.batch == 1) {
      EXPECT_NEAR(r.published_s, 355.2000e-6, 1e-12);
    }
    if (r.point.batch == 8192) {
      EXPECT_NEAR(r.published_s, 27224.3652e-6, 1e-12);
    }
  }
  const std::string summary = operator_check_summary(rows);
  EXPECT_NE(summary.find("moe"), std::string::npos) << summary;
  EXPECT_NE(operator_check_csv({"c"}, rows).find("\nmoe,8192,0,2000,"), std::string::npos);
}

TEST(OperatorCheck, PointsStayWithinTheModelsContext) {
  const ModelSpec m = model_preset("llama-2-7b");  // 4096 tokens
  const std::vector<OperatorCheckPoint> all = operator_check_points(m, 0);
  const std::vector<OperatorCheckPoint> short_ = operator_check_points(m, 1024);
  EXPECT_LT(short_.size(), all.size());
  for (const OperatorCheckPoint& p : short_) EXPECT_LE(p.length, 1024);
  for (CheckedOperator op : {CheckedOperator::kGemmLayer, CheckedOperator::kLmHead, CheckedOperator::kContextAttention,
                             CheckedOperator::kGenerationAttention})
    EXPECT_TRUE(std::any_of(all.begin(), all.end(), [&](const OperatorCheckPoint& p) { return p.op == op; }))
        << to_string(op);
}

TEST(OperatorCheck, PublishedValuesAreTheCostModelsPerLayerLookups) {
  const ModelSpec m = model_preset("llama-2-7b");
  const std::vector<OperatorCheckPoint> points = operator_check_points(m, 0);
  std::vector<double> measured(points.size(), 1e-4);
  const std::vector<OperatorCheckRow> rows = operator_check_rows(m, "h100-sxm", default_operator_tables(), points, measured);
  ASSERT_EQ(rows.size(), points.size());

  OperatorsCostParams s;
  s.tables = default_operator_tables();
  s.gpu = "h100_sxm";
  const OperatorsCostModel model(m, gpu_preset("h100-sxm"), 1, s);
  for (const OperatorCheckRow& r : rows) {
    EXPECT_GT(r.published_s, 0) << to_string(r.point.op);
    EXPECT_DOUBLE_EQ(r.measured_s, 1e-4);
    BatchShape b;
    if (r.point.op == CheckedOperator::kGenerationAttention) {
      for (std::int64_t i = 0; i < r.point.batch; ++i) b.add_decode_seq(r.point.length);
      EXPECT_DOUBLE_EQ(r.published_s, model.breakdown(b).generation_attention_seconds / 32);
      // Llama-2-7B's 32 KV heads fold into the batch: outside the measured kv heads.
      EXPECT_TRUE(r.published_extrapolated);
    }
    if (r.point.op == CheckedOperator::kGemmLayer) {
      b.add_prefill_chunk(r.point.batch, 0, false);
      EXPECT_DOUBLE_EQ(r.published_s, model.breakdown(b).gemm_seconds / 32);
      EXPECT_FALSE(r.published_extrapolated) << r.point.batch;  // the tables hold these shapes
    }
  }
  // Larger operators take longer in the tables.
  auto published = [&](CheckedOperator op, std::int64_t batch, std::int64_t length) {
    for (const OperatorCheckRow& r : rows)
      if (r.point.op == op && r.point.batch == batch && r.point.length == length) return r.published_s;
    ADD_FAILURE() << "no point " << to_string(op) << " " << batch << " " << length;
    return 0.0;
  };
  EXPECT_LT(published(CheckedOperator::kGemmLayer, 256, 0), published(CheckedOperator::kGemmLayer, 8192, 0));
  EXPECT_LT(published(CheckedOperator::kContextAttention, 1, 1024),
            published(CheckedOperator::kContextAttention, 1, 4096));
  EXPECT_LT(published(CheckedOperator::kGenerationAttention, 16, 512),
            published(CheckedOperator::kGenerationAttention, 256, 4096));
}

TEST(OperatorCheck, CsvAndSummaryGiveMeasuredOverPublished) {
  std::vector<OperatorCheckRow> rows = {
      {{CheckedOperator::kGemmLayer, 16, 0}, 2e-5, 1e-5, false},
      {{CheckedOperator::kGemmLayer, 64, 0}, 3e-5, 2e-5, false},
      {{CheckedOperator::kGenerationAttention, 8, 2048}, 5e-5, 1e-4, true},
  };
  const std::string csv = operator_check_csv({"device: test"}, rows);
  EXPECT_EQ(csv,
            "# device: test\n"
            "operator,batch,length,measured_us,published_us,ratio,published_extrapolated\n"
            "gemm_layer,16,0,20,10,2.000,no\n"
            "gemm_layer,64,0,30,20,1.500,no\n"
            "generation_attention,8,2048,50,100,0.500,yes\n");
  const std::string summary = operator_check_summary(rows);
  EXPECT_NE(summary.find("gemm_layer             2 points: measured / published median 1.75 (range 1.50 to 2.00)"),
            std::string::npos)
      << summary;
  EXPECT_NE(summary.find("generation_attention   1 points: measured / published median 0.50"), std::string::npos)
      << summary;
}

TEST(OperatorCheck, SizesMustMatch) {
  const ModelSpec m = model_preset("llama-2-7b");
  EXPECT_THROW(operator_check_rows(m, "h100-sxm", default_operator_tables(), operator_check_points(m, 0), {1.0}),
               std::invalid_argument);
}

}  // namespace
}  // namespace pagesim::sim
