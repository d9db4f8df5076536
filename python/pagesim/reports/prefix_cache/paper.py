"""The Mooncake paper's published numbers on its conversation trace: the one copy.

Source: Qin et al., "Mooncake: Trading More Storage for Less Computation — A KVCache-centric
Architecture for Serving LLM Chatbot", FAST'25 (https://www.usenix.org/conference/fast25/
presentation/qin; the PDF is kvcache-ai/Mooncake FAST25-release/Mooncake-FAST25.pdf). Each
constant names the table, figure or section it is read from. Plain values; no I/O.
"""

CITATION = ("Qin et al., *Mooncake: Trading More Storage for Less Computation — A KVCache-centric "
            "Architecture for Serving LLM Chatbot*, FAST'25 "
            "([paper](https://www.usenix.org/conference/fast25/presentation/qin); PDF in "
            "[kvcache-ai/Mooncake](https://github.com/kvcache-ai/Mooncake) `FAST25-release/Mooncake-FAST25.pdf`)")

# Table 2 ("Workload Statistics"), column Conversation. §5.2.1 words the cache ratio as
# "approximately 40% prefix caching ratio brought about by multi-turn conversations"; the
# paper does not define it further.
TABLE2 = {"requests": 12031, "avg_input": 12035, "avg_output": 343, "cache_ratio_pct": 40}

# Fig. 9 (§5.3.1, "Quantitative analysis of prefix cache hit rates with varying cache
# capacities"; only the sequence of requests, no prefill time or hotspot replication): "a
# local cache with a 3M token capacity does not achieve 50% of the theoretical maximum hit
# rate in most scenarios", and "a cache capacity of 50M tokens nearly reaches the theoretical
# maximum hit rate". Capacities in tokens; fractions of the maximum hit rate.
FIG9_LOCAL_TOKENS = 3_000_000
FIG9_LOCAL_BELOW = 0.5
FIG9_GLOBAL_TOKENS = 50_000_000

# Mooncake's KV cache blocks: "The block size is 512 tokens" (hash_ids, Appendix A.2).
HASH_BLOCK_TOKENS = 512
