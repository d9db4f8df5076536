// `pagesim validate` end to end on files: the table, the summary and the exit status;
// malformed files and bad settings as one-line errors; and, where a GPU is present, the CUDA
// kernels on the same batches (skipped with a message elsewhere).
#include "sim/validate/validate_command.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "sim/validate/validator.h"
#include "validate_test_backends.h"
#include "validate_test_support.h"

namespace pagesim::sim {
namespace {

using testing::correct_batch;
using testing::cuda_backend_linked;
using testing::cuda_device_usable;
using testing::header;
using testing::make_seq;
using testing::TempDir;
using testing::write_batch_file;
using testing::write_text;

struct Result {
  int status = -1;
  std::string out, err;
};

Result run(const ValidateOptions& o) {
  std::ostringstream out, err;
  const testing::TestBackends backends;
  Result r;
  r.status = run_validate_command(o, backends.all(), out, err);
  r.out = out.str();
  r.err = err.str();
  return r;
}

ValidateOptions options_for(const std::filesystem::path& file, const std::string& device = "cpu") {
  ValidateOptions o;
  o.file = file;
  o.device = device;
  return o;
}

// Batches with each planted fault, in file order: correct, corrupted table, missing CoW,
// bad prefix hit, block reused while referenced.
std::vector<SampledBatch> fault_batches() {
  std::vector<SampledBatch> v;
  v.push_back(correct_batch());
  v.push_back(correct_batch());
  v.back().sequences[1].block_table[2] = 9;
  v.push_back(correct_batch());
  v.back().sequences[2].block_table[1] = 21;
  v.push_back(correct_batch());
  v.back().sequences.push_back(make_seq(4, 0, {3, 40}, {{"h200", 0, 4}, {"p4", 4, 3}}));
  v.push_back(SampledBatch{});
  v.back().sequences = {make_seq(5, 0, {30, 31}, {{"p5", 0, 7}}), make_seq(6, 0, {31, 32}, {{"p6", 0, 6}})};
  for (std::size_t i = 0; i < v.size(); ++i) v[i].iteration = 100 + static_cast<std::int64_t>(i);
  return v;
}

TEST(ValidateCommand, AllPassExitsZero) {
  TempDir dir("validate_cmd_pass");
  SampledBatch prefill = correct_batch();
  prefill.iteration = 7;
  prefill.sequences.push_back(make_seq(9, 0, {60, 61}, {{"p9", 0, 6}}, 6));
  const auto file = write_batch_file(dir.path(), "batches.jsonl", header(), {correct_batch(), prefill});
  const Result r = run(options_for(file));
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_TRUE(r.err.empty()) << r.err;
  EXPECT_NE(r.out.find("allocator paged, experiment hand-built, block size 4, 64 blocks, 2 batches"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("device cpu, f32, 4 query heads / 2 KV heads, head_dim 64"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("max_abs_err"), std::string::npos);
  EXPECT_NE(r.out.find("decode"), std::string::npos);
  EXPECT_NE(r.out.find("prefill"), std::string::npos);
  EXPECT_NE(r.out.find("summary: 2 of 2 batches pass (0 fail)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("PASS"), std::string::npos);
  EXPECT_EQ(r.out.find("FAIL"), std::string::npos);
}

TEST(ValidateCommand, PlantedFaultsFailAndAreNamed) {
  TempDir dir("validate_cmd_faults");
  const auto file = write_batch_file(dir.path(), "batches.jsonl", header(), fault_batches());
  const Result r = run(options_for(file));
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find("summary: 1 of 5 batches pass (4 fail)"), std::string::npos) << r.out;
  // One row per batch; every faulty one names its worst element.
  std::istringstream lines(r.out);
  std::string line;
  int fails = 0;
  while (std::getline(lines, line)) {
    if (line.find("FAIL (") != std::string::npos) {
      ++fails;
      EXPECT_NE(line.find("worst: sequence"), std::string::npos) << line;
    }
  }
  EXPECT_EQ(fails, 4) << r.out;
  EXPECT_NE(r.out.find("request 1 seq 0, position 9"), std::string::npos) << r.out;  // corrupted table
  EXPECT_NE(r.out.find("request 3 seq 0"), std::string::npos) << r.out;              // missing CoW
  EXPECT_NE(r.out.find("request 5 seq 0"), std::string::npos) << r.out;              // reused block
}

TEST(ValidateCommand, BatchErrorsFailTheRunButOthersStillRun) {
  TempDir dir("validate_cmd_batch_error");
  SampledBatch bad = correct_batch();
  bad.sequences[0].block_table[0] = 500;
  const auto file = write_batch_file(dir.path(), "b.jsonl", header(), {bad, correct_batch()});
  const Result r = run(options_for(file));
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.out.find("FAIL (error: sequence 0 (request 1, seq 0): block_table[0] = 500 is outside [0, 64)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("summary: 1 of 2 batches pass"), std::string::npos) << r.out;
}

TEST(ValidateCommand, BlockSizeOneAndSettings) {
  TempDir dir("validate_cmd_b1");
  SampledBatch b;
  b.sequences.push_back(make_seq(1, 0, {5, 6, 7, 8, 9}, {{"p1", 0, 5}}));
  b.sequences.push_back(make_seq(2, 0, {0, 1, 2}, {{"p2", 0, 3}}, 2));
  const auto file = write_batch_file(dir.path(), "b1.jsonl", header(1, 10), {b});
  ValidateOptions o = options_for(file);
  o.num_q_heads = 8;
  o.num_kv_heads = 8;
  o.head_dim = 32;
  o.dtype = "bf16";
  o.seed = 5;
  const Result r = run(o);
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("device cpu, bf16, 8 query heads / 8 KV heads, head_dim 32, seed 5"), std::string::npos)
      << r.out;
}

TEST(ValidateCommand, MalformedFilesAreOneLineErrors) {
  TempDir dir("validate_cmd_malformed");
  const std::string head = to_json_line(header()) + "\n";
  struct Case {
    std::string name, text, expected;
  };
  const std::vector<Case> cases = {
      {"empty.jsonl", "", "empty file"},
      {"notjson.jsonl", head + "{not json\n", "notjson.jsonl:2: not valid JSON"},
      {"format.jsonl", R"({"format": "other", "version": 1, "block_size": 16, "num_blocks": 4})" "\n",
       "not a pagesim batch file"},
      {"nokey.jsonl", head + R"({"iteration": 1, "sequences": []})" "\n", "missing key 'time_s'"},
      {"gap.jsonl",
       head + R"({"iteration": 1, "time_s": 0, "sequences": [{"request": 1, "seq": 0, "kv_len": 4,)"
              R"( "query_len": 1, "block_table": [0], "tokens": [{"start": 1, "length": 4, "origin": "p1",)"
              R"( "offset": 0}]}]})" "\n",
       "without gaps"},
      {"short_table.jsonl",
       head + R"({"iteration": 1, "time_s": 0, "sequences": [{"request": 1, "seq": 0, "kv_len": 9,)"
              R"( "query_len": 1, "block_table": [0, 1], "tokens": [{"start": 0, "length": 9, "origin": "p1",)"
              R"( "offset": 0}]}]})" "\n",
       "2 blocks cannot hold 9 tokens"},
      // Batches that would pass having checked nothing: no sequence, or one with no query.
      {"no_sequences.jsonl", head + R"({"iteration": 7, "time_s": 0, "sequences": []})" "\n",
       "no_sequences.jsonl:2: batch of iteration 7: key 'sequences': expected at least one sequence, found an empty "
       "list"},
      {"query_zero.jsonl",
       head + R"({"iteration": 1, "time_s": 0, "sequences": [{"request": 1, "seq": 3, "kv_len": 4,)"
              R"( "query_len": 0, "block_table": [0], "tokens": [{"start": 0, "length": 4, "origin": "p1",)"
              R"( "offset": 0}]}]})" "\n",
       "query_zero.jsonl:2: sequence 3: key 'query_len': expected an integer >= 1 (the tokens that attend), found 0"},
      {"query_over_kv.jsonl",
       head + R"({"iteration": 1, "time_s": 0, "sequences": [{"request": 1, "seq": 0, "kv_len": 4,)"
              R"( "query_len": 5, "block_table": [0], "tokens": [{"start": 0, "length": 4, "origin": "p1",)"
              R"( "offset": 0}]}]})" "\n",
       "query_over_kv.jsonl:2: sequence 0: expected 1 <= query_len <= kv_len, found 5 and 4"},
      {"negative_kv.jsonl",
       head + R"({"iteration": 1, "time_s": 0, "sequences": [{"request": 1, "seq": 0, "kv_len": -1,)"
              R"( "query_len": 1, "block_table": [0], "tokens": []}]})" "\n",
       "negative_kv.jsonl:2: sequence 0: expected 1 <= query_len <= kv_len, found 1 and -1"},
      // A block of 2^31 - 1 slots per head would need terabytes (it ended in std::bad_alloc).
      {"huge_block.jsonl",
       R"({"format": "pagesim-batches", "version": 1, "block_size": 2147483647, "num_blocks": 4})" "\n"
       R"({"iteration": 1, "time_s": 0, "sequences": [{"request": 1, "seq": 0, "kv_len": 4,)"
       R"( "query_len": 1, "block_table": [0], "tokens": [{"start": 0, "length": 4, "origin": "p1",)"
       R"( "offset": 0}]}]})" "\n",
       "huge_block.jsonl:1: key 'block_size': expected an integer in [1, 65536] (tokens per block), found "
       "2147483647"},
  };
  for (const Case& c : cases) {
    const std::string& name = c.name;
    const auto file = write_text(dir.path(), name, c.text);
    const Result r = run(options_for(file));
    EXPECT_EQ(r.status, 1) << c.name;
    EXPECT_TRUE(r.out.empty()) << c.name << ": " << r.out;
    EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << c.name << ": " << r.err;
    EXPECT_NE(r.err.find(c.expected), std::string::npos) << c.name << ": " << r.err;
    EXPECT_NE(r.err.find(name), std::string::npos) << c.name << ": " << r.err;  // names the file
  }
  const Result missing = run(options_for(dir.path() / "nope.jsonl"));
  EXPECT_EQ(missing.status, 1);
  EXPECT_NE(missing.err.find("cannot open"), std::string::npos) << missing.err;
}

// A windowed header goes through the file (absent for causal, as every file before masks).
TEST(ValidateCommand, WindowedHeaderRoundTripsAndValidates) {
  EXPECT_EQ(to_json_line(header()).find("mask"), std::string::npos);
  TempDir dir("validate_cmd_window");
  BatchFileHeader h = header();
  h.mask = {kernels::MaskKind::kSlidingWindow, 5};
  EXPECT_NE(to_json_line(h).find(R"("mask":"sliding_window","window":5)"), std::string::npos) << to_json_line(h);
  SampledBatch b = correct_batch();
  b.sequences[0].block_table[0] = -1;
  const auto file = write_batch_file(dir.path(), "w.jsonl", h, {b});
  const BatchFile back = read_batch_file(file);
  EXPECT_EQ(back.header.mask.kind, kernels::MaskKind::kSlidingWindow);
  EXPECT_EQ(back.header.mask.window, 5);
  const Result r = run(options_for(file));
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  const std::string head = R"({"format": "pagesim-batches", "version": 1, "block_size": 4, "num_blocks": 64, )";
  const auto bad_kind = write_text(dir.path(), "k.jsonl", head + R"("mask": "diagonal", "window": 3})" "\n");
  EXPECT_NE(run(options_for(bad_kind)).err.find("mask is 'diagonal', expected causal, sliding_window or chunked_local"),
            std::string::npos);
  const auto bad_window = write_text(dir.path(), "w0.jsonl", head + R"("mask": "chunked_local", "window": 0})" "\n");
  EXPECT_NE(run(options_for(bad_window)).err.find("window must be >= 1"), std::string::npos);
}

// A latent (MLA) header goes through the file; validate runs it in every dtype, fp8 included.
TEST(ValidateCommand, LatentHeaderRoundTripsAndValidates) {
  EXPECT_EQ(to_json_line(header()).find("attention"), std::string::npos);
  TempDir dir("validate_cmd_latent");
  BatchFileHeader h = header();
  h.latent_dim = 24;
  h.value_dim = 16;
  EXPECT_NE(to_json_line(h).find(R"("attention":"latent","latent_dim":24,"value_dim":16)"), std::string::npos)
      << to_json_line(h);
  const auto file = write_batch_file(dir.path(), "l.jsonl", h, {correct_batch()});
  const BatchFile back = read_batch_file(file);
  EXPECT_EQ(back.header.latent_dim, 24);
  EXPECT_EQ(back.header.value_dim, 16);
  for (const char* dtype : {"f32", "bf16", "fp8"}) {
    ValidateOptions o = options_for(file);
    o.dtype = dtype;
    const Result r = run(o);
    EXPECT_EQ(r.status, 0) << dtype << ": " << r.out << r.err;
    EXPECT_NE(r.out.find("latent attention: 4 query heads over latent rows of 24 (value 16)"), std::string::npos)
        << r.out;
  }
  const std::string head = R"({"format": "pagesim-batches", "version": 1, "block_size": 4, "num_blocks": 64, )";
  const auto bad_kind = write_text(dir.path(), "k.jsonl", head + R"("attention": "sparse"})" "\n");
  EXPECT_NE(run(options_for(bad_kind)).err.find("key 'attention': expected standard or latent, found 'sparse'"),
            std::string::npos);
  const auto wide = write_text(dir.path(), "v.jsonl", head + R"("attention": "latent", "latent_dim": 8, "value_dim": 9})" "\n");
  EXPECT_NE(run(options_for(wide)).err.find("key 'value_dim': expected an integer in [1, latent_dim = 8], found 9"),
            std::string::npos);
  ValidateOptions fp8 = options_for(write_batch_file(dir.path(), "s.jsonl", header(), {correct_batch()}));
  fp8.dtype = "fp8";
  const Result refused = run(fp8);
  EXPECT_EQ(refused.status, 1);
  EXPECT_NE(refused.err.find("fp8 is a latent (MLA) cache's"), std::string::npos) << refused.err;
}

TEST(ValidateCommand, HeaderOnlyFileHasNothingToValidate) {
  TempDir dir("validate_cmd_header_only");
  const auto file = write_batch_file(dir.path(), "h.jsonl", header(), {});
  const Result r = run(options_for(file));
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("holds no batch"), std::string::npos) << r.err;
}

TEST(ValidateCommand, BadOptionsAreOneLineErrors) {
  TempDir dir("validate_cmd_options");
  const auto file = write_batch_file(dir.path(), "b.jsonl", header(), {correct_batch()});
  ValidateOptions o = options_for(file, "gpu");
  Result r = run(o);
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("--device: unknown device 'gpu', expected cpu or cuda"), std::string::npos) << r.err;
  o = options_for(file);
  o.dtype = "fp4";
  r = run(o);
  EXPECT_NE(r.err.find("--dtype: unknown dtype 'fp4', expected f32, f16, bf16 or fp8"), std::string::npos) << r.err;
  o = options_for(file);
  o.num_kv_heads = 3;
  r = run(o);
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("multiple of num_kv_heads (3)"), std::string::npos) << r.err;
}

TEST(ValidateCommand, CudaWithoutDeviceOrBuildIsAClearError) {
  std::string why;
  if (cuda_device_usable(&why)) GTEST_SKIP() << "a CUDA device is present: covered by the GPU test";
  TempDir dir("validate_cmd_nocuda");
  const auto file = write_batch_file(dir.path(), "b.jsonl", header(16, 64), {correct_batch()});
  const Result r = run(options_for(file, "cuda"));
  EXPECT_EQ(r.status, 1);
  const std::string expected = cuda_backend_linked() ? "no usable CUDA device" : "built without CUDA";
  EXPECT_NE(r.err.find(expected), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("use --device cpu"), std::string::npos) << r.err;
}

TEST(ValidateCommand, CudaRefusesUnsupportedBlockSize) {
  if (!cuda_backend_linked()) GTEST_SKIP() << "built without CUDA";
  TempDir dir("validate_cmd_cuda_bs");
  SampledBatch b;
  b.sequences.push_back(make_seq(1, 0, {0, 1}, {{"p1", 0, 20}}));
  const auto file = write_batch_file(dir.path(), "b.jsonl", header(12, 8), {b});
  const Result r = run(options_for(file, "cuda"));
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.err.find("block size 12 (file header) is not supported by the CUDA kernels"), std::string::npos)
      << r.err;
}

// The CUDA kernels on the same files: every fault fails, the correct batches pass, for
// decode and prefill, block sizes 1, 4 and 16, f32/f16/bf16.
TEST(ValidateCommandGpu, KernelsCatchThePlantedFaults) {
  std::string why;
  if (!cuda_device_usable(&why)) GTEST_SKIP() << "no CUDA device (" << why << "): GPU test skipped";
  TempDir dir("validate_cmd_gpu");
  const auto faults = write_batch_file(dir.path(), "faults.jsonl", header(), fault_batches());
  for (const std::string dtype : {"f32", "f16", "bf16"}) {
    ValidateOptions o = options_for(faults, "cuda");
    o.dtype = dtype;
    const Result r = run(o);
    EXPECT_EQ(r.status, 1) << dtype << "\n" << r.out << r.err;
    EXPECT_NE(r.out.find("summary: 1 of 5 batches pass (4 fail)"), std::string::npos) << dtype << "\n" << r.out;
  }
  SampledBatch prefill = correct_batch();
  prefill.sequences.push_back(make_seq(7, 0, {50, 51, 52, 53}, {{"p7", 0, 13}}, 5));
  SampledBatch b1;
  b1.sequences.push_back(make_seq(1, 0, {5, 6, 7, 8, 9}, {{"p1", 0, 5}}));
  b1.sequences.push_back(make_seq(2, 0, {0, 1, 2}, {{"p2", 0, 3}}, 2));
  std::vector<std::int32_t> long_blocks;
  for (std::int32_t i = 0; i < 125; ++i) long_blocks.push_back(200 - i);
  SampledBatch long_ctx;
  long_ctx.sequences.push_back(make_seq(3, 0, long_blocks, {{"p3", 0, 1990}, {"b3", 0, 10}}));
  const std::vector<std::pair<std::filesystem::path, std::string>> good = {
      {write_batch_file(dir.path(), "b4.jsonl", header(), {correct_batch(), prefill}), "block 4"},
      {write_batch_file(dir.path(), "b1.jsonl", header(1, 10), {b1}), "block 1"},
      {write_batch_file(dir.path(), "b16.jsonl", header(16, 256), {long_ctx}), "block 16"},
  };
  for (const auto& [file, label] : good) {
    for (const std::string dtype : {"f32", "f16", "bf16"}) {
      ValidateOptions o = options_for(file, "cuda");
      o.dtype = dtype;
      for (const std::int32_t d : {64, 128}) {
        o.head_dim = d;
        const Result r = run(o);
        EXPECT_EQ(r.status, 0) << label << " " << dtype << " d" << d << "\n" << r.out << r.err;
      }
    }
  }
}

}  // namespace
}  // namespace pagesim::sim
