// BatchShape: one model iteration's batch, aggregated for the cost models.
//
// The engine fills one per iteration (one forward pass over every scheduled sequence) and
// hands it to CostModel::iteration_seconds. It holds sums only, never per-sequence vectors,
// so that building and costing it allocates nothing. Fill it with add_prefill_chunk and
// add_decode_seq, which keep the fields consistent with each other. A plain value type.
//
// A prefill chunk computes the KV of q new tokens of a sequence whose first h tokens are
// already cached (h > 0 for a later chunk of a chunked prefill, after a prefix-cache hit, or
// never for a recompute, which re-prefills prompt + generated tokens from h = 0).
// A decode sequence generates one token and reads the KV of its c context tokens (the new
// token's own KV included, as the paged-attention kernel reads it).
// Speculative decoding: a decode sequence may also verify p proposed tokens in the same pass
// (p + 1 query positions, each through the linear layers and the LM head; p·c extra
// query-key pairs over the KV it reads once).
#pragma once

#include <cstdint>

namespace pagesim::sim {

struct BatchShape {
  std::int64_t prefill_seqs = 0;            // sequences with a prefill chunk (count)
  std::int64_t prefill_tokens = 0;          // Σ q: new tokens whose KV is computed (tokens)
  double prefill_attention_pairs = 0;       // Σ q·h + q(q+1)/2: causal query–key pairs (pairs)
  std::int64_t prefill_context_tokens = 0;  // Σ h + q: KV read by prefill attention (tokens)
  std::int64_t prefill_sampling_seqs = 0;   // chunks that complete their prompt, so the LM head
                                            // runs on their last token (count, <= prefill_seqs)
  std::int64_t decode_seqs = 0;             // sequences generating one token each (count)
  std::int64_t decode_context_tokens = 0;   // Σ c: KV read by decode attention (tokens)
  std::int64_t verify_tokens = 0;           // Σ p: proposed tokens verified by decode
                                            // sequences besides their one token (tokens)
  double verify_attention_pairs = 0;        // Σ p·c + p(p+1)/2: their query–key pairs (pairs)

  friend bool operator==(const BatchShape&, const BatchShape&) = default;

  // Adds a prefill chunk of `new_tokens` (q >= 1) after `cached_tokens` (h >= 0);
  // `completes_prompt`: this chunk ends the prompt, so a token is sampled from it.
  void add_prefill_chunk(std::int64_t new_tokens, std::int64_t cached_tokens,
                         bool completes_prompt) {
    const double q = static_cast<double>(new_tokens);
    prefill_seqs += 1;
    prefill_tokens += new_tokens;
    prefill_attention_pairs += q * static_cast<double>(cached_tokens) + q * (q + 1) / 2;
    prefill_context_tokens += cached_tokens + new_tokens;
    prefill_sampling_seqs += completes_prompt ? 1 : 0;
  }

  // Adds a decode sequence that reads `context_tokens` (c >= 1) tokens of KV.
  void add_decode_seq(std::int64_t context_tokens) {
    decode_seqs += 1;
    decode_context_tokens += context_tokens;
  }

  // Speculative decoding: the decode sequence just added also verifies `proposed` (p >= 0)
  // tokens after its `context_tokens` (c).
  void add_verified_tokens(std::int64_t proposed, std::int64_t context_tokens) {
    const double p = static_cast<double>(proposed);
    verify_tokens += proposed;
    verify_attention_pairs += p * static_cast<double>(context_tokens) + p * (p + 1) / 2;
  }

  // Tokens that go through the linear layers: every prefill token plus one per decode
  // sequence, plus the proposed tokens verified.
  std::int64_t total_tokens() const { return prefill_tokens + decode_seqs + verify_tokens; }
  // Positions that go through the LM head: each sampling sequence's last, plus every verified
  // proposal's (verification reads the target's distribution at each).
  std::int64_t sampling_seqs() const { return prefill_sampling_seqs + decode_seqs + verify_tokens; }
  // No token at all: no forward pass runs.
  bool empty() const { return total_tokens() == 0; }
};

}  // namespace pagesim::sim
