"""The vLLM paper's published numbers that pagesim's report is judged against: the one copy.

Source: Kwon et al., "Efficient Memory Management for Large Language Model Serving with
PagedAttention", SOSP 2023 (the vLLM paper), as transcribed in DESIGN.md ("Paper results to
reproduce"). Each constant names the figure it is read from. Plain immutable values; no I/O.
"""

# Fig. 2, percent of KV-cache memory per class, bottom to top of each bar. The paper labels
# only the token-state share of vLLM's bar; the rest of that bar (3.7) is unlabelled: None.
FIG2_CLASSES = ("token states", "reservation", "internal frag.", "external frag. & others")
FIG2 = {
    "orca-max": (20.4, 13.3, 57.3, 8.9),
    "orca-pow2": (26.8, 17.9, 13.6, 41.6),
    "orca-oracle": (38.2, 25.2, 0.0, 36.6),
    "vllm": (96.3, None, None, None),
}

# Fig. 13a, mean number of batched requests, ShareGPT at 2 req/s.
FIG13A = {"orca-max": 7.00, "orca-pow2": 9.81, "orca-oracle": 13.62, "vllm": 30.42}

# Fig. 15, memory saved by sharing on ShareGPT (percent; lowest–highest over n or beam width
# 2, 4, 6).
FIG15 = {"parallel": (16.2, 30.5), "beam": (44.3, 66.3)}

# Fig. 12, ShareGPT / OPT-13B: the range of vLLM's sustainable request rate over a baseline's
# at the same normalized latency ("numerator/denominator" system names).
FIG12_RATIOS = {"vllm/orca-oracle": (1.7, 2.7), "vllm/orca-max": (2.7, 8.0)}

# Fig. 12, ShareGPT / OPT-13B: the request rate (req/s) vLLM sustains.
VLLM_CAPACITY_RPS = (1.7, 2.0)


def fig2_bar(system):
    """The four segments of the paper's Fig. 2 bar of `system`, as drawn: an unlabelled class is
    0 except the last, which takes the rest of the bar (rounded to the paper's one decimal).
    REQUIRES: system is a key of FIG2."""
    known = [0.0 if v is None else v for v in FIG2[system][:3]]
    last = FIG2[system][3]
    return (*known, round(100.0 - sum(known), 1) if last is None else last)
