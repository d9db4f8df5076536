// The real traces bundled in traces/data/ parse completely and match their documented facts.
#include <gtest/gtest.h>

#include "test_util.h"
#include "traces/azure_csv_reader.h"
#include "traces/lengths_csv_reader.h"
#include "traces/mooncake_reader.h"
#include "traces/trace_format.h"
#include "traces/trace_stats.h"

namespace pagesim::traces {
namespace {

TraceStats stats_of(const std::string& name) {
  auto source = open_trace(testing::bundled(name));
  return compute_stats(*source);
}

TEST(BundledData, AzureCode) {
  const TraceStats s = stats_of("azure2023_code.csv");
  EXPECT_EQ(s.requests, 8819u);
  EXPECT_EQ(s.first_arrival_s, 0.0);
  EXPECT_NEAR(s.duration_s, 3436.0, 1.0);
  EXPECT_NEAR(s.mean_rate, 2.57, 0.005);
  EXPECT_NEAR(s.prompt.mean, 2048.0, 1.0);
  EXPECT_NEAR(s.output.mean, 27.9, 0.05);
}

TEST(BundledData, AzureConv) {
  const TraceStats s = stats_of("azure2023_conv.csv");
  EXPECT_EQ(s.requests, 19366u);
  EXPECT_NEAR(s.duration_s, 3502.0, 1.0);
  EXPECT_NEAR(s.mean_rate, 5.53, 0.005);
  EXPECT_NEAR(s.prompt.mean, 1155.0, 1.0);
  EXPECT_NEAR(s.output.mean, 211.0, 1.0);
}

TEST(BundledData, AzureLastArrivalIsExact) {
  // First row 18:15:46.6805900, last row 19:14:08.4025270: 3501.721937 s.
  AzureCsvReader reader(testing::bundled("azure2023_conv.csv"));
  double last = -1;
  while (auto r = reader.next()) last = r->arrival_s;
  EXPECT_EQ(last, 3501.721937);
}

TEST(BundledData, MooncakePrefixReuse) {
  const TraceStats s = stats_of("mooncake_conversation_trace.jsonl");
  EXPECT_EQ(s.requests, 12031u);
  EXPECT_EQ(s.hash_block_tokens, 512);
  EXPECT_EQ(s.requests_with_hash_ids, 12031u);
  EXPECT_EQ(s.hash_block_refs, 288'500u);
  EXPECT_EQ(s.repeated_hash_block_refs, 105'710u);
  EXPECT_NEAR(s.hash_reuse_fraction, 0.366, 0.0005);  // the documented 36.6%
  EXPECT_NEAR(s.prompt.mean, 12035.0, 1.0);
  EXPECT_NEAR(s.output.mean, 343.0, 1.0);
  EXPECT_NEAR(s.mean_rate, 3.40, 0.005);
  EXPECT_NEAR(s.duration_s, 3537.0, 1.0);
}

TEST(BundledData, ShareGptOptLengths) {
  const LengthTable all = load_lengths(testing::bundled("sharegpt_opt_lengths.csv"));
  EXPECT_EQ(all.rows_read, 84'226u);
  EXPECT_EQ(all.rows.size(), 84'226u);
  // The vLLM paper's filter: input + output < 2048.
  const LengthTable kept = load_lengths(testing::bundled("sharegpt_opt_lengths.csv"), {}, 2048);
  EXPECT_EQ(kept.rows_read, 84'226u);
  ASSERT_EQ(kept.rows.size(), 79'725u);
  double in = 0, out = 0;
  for (const auto& r : kept.rows) {
    in += static_cast<double>(r.prompt_tokens);
    out += static_cast<double>(r.output_tokens);
  }
  EXPECT_NEAR(in / 79'725.0, 161.18, 0.01);
  EXPECT_NEAR(out / 79'725.0, 338.0, 0.01);
}

TEST(BundledData, ShareGptLlama2Lengths) {
  const LengthTable t =
      load_lengths(testing::bundled("lengths_sharegpt_8k_filtered_stats_llama2_tokenizer.csv"));
  EXPECT_EQ(t.rows_read, 30'731u);
  EXPECT_EQ(t.rows.size(), 30'731u);
  for (const auto& r : t.rows) ASSERT_LE(r.total_tokens(), 8192);
}

}  // namespace
}  // namespace pagesim::traces
