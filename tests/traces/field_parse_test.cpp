// field_parse: trim drops leading and trailing spaces and tabs only; the parsers take a whole
// field, tell malformed text from text out of range, and refuse non-finite doubles.
#include "traces/field_parse.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>

namespace pagesim::traces {
namespace {

TEST(FieldParse, TrimDropsOnlyOuterSpacesAndTabs) {
  EXPECT_EQ(trim(""), "");
  EXPECT_EQ(trim(" "), "");
  EXPECT_EQ(trim(" \t \t"), "");
  EXPECT_EQ(trim("12"), "12");
  EXPECT_EQ(trim("  12\t"), "12");
  EXPECT_EQ(trim("\t1 2 "), "1 2");         // inner blanks stay
  EXPECT_EQ(trim("\r12\n"), "\r12\n");      // only spaces and tabs are blanks
  EXPECT_EQ(trim(std::string_view("\0 x", 3)), std::string_view("\0 x", 3));
  const std::string_view s = " a ";
  EXPECT_EQ(trim(s).data(), s.data() + 1);  // a view into the text, not a copy
}

TEST(FieldParse, IntegersTakeTheWholeField) {
  EXPECT_TRUE(parse_int64("42").ok());
  EXPECT_EQ(parse_int64("-7").value, -7);
  EXPECT_EQ(parse_int64("42x").status, ParseStatus::kInvalid);
  EXPECT_EQ(parse_int64("").status, ParseStatus::kEmpty);
  EXPECT_EQ(parse_int64("+4").status, ParseStatus::kInvalid);
  EXPECT_EQ(parse_int64(" 4").status, ParseStatus::kInvalid);  // trim first
  EXPECT_EQ(parse_int64("99999999999999999999").status, ParseStatus::kOutOfRange);
  EXPECT_EQ(parse_uint64("-1").status, ParseStatus::kInvalid);
}

TEST(FieldParse, DoublesAreFinite) {
  EXPECT_EQ(parse_double("0.25").value, 0.25);
  EXPECT_EQ(parse_double("1e-3").value, 1e-3);
  EXPECT_EQ(parse_double("nan").status, ParseStatus::kInvalid);
  EXPECT_EQ(parse_double("inf").status, ParseStatus::kInvalid);
  EXPECT_EQ(parse_double("1e999").status, ParseStatus::kOutOfRange);
}

}  // namespace
}  // namespace pagesim::traces
