"""Engine parity: pagesim's scheduling decisions beside those of the real engines' own
schedulers (vLLM's v1 Scheduler and KVCacheManager, SGLang's scheduler and RadixCache),
step by step on the same scenario (experiments/engine_parity/, FORMAT.md there)."""
