// ProgressReporter: the line it writes (bar, percentage, ETA), and where and how often it
// writes: never before the first interval, to the stream it was given (stderr in pagesim).
#include "sim/cli/progress_reporter.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>

namespace pagesim::sim::cli {
namespace {

TEST(ProgressLine, BarPercentageAndEta) {
  ProgressState s;
  s.fraction = 0.25;
  s.wall_s = 10;  // a quarter in 10 s: 30 s to go
  s.sim_now_s = 225;
  s.arrived = 900;
  s.finished = 850;
  EXPECT_EQ(progress_line(s, true),
            "[######..................]  25%, ETA 30 s; t = 225.0 s simulated, 900 requests arrived, 850 finished, "
            "10 s wall");
  s.points = 4;
  s.point = 1;
  s.label = "orca-pow2";
  s.wall_s = 600;  // 30 min to go
  EXPECT_EQ(progress_line(s, false),
            " 25%, ETA 30 min; point 2/4 orca-pow2: t = 225.0 s simulated, 900 requests arrived, 850 finished, "
            "10 min wall");
}

TEST(ProgressLine, UnknownFractionShowsCountsOnly) {
  ProgressState s;
  s.sim_now_s = 1.5;
  EXPECT_EQ(progress_line(s, true), "t = 1.5 s simulated, 0 requests arrived, 0 finished, 0 s wall");
  s.fraction = 1;
  EXPECT_EQ(progress_line(s, false).substr(0, 6), "100%; ");  // no ETA when done
}

std::string read_all(std::FILE* f) {
  std::rewind(f);
  std::string text;
  for (int c; (c = std::fgetc(f)) != EOF;) text += static_cast<char>(c);
  return text;
}

// Not a terminal: a plain line once `log_every_s` has passed, the fraction from the points'
// horizons (point 0 half done by time, point 1 a quarter by requests: 37.5% overall).
TEST(ProgressReporter, LogLinesComeAtTheirInterval) {
  std::FILE* f = std::tmpfile();
  ASSERT_NE(f, nullptr);
  ProgressReporter r({100.0, -400.0}, false, 0.05, f);
  ProgressFn p0 = r.for_point("a", 0, 2), p1 = r.for_point("b", 1, 2);
  p0(50, 10, 5);
  EXPECT_EQ(read_all(f), "");  // before the first interval
  std::this_thread::sleep_for(std::chrono::milliseconds(60));
  p1(3, 100, 90);
  const std::string text = read_all(f);
  EXPECT_EQ(text.rfind("pagesim:  38%, ETA ", 0), 0u) << text;
  EXPECT_NE(text.find("point 2/2 b: t = 3.0 s simulated, 100 requests arrived, 90 finished"), std::string::npos);
  EXPECT_EQ(text.back(), '\n');
  std::fclose(f);
}

}  // namespace
}  // namespace pagesim::sim::cli
