"""What the Mooncake paper says about local against global caches, as far as this project could
retrieve it, with the sources. Kept apart so that the report's own numbers all come from results.

Qin et al., "Mooncake: Trading More Storage for Less Computation — A KVCache-centric
Architecture for Serving LLM Chatbot", FAST'25 (arXiv 2407.00079, "Mooncake: A KVCache-centric
Disaggregated Architecture for LLM Serving"), §5.3 and Fig. 10: cache hit rate and prefill
computation time of a local cache (each of 10 prefill instances caches 3M tokens and cannot read
another's) against the global Mooncake Store, on the conversation, tool&agent and synthetic
workloads.
"""

PAPER = ("Qin et al., *Mooncake: Trading More Storage for Less Computation — A KVCache-centric "
         "Architecture for Serving LLM Chatbot*, FAST'25 "
         "([paper](https://www.usenix.org/conference/fast25/presentation/qin); arXiv 2407.00079)")

# Fig. 10's values are bars in a figure; the figure's numbers for the conversation workload could
# not be retrieved in the session that wrote this report (no copy of the figure's data or text
# was reachable), so none is quoted. What was found:
FOUND = (
    "The maintainers describe the experiment's setup in kvcache-ai/Mooncake issue #452 "
    "(\"Request for reproducible benchmark setup for section 5.3\", answer of 2025-06-06): the local "
    "and the global designs share one implementation, and the local cache does not allow KVCache "
    "to move between nodes; the inference engine and Conductor are internal and not released.",
    "The paper's own Fig. 9 (reproduced in experiments/prefix_cache/REPORT.md) says a 3M-token "
    "cache reaches under half of the conversation trace's maximum hit rate, which is what a "
    "global cache recovers.",
)
