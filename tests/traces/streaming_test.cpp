// Readers stream: they hand out a row before the rest of the file exists, and reading a large
// file does not grow memory with its size.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <future>
#include <thread>

#include "test_util.h"
#include "traces/mooncake_reader.h"
#include "traces/native_csv_reader.h"
#include "traces/native_csv_writer.h"

// Under AddressSanitizer (PAGESIM_SANITIZE_BUILD), whose quarantine makes RSS meaningless.
#if defined(PAGESIM_SANITIZE_BUILD)
#define PAGESIM_TEST_UNDER_ASAN 1
#endif

namespace pagesim::traces {
namespace {

using testing::ScratchDir;

// Through a FIFO, the writer holds back row 2 until the reader has returned row 1 (or 10 s
// pass). A reader that read its whole input up front would see row 2 written first.
template <class Reader>
void reads_row_before_the_next_exists(const std::string& header, const std::string& row1,
                                      const std::string& row2) {
  ScratchDir dir;
  const std::string fifo = dir.path("pipe");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::promise<void> got_row1;
  std::atomic<bool> row2_written{false};
  std::thread writer([&] {
    std::ofstream out(fifo, std::ios::binary);
    out << header << row1 << std::flush;
    got_row1.get_future().wait_for(std::chrono::seconds(10));
    row2_written = true;
    out << row2 << std::flush;
  });
  {
    Reader reader(fifo);
    const auto first = reader.next();
    const bool row2_was_written = row2_written;
    got_row1.set_value();
    ASSERT_TRUE(first);
    EXPECT_EQ(first->id, 0u);
    EXPECT_FALSE(row2_was_written) << "the reader waited for the whole input";
    writer.join();
    const auto second = reader.next();
    ASSERT_TRUE(second);
    EXPECT_EQ(second->id, 1u);
    EXPECT_FALSE(reader.next());
  }
}

TEST(Streaming, NativeReaderReturnsRowsAsTheyArrive) {
  reads_row_before_the_next_exists<NativeCsvReader>("arrival_s,prompt_tokens,output_tokens\n",
                                                    "0,1,1\n", "1,2,2\n");
}

TEST(Streaming, MooncakeReaderReturnsLinesAsTheyArrive) {
  reads_row_before_the_next_exists<MooncakeReader>(
      "", "{\"timestamp\": 0, \"input_length\": 1, \"output_length\": 1, \"hash_ids\": [0]}\n",
      "{\"timestamp\": 1, \"input_length\": 1, \"output_length\": 1, \"hash_ids\": [1]}\n");
}

#if !defined(PAGESIM_TEST_UNDER_ASAN)
// Resident set size in bytes, from /proc/self/statm.
std::int64_t rss_bytes() {
  std::ifstream statm("/proc/self/statm");
  std::int64_t pages = 0, resident = 0;
  statm >> pages >> resident;
  return resident * static_cast<std::int64_t>(::sysconf(_SC_PAGESIZE));
}
#endif

TEST(Streaming, LargeFileReadsInBoundedMemory) {
#if defined(PAGESIM_TEST_UNDER_ASAN)
  GTEST_SKIP() << "AddressSanitizer's quarantine makes RSS meaningless";
#else
  ScratchDir dir;
  const std::string path = dir.path("big.csv");
  constexpr std::uint64_t kRows = 1'000'000;
  {
    NativeCsvWriter w(path, NativeCsvColumns{true, true, true});
    for (std::uint64_t i = 0; i < kRows; ++i) {
      w.write(TraceRequest{i, static_cast<double>(i) * 0.001, 1000 + static_cast<std::int64_t>(i % 7000),
                           static_cast<std::int64_t>(i % 513), 1, 1, {i, i + 1, i + 2, i + 3}});
    }
    w.commit();
  }
  const auto file_bytes = static_cast<std::int64_t>(std::filesystem::file_size(path));
  ASSERT_GT(file_bytes, 40'000'000);
  NativeCsvReader reader(path);
  const std::int64_t base = rss_bytes();
  std::int64_t peak = base;
  std::uint64_t n = 0;
  while (auto r = reader.next()) {
    if (++n % 50'000 == 0) peak = std::max(peak, rss_bytes());
  }
  EXPECT_EQ(n, kRows);
  EXPECT_LT(peak - base, 4 << 20) << "file " << file_bytes << " bytes";
#endif
}

}  // namespace
}  // namespace pagesim::traces
