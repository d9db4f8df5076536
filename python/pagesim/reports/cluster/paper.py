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

# Fig. 10 (§5.3.2): 10 prefill nodes, outputs restricted to 1 token, a dummy model mirroring
# LLaMA3-70B on nodes of eight A800-SXM4-80GB GPUs (§5.1; KV block 256 tokens). Local: each node
# caches 3M tokens and reads only its own cache, requests routed to the node with the higher
# prefix match; global: each node still holds 3M tokens but every node reads every cache (Mooncake
# Store, with proactive inter-node migration). The figure prints no bar values, only the global
# cache's value as a multiple of the local one above each pair of bars; these are its labels for
# the conversation workload, read from the text layer of the paper's PDF as the Mooncake repository
# ships it (kvcache-ai/Mooncake, FAST25-release/Mooncake-FAST25.pdf), Fig. 10's two panels
# "Cache Hit Rate (%)" (2.22x, 1.38x, 2.36x for conversation, tool&agent, synthetic) and
# "Prefill GPU Time (s)" (0.76x, 0.74x, 0.52x).
SOURCE = ("Fig. 10's bar labels, from the text layer of the paper's PDF in the Mooncake repository "
          "(kvcache-ai/Mooncake, `FAST25-release/Mooncake-FAST25.pdf`)")
FIG10_CONVERSATION = {"hit_rate_global_over_local": 2.22, "prefill_time_global_over_local": 0.76}
# The same figure's Fig. 9 labels: a 3M-token cache reaches this fraction of the conversation
# trace's theoretical maximum hit rate (sequence only, no prefill times, no hot-block replicas).
FIG9_CONVERSATION_3M_OF_MAX = 0.41
SETUP = ("10 prefill nodes, outputs cut to 1 token, a dummy model mirroring LLaMA3-70B on "
         "8×A800-80GB nodes, KV blocks of 256 tokens; local: 3M tokens per node, routed to the node "
         "with the higher prefix match; global: the same 3M per node, every node reading every "
         "cache, with proactive migration (§5.1, §5.3.2)")
FOUND = (
    "The maintainers describe the experiment's setup in kvcache-ai/Mooncake issue #452 "
    "(\"Request for reproducible benchmark setup for section 5.3\", answer of 2025-06-06): the local "
    "and the global designs share one implementation, and the local cache does not allow KVCache "
    "to move between nodes; the inference engine and Conductor are internal and not released.",
)
