#include "traces/native_csv_writer.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "test_util.h"
#include "traces/make_source.h"
#include "traces/native_csv_reader.h"
#include "traces/vector_source.h"

namespace pagesim::traces {
namespace {

using testing::drain;
using testing::ScratchDir;

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::size_t files_in(const std::string& dir) {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++n;
  return n;
}

TEST(NativeCsvWriter, WritesTheDocumentedFormat) {
  ScratchDir dir;
  const std::string p = dir.path("out.csv");
  NativeCsvWriter w(p, NativeCsvColumns{true, true, true});
  w.write(TraceRequest{0, 0.0, 12, 5, 1, 1, {7, 8}});
  w.write(TraceRequest{1, 0.1, 7, 0, 2, 1, {}});
  w.write(TraceRequest{2, 0.1, 7, 0, 1, 4, {}});
  w.commit();
  EXPECT_EQ(w.rows_written(), 3u);
  EXPECT_EQ(slurp(p),
            "arrival_s,prompt_tokens,output_tokens,n,beam_width,hash_ids\n"
            "0,12,5,1,1,7 8\n"
            "0.1,7,0,2,1,\n"
            "0.1,7,0,1,4,\n");
}

TEST(NativeCsvWriter, RoundTripsExactly) {
  ScratchDir dir;
  std::vector<TraceRequest> in = {
      {0, 0.0, 1, 0, 1, 1, {}},
      {1, 0.1 + 0.2, 2048, 4096, 3, 1, {0, 18446744073709551615ULL}},
      {2, 1.0 / 3.0, 5, 7, 1, 8, {1, 2, 3}},
      // n and beam_width at their largest, in separate rows: a request is one or the other.
      {3, 12345.678901234567, 4294967296, 4294967296, 2147483647, 1, {42}},
      {4, 12345.678901234567, 4294967296, 4294967296, 1, 2147483647, {42}},
      {5, 123456789.123456789, 3, 3, 1, 1, {}},
  };
  const std::string p = dir.path("rt.csv");
  VectorSource source(in);
  EXPECT_EQ(write_native_csv(p, source, NativeCsvColumns{true, true, true}), in.size());
  NativeCsvReader reader(p);
  EXPECT_EQ(drain(reader), in);
}

TEST(NativeCsvWriter, RoundTripsAGeneratedWorkload) {
  ScratchDir dir;
  WorkloadSpec spec;
  spec.arrival = {.kind = ArrivalKind::kGamma, .rate = 3.0, .cv = 2.5};
  spec.lengths.prompt = {.kind = LengthKind::kLognormal, .lo = 1, .hi = 4000, .median = 300.0,
                         .sigma = 1.2};
  spec.lengths.output = {.kind = LengthKind::kZipf, .lo = 1, .hi = 1000, .s = 1.1};
  spec.sampling = {{1.0, 1, 1}, {1.0, 4, 1}, {1.0, 1, 2}};
  spec.max_requests = 2000;
  spec.seed = 7;
  auto source = make_source(spec);
  const std::string p = dir.path("gen.csv");
  EXPECT_EQ(write_native_csv(p, *source), 2000u);
  NativeCsvReader reader(p);
  auto again = make_source(spec);
  EXPECT_EQ(drain(reader), drain(*again));
}

TEST(NativeCsvWriter, DestinationAppearsOnlyAtCommit) {
  ScratchDir dir;
  const std::string p = dir.write("out.csv", "old contents\n");
  {
    NativeCsvWriter w(p);
    w.write(TraceRequest{0, 1.0, 2, 3});
    EXPECT_EQ(slurp(p), "old contents\n");  // readers still see the old file
    EXPECT_EQ(files_in(dir.path("")), 2u);  // ... and the temporary one beside it
    w.commit();
  }
  EXPECT_EQ(slurp(p), "arrival_s,prompt_tokens,output_tokens,n,beam_width\n1,2,3,1,1\n");
  EXPECT_EQ(files_in(dir.path("")), 1u);
}

TEST(NativeCsvWriter, AbandonedWriterLeavesNothing) {
  ScratchDir dir;
  const std::string p = dir.path("never.csv");
  {
    NativeCsvWriter w(p);
    w.write(TraceRequest{0, 1.0, 2, 3});
  }
  EXPECT_FALSE(std::filesystem::exists(p));
  EXPECT_EQ(files_in(dir.path("")), 0u);
}

TEST(NativeCsvWriter, FailedSourceLeavesDestinationUntouched) {
  ScratchDir dir;
  const std::string p = dir.write("out.csv", "old\n");
  const std::string bad = dir.write("bad.csv", "arrival_s,prompt_tokens,output_tokens\n0,1,1\n0,x,1\n");
  NativeCsvReader reader(bad);
  EXPECT_THROW(write_native_csv(p, reader), TraceError);
  EXPECT_EQ(slurp(p), "old\n");
  EXPECT_EQ(files_in(dir.path("")), 2u);
}

TEST(NativeCsvWriter, RefusesValuesTheColumnsCannotHold) {
  ScratchDir dir;
  const std::string p = dir.path("out.csv");
  NativeCsvWriter w(p, NativeCsvColumns{false, false, false});
  w.write(TraceRequest{0, 0.0, 1, 1});
  auto e = testing::catch_trace_error([&] { w.write(TraceRequest{1, 0.0, 1, 1, 2, 1, {}}); });
  ASSERT_TRUE(e);
  EXPECT_EQ(std::string(e->what()),
            p + ":3: column 'n': expected 1 (the file has no n column), found 2");
  e = testing::catch_trace_error([&] { w.write(TraceRequest{1, 0.0, 1, 1, 1, 2, {}}); });
  ASSERT_TRUE(e);
  EXPECT_NE(std::string(e->what()).find("no beam_width column"), std::string::npos);
  e = testing::catch_trace_error([&] { w.write(TraceRequest{1, 0.0, 1, 1, 1, 1, {5}}); });
  ASSERT_TRUE(e);
  EXPECT_NE(std::string(e->what()).find("no hash_ids column"), std::string::npos);
}

TEST(NativeCsvWriter, RefusesInvalidRequests) {
  ScratchDir dir;
  NativeCsvWriter w(dir.path("out.csv"));
  w.write(TraceRequest{0, 5.0, 1, 1});
  EXPECT_THROW(w.write(TraceRequest{1, 4.0, 1, 1}), TraceError);   // backwards
  EXPECT_THROW(w.write(TraceRequest{1, 6.0, 0, 1}), TraceError);   // zero prompt
  EXPECT_THROW(w.write(TraceRequest{1, 6.0, 1, -1}), TraceError);  // negative output
  EXPECT_THROW(w.write(TraceRequest{1, 6.0, 1, 1, 0, 1, {}}), TraceError);
  // n and beam_width both above 1: the row NativeCsvReader refuses is not written either.
  const auto e = testing::catch_trace_error([&] { w.write(TraceRequest{1, 6.0, 1, 1, 4, 4, {}}); });
  ASSERT_TRUE(e);
  EXPECT_EQ(std::string(e->what()),
            w.path() + ":3: columns 'n' and 'beam_width': expected n = 1 or beam_width = 1 (a request is either "
                       "parallel sampling (n) or beam search (beam_width)), found n = 4 and beam_width = 4");
  EXPECT_THROW(w.write(TraceRequest{1, std::numeric_limits<double>::infinity(), 1, 1}),
               TraceError);
  EXPECT_EQ(w.rows_written(), 1u);
}

TEST(NativeCsvWriter, UnwritableDestinationIsATraceError) {
  ScratchDir dir;
  const std::string p = dir.path("no/such/dir/out.csv");
  const auto e = testing::catch_trace_error([&] { NativeCsvWriter w(p); });
  ASSERT_TRUE(e);
  EXPECT_EQ(e->file(), p);
  EXPECT_NE(std::string(e->what()).find("expected a writable temporary file"), std::string::npos);
}

}  // namespace
}  // namespace pagesim::traces
