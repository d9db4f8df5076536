// The records' outputs come from one field list each: for every record, the CSV header, the
// CSV row and the JSON object name the same fields in the same order; a sample record
// round-trips through its CSV row; the memory classes have one order everywhere (the drift
// between iterations.csv and summary.json is gone) and their percentages sum to 100; a
// summary read back from its JSON text dumps to the same text (what --resume relies on).
#include <gtest/gtest.h>

#include <cstdint>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "allocator/memory_breakdown.h"
#include "sim/core/iteration_sample.h"
#include "sim/metrics/memory_pct.h"
#include "sim/metrics/metrics.h"
#include "sim/output/record_fields.h"
#include "sim/metrics/request_record.h"
#include "sim/metrics/summary.h"

namespace pagesim::sim {
namespace {

std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream ss(line);
  for (std::string cell; std::getline(ss, cell, ',');) out.push_back(cell);
  return out;
}

template <Record R>
std::string csv_row(const R& r) {
  fmt::memory_buffer buf;
  append_csv_row(buf, r);
  return fmt::to_string(buf);
}

// The last segment of each flattened JSON key ("memory.token_states" -> "token_states"):
// a nested record's CSV columns carry their own names.
template <Record R>
std::vector<std::string> json_leaf_keys(const R& r) {
  std::vector<std::string> out;
  for (const auto& [k, v] : flatten(record_json(r))) out.push_back(k.substr(k.rfind('.') + 1));
  return out;
}

IterationSample distinct_sample() {
  IterationSample s;
  s.index = 7;
  s.start_s = 1.25;
  s.duration_s = 0.0375;
  s.batch_requests = 3;
  s.batch_seqs = 5;
  s.prefill_tokens = 11;
  s.decode_tokens = 13;
  s.waiting = 17;
  s.running = 19;
  s.swapped = 23;
  s.memory.token_states = 400;
  s.memory.reserved = 250;
  s.memory.over_reserved = 150;
  s.memory.rounding = 100;
  s.memory.free = 100;
  s.memory.cached_free = 40;
  s.unusable_free = 60;
  s.logical_blocks = 29;
  s.physical_blocks = 31;
  s.swap_out_blocks = 37;
  s.swap_in_blocks = 41;
  s.preemptions = 43;
  return s;
}

RequestRecord distinct_request() {
  RequestRecord r;
  r.id = 18'000'000'000'000'000'000u;  // beyond int64: the unsigned type survives
  r.arrival_s = 0.1;
  r.prompt_tokens = 512;
  r.output_tokens = 64;
  r.n = 2;
  r.beam_width = 1;
  r.first_scheduled_s = 0.2;
  r.first_token_s = 0.3;
  r.finish_s = 2.0 / 3.0;
  r.ttft_s = 0.2;
  r.tpot_s = 1e-3;
  r.e2e_s = 0.5666;
  r.normalized_latency_s_per_token = 8.853125e-3;
  r.preemptions = 3;
  r.recomputes = 1;
  r.swapped_bytes = 1.5e9;
  r.cached_tokens = 256;
  r.recomputed_tokens = 77;
  return r;
}

template <Record R>
void expect_one_field_list(const R& r) {
  const std::vector<std::string> header = split(csv_header<R>());
  const std::vector<std::string> row = split(csv_row(r));
  EXPECT_EQ(header.size(), csv_column_count<R>());
  EXPECT_EQ(row.size(), header.size());
  EXPECT_EQ(json_leaf_keys(r), header);  // same names, same order
}

TEST(RecordFields, HeaderRowAndJsonOfEachRecordNameTheSameFields) {
  expect_one_field_list(distinct_sample());
  expect_one_field_list(distinct_request());
  expect_one_field_list(alloc::MemoryBreakdown{1, 2, 3, 4, 5, 6});
  expect_one_field_list(MemoryPct{});
  expect_one_field_list(Distribution{});
  EXPECT_EQ(csv_column_count<IterationSample>(), 22u);
  EXPECT_EQ(csv_column_count<RequestRecord>(), 18u);
  EXPECT_EQ(csv_column_count<Distribution>(), 5u);
}

// The file formats other tools read: pinned, so a change to a field list is deliberate.
TEST(RecordFields, CsvHeadersArePinned) {
  EXPECT_EQ(Metrics::iterations_csv_header(),
            "index,start_s,duration_s,batch_requests,batch_seqs,prefill_tokens,decode_tokens,waiting,running,"
            "swapped,token_states,reserved,over_reserved,rounding,free,cached_free,unusable_free,logical_blocks,"
            "physical_blocks,swap_out_blocks,swap_in_blocks,preemptions");
  EXPECT_EQ(Metrics::requests_csv_header(),
            "id,arrival_s,prompt_tokens,output_tokens,n,beam_width,first_scheduled_s,first_token_s,finish_s,"
            "ttft_s,tpot_s,e2e_s,normalized_latency_s_per_token,preemptions,recomputes,swapped_bytes,"
            "cached_tokens,recomputed_tokens");
  // With the prefix cache on, its records' columns follow.
  EXPECT_EQ(Metrics::iterations_csv_header(true),
            Metrics::iterations_csv_header() + ",prefix_prompt_tokens,prefix_hit_tokens,readmission_hit_tokens,"
                                               "evicted_blocks");
  EXPECT_EQ(Metrics::requests_csv_header(true), Metrics::requests_csv_header() + ",readmission_cached_tokens");
}

TEST(RecordFields, IterationSampleRoundTripsThroughItsCsvRow) {
  const IterationSample s = distinct_sample();
  EXPECT_EQ(csv_row(s), "7,1.25,0.0375,3,5,11,13,17,19,23,400,250,150,100,100,40,60,29,31,37,41,43");
  // Each column read back by name gives the member it names.
  const std::vector<std::string> header = split(csv_header<IterationSample>());
  const std::vector<std::string> row = split(csv_row(s));
  const nlohmann::ordered_json j = record_json(s);
  ASSERT_EQ(header.size(), row.size());
  for (std::size_t i = 0; i < header.size(); ++i) {
    const nlohmann::ordered_json& v = j.contains(header[i]) ? j[header[i]] : j["memory"][header[i]];
    EXPECT_EQ(std::stod(row[i]), v.get<double>()) << header[i];
  }
  EXPECT_EQ(j["memory"]["cached_free"], 40);
  EXPECT_EQ(j["unusable_free"], 60);
}

TEST(RecordFields, RequestRecordRoundTripsThroughItsCsvRow) {
  const RequestRecord r = distinct_request();
  const std::vector<std::string> header = split(csv_header<RequestRecord>());
  const std::vector<std::string> row = split(csv_row(r));
  const nlohmann::ordered_json j = record_json(r);
  ASSERT_EQ(header.size(), row.size());
  for (std::size_t i = 0; i < header.size(); ++i) {
    if (header[i] == "id") continue;  // not exact as a double
    EXPECT_EQ(std::stod(row[i]), j[header[i]].get<double>()) << header[i];
  }
  EXPECT_EQ(row[0], "18000000000000000000");
  EXPECT_EQ(std::stod(row[8]), 2.0 / 3.0);  // doubles print in shortest round-trip form
}

// The memory classes have one order: iterations.csv's columns between `swapped` and
// `logical_blocks` are summary.json's memory_pct keys, in the same order.
TEST(RecordFields, MemoryClassesHaveOneOrderInCsvAndJson) {
  const std::vector<std::string> header = split(csv_header<IterationSample>());
  std::vector<std::string> csv_classes;
  bool inside = false;
  for (const auto& h : header) {
    if (h == "logical_blocks") inside = false;
    if (inside) csv_classes.push_back(h);
    if (h == "swapped") inside = true;
  }
  const nlohmann::ordered_json summary = Summary{}.to_json();
  std::vector<std::string> json_classes;
  for (const auto& [k, v] : summary["memory_pct"].items()) json_classes.push_back(k);
  EXPECT_EQ(csv_classes, json_classes);
  EXPECT_EQ(json_classes, (std::vector<std::string>{"token_states", "reserved", "over_reserved", "rounding", "free",
                                                     "cached_free", "unusable_free"}));
  std::vector<std::string> tw_classes;
  for (const auto& [k, v] : summary["memory_pct_time_weighted"].items()) tw_classes.push_back(k);
  EXPECT_EQ(tw_classes, json_classes);
}

TEST(MemoryPct, ClassesOfASampleSumToOneHundred) {
  const IterationSample s = distinct_sample();  // capacity 1000
  const MemoryPct p = memory_pct_of(s);
  EXPECT_DOUBLE_EQ(capacity_pct(p), 100.0);
  EXPECT_DOUBLE_EQ(p.token_states, 40);
  EXPECT_DOUBLE_EQ(p.reserved, 25);
  EXPECT_DOUBLE_EQ(p.over_reserved, 15);
  EXPECT_DOUBLE_EQ(p.rounding, 10);
  EXPECT_DOUBLE_EQ(p.free, 10);
  EXPECT_DOUBLE_EQ(p.cached_free, 4);    // inside free: not in the sum
  EXPECT_DOUBLE_EQ(p.unusable_free, 6);  // inside free: not in the sum

  // An awkward capacity: thirds do not sum exactly, but to 100 within rounding.
  IterationSample t;
  t.memory = {1, 1, 0, 0, 1, 1};
  t.unusable_free = 1;
  EXPECT_NEAR(capacity_pct(memory_pct_of(t)), 100.0, 1e-12);
}

TEST(MemoryPct, SumsAndMeansGoClassByClass) {
  MemoryPct sum;
  const MemoryPct a = memory_pct_of(distinct_sample());
  IterationSample other = distinct_sample();
  other.memory = {1000, 0, 0, 0, 0, 0};
  other.unusable_free = 0;
  const MemoryPct b = memory_pct_of(other);
  add(sum, a);
  add(sum, b);
  const MemoryPct mean = divided(sum, 2);
  EXPECT_DOUBLE_EQ(mean.token_states, 70);
  EXPECT_DOUBLE_EQ(mean.reserved, 12.5);
  EXPECT_DOUBLE_EQ(mean.cached_free, 2);
  EXPECT_DOUBLE_EQ(mean.unusable_free, 3);
  EXPECT_DOUBLE_EQ(capacity_pct(mean), 100.0);
  MemoryPct weighted;
  add_weighted(weighted, a, 1.0);
  add_weighted(weighted, b, 3.0);
  EXPECT_DOUBLE_EQ(divided(weighted, 4).token_states, 85);
  EXPECT_DOUBLE_EQ(divided(weighted, 0).token_states, 0);  // no samples: zeros, not NaN
}

TEST(MemoryBreakdown, SumAndDifferenceCoverEveryClass) {
  alloc::MemoryBreakdown a{1, 2, 3, 4, 5, 6, 7, 8, 9};
  const alloc::MemoryBreakdown b{10, 20, 30, 40, 50, 60, 70, 80, 90};
  a += b;
  EXPECT_EQ(a, (alloc::MemoryBreakdown{11, 22, 33, 44, 55, 66, 77, 88, 99}));
  a -= b;
  EXPECT_EQ(a, (alloc::MemoryBreakdown{1, 2, 3, 4, 5, 6, 7, 8, 9}));
  // The layer classes are allocated memory: they count in total(), cached_free does not.
  EXPECT_EQ(a.allocated(), 1 + 2 + 3 + 4 + 7 + 8 + 9);
  EXPECT_EQ(a.total(), a.allocated() + 5);
}

// --resume rebuilds a kept point's Summary from its summary.json: reading the dumped text back
// gives the same record, whose JSON dumps to the same bytes (awkward doubles included).
TEST(RecordFields, SummaryReadsBackFromItsJsonText) {
  Summary s;
  s.memory_pct.token_states = 0.1 + 0.2;
  s.memory_pct.free = 100.0 / 3.0;
  s.e2e_s.p99 = 1e-300;
  s.throughput_rps = 123456789.123456789;
  s.preemptions = 9007199254740993;  // above 2^53: an integer, not a double
  s.sim_time_s = 5e-324;
  const std::string text = s.to_json().dump(2);
  const Summary back = read_record_json<Summary>(nlohmann::ordered_json::parse(text));
  EXPECT_EQ(back.to_json().dump(2), text);
  EXPECT_EQ(back.preemptions, s.preemptions);
  EXPECT_EQ(back.memory_pct.token_states, s.memory_pct.token_states);
  // A missing key or a wrong type is an error, not a zero.
  nlohmann::ordered_json cut = s.to_json();
  cut.erase("sim_time_s");
  EXPECT_THROW(read_record_json<Summary>(cut), nlohmann::json::exception);
  nlohmann::ordered_json wrong = s.to_json();
  wrong["e2e_s"]["p99"] = "slow";
  EXPECT_THROW(read_record_json<Summary>(wrong), nlohmann::json::exception);
}

// An optional record is a nested object when present and no key at all when empty (runs
// without the prefix cache keep their summary.json bytes); both read back as they were.
TEST(RecordFields, OptionalRecordIsLeftOutWhenEmpty) {
  Summary s;
  s.prefix_hit_rate = 0.25;
  const nlohmann::ordered_json without = s.to_json();
  EXPECT_FALSE(without.contains("prefix_cache"));
  EXPECT_FALSE(read_record_json<Summary>(without).prefix_cache.has_value());
  s.prefix_cache = PrefixCacheSummary{};
  s.prefix_cache->hit_tokens = 5;
  s.prefix_cache->hit_rate = 0.25;
  const nlohmann::ordered_json with = s.to_json();
  ASSERT_TRUE(with.contains("prefix_cache"));
  EXPECT_EQ(with["prefix_cache"]["hit_tokens"], 5);
  // The object sits in the field list's place, right after prefix_hit_rate.
  auto it = with.find("prefix_hit_rate");
  EXPECT_EQ(std::next(it).key(), "prefix_cache");
  const Summary back = read_record_json<Summary>(with);
  ASSERT_TRUE(back.prefix_cache.has_value());
  EXPECT_EQ(back.prefix_cache->hit_tokens, 5);
  EXPECT_EQ(back.to_json().dump(), with.dump());
  nlohmann::ordered_json wrong = with;
  wrong["prefix_cache"]["hit_blocks"] = "many";
  EXPECT_THROW(read_record_json<Summary>(wrong), nlohmann::json::exception);
}

}  // namespace
}  // namespace pagesim::sim
