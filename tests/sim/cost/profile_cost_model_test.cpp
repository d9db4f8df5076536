#include "sim/cost/profile_cost_model.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <string>

#include "sim/cost/cost_error.h"

namespace pagesim::sim {
namespace {

std::string example_path() {
  return std::string(PAGESIM_SOURCE_DIR) + "/tests/sim/data/cost_profile_example.csv";
}

BatchShape decode_batch(std::int64_t seqs, std::int64_t context) {
  BatchShape b;
  for (std::int64_t i = 0; i < seqs; ++i) b.add_decode_seq(context);
  return b;
}

// Linear interpolation between (x0, y0) and (x1, y1) at x.
double lerp(double x0, double y0, double x1, double y1, double x) {
  return y0 + (x - x0) / (x1 - x0) * (y1 - y0);
}

TEST(CostProfile, LoadsTheExampleFile) {
  const ProfileCostModel m(example_path());
  EXPECT_TRUE(m.has_lm_head());
  EXPECT_NE(m.describe().find("cost_profile_example.csv"), std::string::npos) << m.describe();
  EXPECT_NE(m.describe().find("rows=14"), std::string::npos) << m.describe();
}

// The profiles measured on a GPU (experiments/profiles/, `pagesim profile --device cuda`) read
// back, and what they say is physical: a decode step grows with the batch and the context, a
// 7B model's decode step on an H200 takes milliseconds, and a 13B model's longer than a 7B's.
TEST(CostProfile, MeasuredGpuProfilesReadBack) {
  const std::string dir = std::string(PAGESIM_SOURCE_DIR) + "/experiments/profiles/";
  const ProfileCostModel llama(dir + "llama-2-7b-h200.csv");
  const ProfileCostModel opt(dir + "opt-13b-h200.csv");
  for (const ProfileCostModel* m : {&llama, &opt}) {
    EXPECT_TRUE(m->has_lm_head()) << m->describe();
    EXPECT_LT(m->iteration_seconds(decode_batch(1, 512)), m->iteration_seconds(decode_batch(64, 512)));
    EXPECT_LT(m->iteration_seconds(decode_batch(64, 512)), m->iteration_seconds(decode_batch(64, 2048)));
    EXPECT_GT(m->swap_seconds(64, 16), m->swap_seconds(1, 16));
  }
  const double step = llama.iteration_seconds(decode_batch(1, 1024));
  EXPECT_GT(step, 2e-3);  // 13.5 GB of fp16 weights at under 4.8 TB/s
  EXPECT_LT(step, 20e-3);
  EXPECT_GT(opt.iteration_seconds(decode_batch(1, 1024)), step);
}

TEST(CostProfile, ExactAtGridPoints) {
  const ProfileCostModel m(example_path());
  EXPECT_EQ(m.iteration_seconds(BatchShape{}), 0.0);
  // linear(1) + attn_decode(1, 128) + lm_head(1)
  EXPECT_DOUBLE_EQ(m.iteration_seconds(decode_batch(1, 128)), 0.020 + 0.0001 + 0.0005);
  EXPECT_DOUBLE_EQ(m.iteration_seconds(decode_batch(1, 1024)), 0.020 + 0.0004 + 0.0005);
  // 32 decodes: linear(32), lm_head(32) interpolate; attn_decode(32, 1024) is a grid point.
  EXPECT_DOUBLE_EQ(m.iteration_seconds(decode_batch(32, 1024)),
                   lerp(1, 0.020, 256, 0.024, 32) + 0.0064 + lerp(1, 0.0005, 256, 0.0030, 32));
  // A 256-token prefill chunk that does not finish its prompt: linear(256) + attn_prefill
  // (pairs 256·257/2, between the first two grid points), no LM head.
  BatchShape p;
  p.add_prefill_chunk(256, 0, false);
  EXPECT_DOUBLE_EQ(m.iteration_seconds(p), 0.024 + lerp(0, 0, 1e6, 0.001, 256.0 * 257 / 2));
  EXPECT_DOUBLE_EQ(m.swap_seconds(1, 16), 0.00005);
  EXPECT_DOUBLE_EQ(m.swap_seconds(64, 16), 0.0021);
  EXPECT_EQ(m.swap_seconds(0, 16), 0.0);
}

// A profile of GPU work only plus the host's time per step: every non-empty iteration costs
// the overhead more, an empty one still nothing, swaps are unchanged.
TEST(CostProfile, IterationOverheadAddsToEveryNonEmptyIteration) {
  const ProfileCostModel plain(example_path());
  const ProfileCostModel host(example_path(), 0.0035);
  EXPECT_EQ(host.iteration_seconds(BatchShape{}), 0.0);
  EXPECT_DOUBLE_EQ(host.iteration_seconds(decode_batch(1, 128)), 0.020 + 0.0001 + 0.0005 + 0.0035);
  BatchShape p;
  p.add_prefill_chunk(256, 0, false);
  EXPECT_DOUBLE_EQ(host.iteration_seconds(p), plain.iteration_seconds(p) + 0.0035);
  EXPECT_EQ(host.swap_seconds(64, 16), plain.swap_seconds(64, 16));
  EXPECT_NE(host.describe().find("iteration_overhead=0.0035s"), std::string::npos) << host.describe();
  EXPECT_EQ(plain.describe().find("iteration_overhead"), std::string::npos) << plain.describe();
  for (const double bad : {-0.001, std::numeric_limits<double>::infinity(), std::nan("")}) {
    try {
      ProfileCostModel m(example_path(), bad);
      ADD_FAILURE() << "accepted an iteration overhead of " << bad;
    } catch (const CostModelError& e) {
      EXPECT_NE(std::string(e.what()).find("expected a finite number of seconds >= 0"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("cost_profile_example.csv"), std::string::npos) << e.what();
    }
  }
}

TEST(CostProfile, InterpolatesBetweenGridPoints) {
  const ProfileCostModel m(example_path());
  // Mean context 576 is half-way between 128 and 1024.
  const double attn_32 = 0.0008 + 0.5 * (0.0064 - 0.0008);
  EXPECT_NEAR(m.iteration_seconds(decode_batch(32, 576)),
              lerp(1, 0.020, 256, 0.024, 32) + attn_32 + lerp(1, 0.0005, 256, 0.0030, 32),
              1e-15);
  // Mixed contexts: only the mean matters (100 and 1052 average to 576).
  BatchShape mixed;
  for (int i = 0; i < 16; ++i) {
    mixed.add_decode_seq(100);
    mixed.add_decode_seq(1052);
  }
  EXPECT_NEAR(m.iteration_seconds(mixed), m.iteration_seconds(decode_batch(32, 576)), 1e-15);
  // Bilinear centre of the attn_decode cell: the mean of its four corners. The batch of
  // 16.5 sequences is not integral, so check through a grid built the same way.
  const BilinearGrid g({1, 32}, {128, 1024}, {0.0001, 0.0004, 0.0008, 0.0064});
  EXPECT_DOUBLE_EQ(g(16.5, 576), (0.0001 + 0.0004 + 0.0008 + 0.0064) / 4);
  EXPECT_NEAR(m.swap_seconds(32, 16), lerp(1, 0.00005, 64, 0.0021, 32), 1e-15);
}

TEST(CostProfile, ExtrapolatesLinearlyBeyondTheGrid) {
  const ProfileCostModel m(example_path());
  BatchShape p;
  p.add_prefill_chunk(4096, 0, true);
  const double pairs = 4096.0 * 4097 / 2;  // 8.4e6, past the last attn_prefill point
  EXPECT_NEAR(m.iteration_seconds(p),
              lerp(256, 0.024, 2048, 0.088, 4096) + lerp(1e6, 0.001, 4e6, 0.004, pairs) + 0.0005,
              1e-15);
  EXPECT_NEAR(m.swap_seconds(128, 16), lerp(1, 0.00005, 64, 0.0021, 128), 1e-15);
  // Block size has a single grid value: constant along it.
  EXPECT_DOUBLE_EQ(m.swap_seconds(64, 32), 0.0021);
}

TEST(CostProfile, ClampsNegativeExtrapolationAtZero) {
  const ProfileCostModel m(
      "part,x,y,seconds\n"
      "linear,100,,0.001\nlinear,200,,0.010\n"
      "attn_prefill,10,,1\n"
      "attn_decode,1,1,0\n"
      "swap,10,16,0.001\nswap,20,16,0.003\n",
      "inline.csv");
  EXPECT_FALSE(m.has_lm_head());
  EXPECT_EQ(m.iteration_seconds(decode_batch(1, 1)), 0.0);  // linear(1) < 0 clamps to 0
  EXPECT_EQ(m.swap_seconds(1, 16), 0.0);
  EXPECT_DOUBLE_EQ(m.iteration_seconds(decode_batch(150, 1)), 0.0055);
}

TEST(CostProfile, AcceptsCommentsBlankLinesSpacesAndCrlf) {
  const ProfileCostModel m(
      "# a comment\r\n\r\n part , x , y , seconds \r\n"
      "  # indented comment\r\n"
      "linear , 1 , , 2e-2\r\n"
      "attn_prefill,0,,0\r\n"
      "attn_decode,1,128,1e-4\r\n"
      "swap,1,16,5e-5",  // no final newline
      "crlf.csv");
  EXPECT_DOUBLE_EQ(m.iteration_seconds(decode_batch(1, 128)), 0.0201);
}

// Parses `text` as "bad.csv" and returns the error it must raise.
ProfileFormatError error_of(const std::string& text) {
  try {
    ProfileCostModel m(text, "bad.csv");
  } catch (const ProfileFormatError& e) {
    std::printf("  %s\n", e.what());
    return e;
  }
  ADD_FAILURE() << "no ProfileFormatError for:\n" << text;
  return ProfileFormatError("", 0, "", "", "");
}

const std::string kHeader = "part,x,y,seconds\n";
const std::string kValidRest =
    "attn_prefill,0,,0\nattn_decode,1,128,1e-4\nswap,1,16,5e-5\n";

void expect_error(const ProfileFormatError& e, std::int64_t line, const std::string& column,
                  const std::string& in_what) {
  EXPECT_EQ(e.file(), "bad.csv");
  EXPECT_EQ(e.line(), line);
  EXPECT_EQ(e.column(), column);
  const std::string what = e.what();
  const std::string where = line > 0 ? "bad.csv:" + std::to_string(line) + ":" : "bad.csv:";
  EXPECT_EQ(what.rfind(where, 0), 0u) << what;
  EXPECT_NE(what.find(in_what), std::string::npos) << what;
  if (!column.empty()) {
    EXPECT_NE(what.find("column '" + column + "'"), std::string::npos) << what;
  }
}

TEST(CostProfile, MalformedHeader) {
  expect_error(error_of("# profile\nphase,x,y,seconds\nlinear,1,,0.1\n"), 2, "",
               "expected the header 'part,x,y,seconds'");
}

TEST(CostProfile, MalformedFieldCount) {
  expect_error(error_of(kHeader + "linear,1,,0.1\nlinear,2,0.2\n" + kValidRest), 3, "",
               "found 3 fields in 'linear,2,0.2', expected 4 fields");
}

TEST(CostProfile, MalformedUnknownPart) {
  expect_error(error_of(kHeader + "linear,1,,0.1\nmlp,1,,0.1\n" + kValidRest), 3, "part",
               "found 'mlp', expected one of linear, moe, attn_prefill, attn_decode, lm_head, swap");
}

TEST(CostProfile, MalformedNumbers) {
  expect_error(error_of(kHeader + "linear,ten,,0.1\n" + kValidRest), 2, "x",
               "found 'ten', expected a finite number >= 0 (tokens in the batch)");
  expect_error(error_of(kHeader + "linear,1,,0.1s\n" + kValidRest), 2, "seconds", "'0.1s'");
  expect_error(error_of(kHeader + "linear,1,,-0.1\n" + kValidRest), 2, "seconds", "'-0.1'");
  expect_error(error_of(kHeader + "linear,1,,inf\n" + kValidRest), 2, "seconds", "'inf'");
  expect_error(error_of(kHeader + "linear,1,,\n" + kValidRest), 2, "seconds", "found ''");
  expect_error(error_of(kHeader + "linear,1,,1\nattn_decode,4,nan,1\n" + kValidRest), 3, "y",
               "mean context tokens per decode sequence");
}

TEST(CostProfile, MalformedYForOneDimensionalPart) {
  expect_error(error_of(kHeader + "linear,1,7,0.1\n" + kValidRest), 2, "y",
               "found '7', expected an empty field (part 'linear' is indexed by x only)");
}

TEST(CostProfile, MalformedMissingYForTwoDimensionalPart) {
  expect_error(error_of(kHeader + "linear,1,,0.1\nswap,4,,0.1\n" + kValidRest), 3, "y",
               "found '', expected a finite number >= 0 (block size in tokens)");
}

TEST(CostProfile, MalformedDuplicatePoint) {
  expect_error(
      error_of(kHeader + "linear,1,,0.1\nlinear,2,,0.2\nlinear,1,,0.3\n" + kValidRest), 4, "x",
      "found a second 'linear' row at x=1, expected one row per grid point (first at line 2)");
  expect_error(error_of(kHeader + "linear,1,,0.1\n" + kValidRest + "attn_decode,1,128,2\n"), 6,
               "x", "'attn_decode' row at x=1 y=128");
}

TEST(CostProfile, MalformedIncompleteGrid) {
  expect_error(error_of(kHeader + "linear,1,,0.1\nattn_prefill,0,,0\nswap,1,16,5e-5\n"
                                  "attn_decode,1,128,1\nattn_decode,1,256,2\n"
                                  "attn_decode,8,256,3\n"),
               5, "", "found no 'attn_decode' row for x=8 y=128, expected a full grid");
}

TEST(CostProfile, MalformedMissingPart) {
  expect_error(error_of(kHeader + "linear,1,,0.1\nattn_prefill,0,,0\nattn_decode,1,128,1\n"), 0,
               "part",
               "found no 'swap' rows, expected at least one row for each of linear, "
               "attn_prefill, attn_decode, swap");
}

// A table in which every iteration would take no time means nothing; an overhead, or one part
// with a time, makes it usable (swap times do not count: they are not iterations).
TEST(CostProfile, AllZeroIterationTimesAreRefusedWithoutAnOverhead) {
  const std::string zeros = kHeader + "linear,1,,0\nlinear,256,,0\nattn_prefill,0,,0\nattn_decode,1,128,0\n"
                                      "swap,1,16,5e-5\n";
  expect_error(error_of(zeros), 0, "seconds", "found 0 in every linear, moe, attn_prefill, attn_decode and lm_head row");
  EXPECT_NO_THROW(ProfileCostModel(zeros, "zeros.csv", 0.001));
  const std::string one = kHeader + "linear,1,,0\nlinear,256,,0\nattn_prefill,0,,0\nattn_decode,1,128,1e-6\n"
                                    "swap,1,16,0\n";
  EXPECT_GT(ProfileCostModel(one, "one.csv").iteration_seconds(decode_batch(1, 128)), 0.0);
}

// An MoE model's table: linear holds the layers' other GEMMs, moe the MoE blocks, both at the
// batch's tokens; iteration = linear(N) + moe(N) + attention + lm_head.
const std::string kMoeTable = kHeader +
                              "linear,1,,0.010\nlinear,256,,0.012\n"
                              "moe,1,,0.020\nmoe,16,,0.035\nmoe,256,,0.050\n"
                              "attn_prefill,0,,0\nattn_prefill,1000000,,0.001\n"
                              "attn_decode,1,128,0.0001\nattn_decode,1,1024,0.0004\n"
                              "attn_decode,32,128,0.0010\nattn_decode,32,1024,0.0064\n"
                              "swap,1,16,5e-5\n";

TEST(CostProfile, MoePartPricesEveryIterationByItsTokens) {
  const ProfileCostModel m(kMoeTable, "moe.csv");
  EXPECT_TRUE(m.has_moe());
  EXPECT_FALSE(m.has_lm_head());
  EXPECT_NE(m.describe().find("moe=measured"), std::string::npos) << m.describe();
  EXPECT_EQ(m.iteration_seconds(BatchShape{}), 0.0);
  // One decode of 128 tokens of context: linear(1) + moe(1) + attn_decode(1, 128).
  EXPECT_DOUBLE_EQ(m.iteration_seconds(decode_batch(1, 128)), 0.010 + 0.020 + 0.0001);
  // 16 decodes: linear(16) interpolates, moe(16) is a grid point, attn_decode(16, 1024)
  // interpolates between 1 and 32 sequences.
  EXPECT_DOUBLE_EQ(m.iteration_seconds(decode_batch(16, 1024)),
                   lerp(1, 0.010, 256, 0.012, 16) + 0.035 + lerp(1, 0.0004, 32, 0.0064, 16));
  // A 100-token prefill chunk: linear(100) + moe(100, between 16 and 256) + attn_prefill.
  BatchShape p;
  p.add_prefill_chunk(100, 0, false);
  EXPECT_DOUBLE_EQ(m.iteration_seconds(p), lerp(1, 0.010, 256, 0.012, 100) + lerp(16, 0.035, 256, 0.050, 100) +
                                               lerp(0, 0, 1e6, 0.001, 100.0 * 101 / 2));
  // Beyond the grid the last segment extends: moe(512) = 0.050 + 256 · (0.015 / 240).
  BatchShape big;
  big.add_prefill_chunk(512, 0, false);
  EXPECT_DOUBLE_EQ(m.iteration_seconds(big), lerp(1, 0.010, 256, 0.012, 512) + lerp(16, 0.035, 256, 0.050, 512) +
                                                 lerp(0, 0, 1e6, 0.001, 512.0 * 513 / 2));
}

TEST(CostProfile, MoeRowsMustMatchTheModel) {
  ModelSpec moe;
  moe.name = "tiny-moe";
  moe.layers = 4;
  moe.moe_layers = 2;
  ModelSpec dense;
  dense.name = "tiny-dense";
  dense.layers = 4;
  const ProfileCostModel with(kMoeTable, "moe.csv");
  EXPECT_NO_THROW(with.check_model(moe));
  const ProfileCostModel without(kHeader + "linear,1,,0.1\n" + kValidRest, "dense.csv");
  EXPECT_NO_THROW(without.check_model(dense));
  try {
    without.check_model(moe);
    FAIL() << "expected ProfileFormatError";
  } catch (const ProfileFormatError& e) {
    EXPECT_EQ(e.file(), "dense.csv");
    EXPECT_EQ(e.column(), "part");
    const std::string what = e.what();
    EXPECT_NE(what.find("found no 'moe' rows"), std::string::npos) << what;
    EXPECT_NE(what.find("tiny-moe: 2 of its 4 layers are MoE layers"), std::string::npos) << what;
  }
  try {
    with.check_model(dense);
    FAIL() << "expected ProfileFormatError";
  } catch (const ProfileFormatError& e) {
    EXPECT_EQ(e.file(), "moe.csv");
    EXPECT_NE(std::string(e.what()).find("tiny-dense, which has no MoE layers"), std::string::npos) << e.what();
  }
}

TEST(CostProfile, MalformedMoeRows) {
  expect_error(error_of(kHeader + "linear,1,,0.1\nmoe,1,5,0.1\n" + kValidRest), 3, "y",
               "found '5', expected an empty field (part 'moe' is indexed by x only)");
  expect_error(error_of(kHeader + "linear,1,,0.1\nmoe,1,,0.1\nmoe,1,,0.2\n" + kValidRest), 4, "x",
               "a second 'moe' row at x=1");
  expect_error(error_of(kHeader + "linear,1,,0.1\nmoe,-1,,0.1\n" + kValidRest), 3, "x",
               "found '-1', expected a finite number >= 0 (tokens in the batch)");
}

TEST(CostProfile, MalformedEmptyFile) {
  expect_error(error_of("# only a comment\n\n"), 0, "", "found no header line");
  expect_error(error_of(""), 0, "", "found no header line");
}

TEST(CostProfile, MissingFileNamesThePath) {
  try {
    ProfileCostModel m(std::filesystem::path("/nonexistent/profile.csv"));
    FAIL() << "expected ProfileFormatError";
  } catch (const ProfileFormatError& e) {
    EXPECT_EQ(e.file(), "/nonexistent/profile.csv");
    EXPECT_EQ(std::string(e.what()).rfind("/nonexistent/profile.csv: found no readable file", 0),
              0u)
        << e.what();
  }
}

}  // namespace
}  // namespace pagesim::sim
