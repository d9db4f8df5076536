"""Published numbers the heterogeneous-KV report puts beside pagesim's, with their sources."""

# vLLM's hybrid-allocator RFC: the share of KV memory a uniform allocator (one page size, every
# layer holding every token) wastes on models whose layers differ. "The memory waste can be
# 79.6% in mllama, 25% in Gemma-2, and 56.25% in Ministral" (figure: mllama, BLOCK_SIZE=1).
RFC_URL = "https://github.com/vllm-project/vllm/issues/11382"
RFC_WASTE_PCT = {"llama-3.2-11b-vision": 79.6, "gemma-2-9b": 25.0, "ministral-8b": 56.25}

# vAttention (Prabhu et al., ASPLOS'25, arXiv 2405.04437), §7.4 and Table 8: the worst case
# is a freshly mapped page left unused in every per-layer K and V buffer of every
# tensor-parallel worker. "64KB page size results in a maximum theoretical waste of only
# 4-15MB per request which increases to 16-60MB for 256KB page size"; tokens per page
# ("block size") range from 32 (Yi-34B TP-1) to 128 (Yi-6B TP-2). Models: Yi-6B,
# Llama-3-8B, Yi-34B at TP-1 and TP-2.
VATTENTION_URL = "https://arxiv.org/abs/2405.04437"
VATTENTION_MODELS = ("yi-6b", "llama-3-8b", "yi-34b")
VATTENTION_WASTE_RANGE_MB = {64 * 1024: (4, 15), 256 * 1024: (16, 60)}
VATTENTION_BLOCK_RANGE = (32, 128)

# Jenga (Zhang et al., SOSP'25, arXiv 2503.18292), abstract: against vLLM's PagedAttention
# (one page size, every layer holding every token: pagesim's `uniform`), "Jenga improves GPU
# memory utilization by up to 79.6%, and increases serving throughput by up to 4.92x (1.80x
# on average)", over its models (among them Gemma-2, Ministral, Llama 3.2 Vision, Jamba),
# datasets and GPUs, measured at the highest request rate each system sustains.
JENGA_URL = "https://arxiv.org/abs/2503.18292"
JENGA_MEMORY_UTILIZATION_GAIN_PCT = 79.6
JENGA_THROUGHPUT_MAX = 4.92
JENGA_THROUGHPUT_MEAN = 1.80
