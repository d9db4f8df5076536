// RequestRecord: what one finished request measured — one row of requests.csv, whose
// columns come from RecordFields<RequestRecord> below. Metrics fills it when the engine
// reports a request finished. Plain value.
#pragma once

#include <cstdint>
#include <tuple>

#include "sim/output/record_fields.h"

namespace pagesim::sim {

struct RequestRecord {
  std::uint64_t id = 0;
  double arrival_s = 0;
  std::int64_t prompt_tokens = 0;
  std::int64_t output_tokens = 0;
  std::int32_t n = 1;                  // parallel samples
  std::int32_t beam_width = 1;
  double first_scheduled_s = -1;       // virtual times; -1: never
  double first_token_s = -1;
  double finish_s = -1;
  double ttft_s = 0;                   // first_token_s - arrival_s
  double tpot_s = 0;                   // (finish - first token) / (output - 1); 0 for one token
  double e2e_s = 0;                    // finish_s - arrival_s
  double normalized_latency_s_per_token = 0;  // e2e_s / output_tokens; 0 for none
  std::int32_t preemptions = 0;        // recompute + swap
  std::int32_t recomputes = 0;
  double swapped_bytes = 0;            // GPU<->CPU, both directions
  std::int64_t cached_tokens = 0;      // prompt tokens served by the prefix cache
  std::int64_t recomputed_tokens = 0;  // tokens prefilled again after recompute preemptions
};

// requests.csv's columns, in order.
template <>
struct RecordFields<RequestRecord> {
  using R = RequestRecord;
  static constexpr auto fields = std::tuple{
      Field{"id", &R::id},
      Field{"arrival_s", &R::arrival_s},
      Field{"prompt_tokens", &R::prompt_tokens},
      Field{"output_tokens", &R::output_tokens},
      Field{"n", &R::n},
      Field{"beam_width", &R::beam_width},
      Field{"first_scheduled_s", &R::first_scheduled_s},
      Field{"first_token_s", &R::first_token_s},
      Field{"finish_s", &R::finish_s},
      Field{"ttft_s", &R::ttft_s},
      Field{"tpot_s", &R::tpot_s},
      Field{"e2e_s", &R::e2e_s},
      Field{"normalized_latency_s_per_token", &R::normalized_latency_s_per_token},
      Field{"preemptions", &R::preemptions},
      Field{"recomputes", &R::recomputes},
      Field{"swapped_bytes", &R::swapped_bytes},
      Field{"cached_tokens", &R::cached_tokens},
      Field{"recomputed_tokens", &R::recomputed_tokens},
  };
};
static_assert(lists_every_member<RequestRecord>());

}  // namespace pagesim::sim
