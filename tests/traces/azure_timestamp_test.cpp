#include "traces/azure_timestamp.h"

#include <gtest/gtest.h>

namespace pagesim::traces {
namespace {

constexpr std::int64_t kNs = 1'000'000'000;

std::int64_t ns(std::string_view text) {
  const TimestampParse t = parse_timestamp(text);
  EXPECT_TRUE(t.ok()) << text << ": " << t.error;
  return t.ns_since_epoch;
}

TEST(AzureTimestamp, ParsesExactlyToNanoseconds) {
  EXPECT_EQ(ns("1970-01-01 00:00:00"), 0);
  EXPECT_EQ(ns("2023-11-16 18:17:03"), 1700158623 * kNs);
  EXPECT_EQ(ns("2023-11-16 18:17:03.9799600"), 1700158623 * kNs + 979'960'000);
  EXPECT_EQ(ns("2023-11-16 18:17:03.5"), 1700158623 * kNs + 500'000'000);
  EXPECT_EQ(ns("2023-11-16 18:17:03.000000001"), 1700158623 * kNs + 1);
  EXPECT_EQ(ns("2023-11-16T18:17:03.25"), 1700158623 * kNs + 250'000'000);
  EXPECT_EQ(ns("1900-01-01 00:00:00"), -2208988800 * kNs);
  EXPECT_EQ(ns("2200-12-31 23:59:59"), 7289654399 * kNs);
}

TEST(AzureTimestamp, CalendarArithmetic) {
  EXPECT_EQ(ns("2024-02-29 00:00:00"), 1709164800 * kNs);  // leap day
  EXPECT_EQ(ns("2024-03-01 00:00:00") - ns("2024-02-28 00:00:00"), 2 * 86400 * kNs);
  EXPECT_EQ(ns("2023-03-01 00:00:00") - ns("2023-02-28 00:00:00"), 86400 * kNs);
  EXPECT_EQ(ns("2000-03-01 00:00:00") - ns("2000-02-28 00:00:00"), 2 * 86400 * kNs);  // 400-year rule
  EXPECT_EQ(ns("2100-03-01 00:00:00") - ns("2100-02-28 00:00:00"), 86400 * kNs);  // 100-year rule
  EXPECT_EQ(ns("2024-01-01 00:00:00") - ns("2023-12-31 23:59:59.9999999"), 100);
  EXPECT_EQ(ns("2023-11-17 00:00:00") - ns("2023-11-16 23:59:59.999999999"), 1);
}

TEST(AzureTimestamp, UtcOffsets) {
  EXPECT_EQ(ns("2024-05-10 00:00:00+00:00"), 1715299200 * kNs);
  EXPECT_EQ(ns("2024-05-10 00:00:00Z"), 1715299200 * kNs);
  EXPECT_EQ(ns("2024-05-10 00:00:00.004000+00:00"), 1715299200 * kNs + 4'000'000);
  EXPECT_EQ(ns("2024-05-10 01:30:00+01:30"), 1715299200 * kNs);
  EXPECT_EQ(ns("2024-05-09 22:00:00-02:00"), 1715299200 * kNs);
}

TEST(AzureTimestamp, SecondsBetweenIsExact) {
  const std::int64_t a = ns("2023-11-16 18:17:03.9799600");
  EXPECT_EQ(seconds_between(a, ns("2023-11-16 18:17:04.0319600")), 0.052);
  EXPECT_EQ(seconds_between(a, ns("2023-11-16 19:14:19.6582360")), 3435.678276);
  EXPECT_EQ(seconds_between(a, a), 0.0);
  EXPECT_EQ(seconds_between(ns("2023-11-16 18:17:04"), a), -0.02004);
}

struct BadStamp {
  const char* text;
  const char* error;
};

class AzureBadTimestamp : public ::testing::TestWithParam<BadStamp> {};

TEST_P(AzureBadTimestamp, IsRejectedWithAReason) {
  const TimestampParse t = parse_timestamp(GetParam().text);
  EXPECT_FALSE(t.ok());
  EXPECT_NE(t.error.find(GetParam().error), std::string::npos) << t.error;
}

constexpr const char* kForm = "a timestamp 'YYYY-MM-DD hh:mm:ss[.fraction][Z|+hh:mm|-hh:mm]'";

INSTANTIATE_TEST_SUITE_P(
    Cases, AzureBadTimestamp,
    ::testing::Values(BadStamp{"", kForm}, BadStamp{"2023-11-16", kForm},
                      BadStamp{"2023/11/16 18:17:03", kForm}, BadStamp{"23-11-16 18:17:03", kForm},
                      BadStamp{"2023-11-16 18:17", kForm}, BadStamp{"2023-11-16 8:17:03", kForm},
                      BadStamp{"2023-11-16 18:17:03.", kForm},
                      BadStamp{"2023-11-16 18:17:03,5", kForm},
                      BadStamp{"2023-11-16 18:17:03 ", kForm},
                      BadStamp{"2023-11-16 18:17:03.5x", kForm},
                      BadStamp{"2023-11-16 18:17:03+0100", kForm},
                      BadStamp{"+023-11-16 18:17:03", kForm},
                      BadStamp{"2023-11-16 18:17:03.1234567891", "at most 9 digits"},
                      BadStamp{"2023-13-01 00:00:00", "there is no 2023-13-01"},
                      BadStamp{"2023-02-29 00:00:00", "there is no 2023-02-29"},
                      BadStamp{"2023-04-31 00:00:00", "there is no 2023-04-31"},
                      BadStamp{"2023-00-10 00:00:00", "there is no 2023-00-10"},
                      BadStamp{"2023-11-16 24:00:00", "between 00:00:00 and 23:59:59"},
                      BadStamp{"2023-11-16 23:60:00", "between 00:00:00 and 23:59:59"},
                      BadStamp{"2016-12-31 23:59:60", "between 00:00:00 and 23:59:59"},
                      BadStamp{"2023-11-16 18:17:03+24:00", "UTC offset"},
                      BadStamp{"1899-12-31 23:59:59", "a year between 1900 and 2200"},
                      BadStamp{"9999-01-01 00:00:00", "a year between 1900 and 2200"}));

}  // namespace
}  // namespace pagesim::traces
