// LineReader's line bound: a line of kMaxLineBytes is read whole, one byte more is a
// TraceError naming the file and the line; line endings and a missing final newline around
// the bound behave as for short lines; a file without newlines (/dev/zero) fails at line 1.
#include "traces/line_reader.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "test_util.h"
#include "traces/trace_error.h"

namespace pagesim::traces {
namespace {

using testing::ScratchDir;

constexpr std::size_t kMax = LineReader::kMaxLineBytes;

TEST(LineReader, ReadsALineOfTheLimit) {
  ScratchDir dir;
  const std::string longest(kMax, 'x');
  LineReader r(dir.write("t.txt", "a\r\n" + longest + "\nb"));  // CRLF, LF, no final newline
  std::string_view line;
  ASSERT_TRUE(r.next(&line));
  EXPECT_EQ(line, "a");
  ASSERT_TRUE(r.next(&line));
  EXPECT_EQ(line.size(), kMax);
  EXPECT_EQ(r.line_number(), 2);
  ASSERT_TRUE(r.next(&line));
  EXPECT_EQ(line, "b");
  EXPECT_FALSE(r.next(&line));
}

TEST(LineReader, ALongerLineNamesFileAndLine) {
  ScratchDir dir;
  const std::string path = dir.write("t.txt", "a\n" + std::string(kMax + 1, 'x') + "\n");
  LineReader r(path);
  std::string_view line;
  ASSERT_TRUE(r.next(&line));
  try {
    r.next(&line);
    FAIL() << "no error";
  } catch (const TraceError& e) {
    EXPECT_EQ(e.file(), path);
    EXPECT_EQ(e.line(), 2);
    EXPECT_NE(std::string(e.what()).find("at most 1048576 bytes"), std::string::npos) << e.what();
  }
}

TEST(LineReader, ALastLineOverTheLimitWithoutNewlineFails) {
  ScratchDir dir;
  LineReader r(dir.write("t.txt", std::string(kMax + 1, 'x')));
  std::string_view line;
  EXPECT_THROW(r.next(&line), TraceError);
}

TEST(LineReader, DevZeroEnds) {
  LineReader r("/dev/zero");
  std::string_view line;
  EXPECT_THROW(r.next(&line), TraceError);
}

}  // namespace
}  // namespace pagesim::traces
