"""Axis labels with units for pagesim's output columns and experiment keys.

One table for every figure (`pagesim plot`, `pagesim compare`): a column of sweep.csv,
summary.json (flattened: "ttft_s.p99"), requests.csv or iterations.csv, or a swept key path
("allocator.block_size"), becomes a reader's label with its unit: "TTFT p99 (s)",
"block size (tokens)". Units are those the columns are written in (sim/metrics/summary.h,
the CSV writers); a name not in the table gets its unit from its suffix (_s, _pct, _bytes,
_tokens) or none. Pure functions, no state.
"""

from __future__ import annotations

# Memory classes (DESIGN.md, "Memory accounting"), as summary.json's memory_pct keys.
MEMORY_CLASSES = {
    "token_states": "token states",
    "reserved": "reservation",
    "over_reserved": "over-reservation",
    "rounding": "rounding",
    "free": "free",
    "cached_free": "cached free",
    "unusable_free": "unusable free",
}

# Latency distributions of summary.json ({mean, p50, p90, p99, max}) and requests.csv's columns.
LATENCIES = {
    "ttft_s": ("TTFT", "s"),
    "tpot_s": ("TPOT", "s"),
    "e2e_s": ("end-to-end latency", "s"),
    "normalized_latency": ("normalized latency", "s/token"),
    "normalized_latency_s_per_token": ("normalized latency", "s/token"),
}

# (name, unit); unit "" for counts and categories.
COLUMNS: dict[str, tuple[str, str]] = {
    # summary.json / sweep.csv
    "kv_slots": ("KV capacity", "token slots"),
    "mean_batched_requests": ("mean batched requests", ""),
    "mean_batched_seqs": ("mean batched sequences", ""),
    "sharing_saving_pct": ("memory saved by sharing", "%"),
    "throughput_rps": ("throughput", "req/s"),
    "throughput_tokens_per_s": ("output token throughput", "tokens/s"),
    "preemptions": ("preemptions", ""),
    "recompute_preemptions": ("recompute preemptions", ""),
    "swap_preemptions": ("swap preemptions", ""),
    "swapped_bytes": ("swapped", "bytes"),
    "prefix_hit_rate": ("prefix hit rate", "fraction of prompt tokens"),
    "requests_arrived": ("requests arrived", ""),
    "requests_finished": ("requests finished", ""),
    "iterations": ("iterations", ""),
    "window_iterations": ("iterations in the window", ""),
    "sim_time_s": ("simulated time", "s"),
    "wall_s": ("wall time", "s"),
    "sim_seconds_per_wall_second": ("simulation speed", "simulated s / wall s"),
    "iterations_per_wall_second": ("simulation speed", "iterations / wall s"),
    # requests.csv
    "arrival_s": ("arrival", "s"),
    "prompt_tokens": ("prompt length", "tokens"),
    "output_tokens": ("output length", "tokens"),
    "first_token_s": ("first token", "s"),
    "finish_s": ("finish", "s"),
    "cached_tokens": ("prompt tokens from the prefix cache", "tokens"),
    "recomputed_tokens": ("recomputed tokens", "tokens"),
    # iterations.csv
    "start_s": ("simulated time", "s"),
    "duration_s": ("iteration time", "s"),
    "batch_requests": ("batched requests", ""),
    "batch_seqs": ("batched sequences", ""),
    "prefill_tokens": ("prefill tokens", "tokens"),
    "decode_tokens": ("decode tokens", "tokens"),
    "waiting": ("waiting requests", ""),
    "running": ("running requests", ""),
    # experiment keys a sweep commonly varies
    "allocator.block_size": ("block size", "tokens"),
    "allocator.kind": ("allocator", ""),
    "allocator.reservation": ("reservation", ""),
    "allocator.placement": ("placement", ""),
    "allocator.eviction": ("eviction policy", ""),
    "allocator.cpu_swap_gib": ("CPU swap space", "GiB"),
    "scheduler.kind": ("scheduler", ""),
    "scheduler.max_num_seqs": ("max running sequences", ""),
    "scheduler.max_num_batched_tokens": ("max batched tokens", "tokens"),
    "scheduler.chunk_tokens": ("prefill chunk", "tokens"),
    "scheduler.preemption": ("preemption", ""),
    "kv.slots": ("KV capacity", "token slots"),
    "kv.gpu_memory_utilization": ("GPU memory utilization", "fraction"),
    "workload.arrival.rate": ("arrival rate", "req/s"),
    "workload.duration_s": ("trace duration", "s"),
    "workload.trace.time_scale": ("trace time scale", "×"),
    "replicas.count": ("replicas", ""),
    "replicas.router": ("router", ""),
    "allocator.prefix_cache": ("prefix cache", ""),
    "scheduler.watermark": ("admission watermark", "fraction of KV"),
    "speculative.method": ("speculative method", ""),
    "speculative.num_speculative_tokens": ("speculated tokens per step", "tokens"),
    "lora.max_loras": ("LoRA slots", "adapters"),
    "lora.placement": ("LoRA placement", ""),
    "kv_dtype": ("KV data type", ""),
    # service-level objectives (summary.json's slo object; an experiment's slo keys)
    "slo.ttft_s": ("TTFT target", "s"),
    "slo.tbt_s": ("time-between-tokens target", "s"),
    "slo.attainment": ("SLO attainment", "fraction of requests"),
    "slo.goodput_rps": ("goodput (requests meeting the SLO)", "req/s"),
    "slo.requests_finished": ("requests finished", ""),
    "slo.requests_meeting_ttft": ("requests meeting the TTFT target", ""),
    "slo.requests_meeting_tbt": ("requests meeting the TBT target", ""),
    "slo.requests_meeting_both": ("requests meeting both targets", ""),
    "tensor_parallel": ("tensor-parallel degree", ""),
    "model": ("model", ""),
    "gpu": ("GPU", ""),
    "case": ("case", ""),
    "label": ("point", ""),
}

# Readable names of the values a categorical key takes (presets' names as papers write them);
# a value not listed is shown as written.
VALUES: dict[str, dict[str, str]] = {
    "replicas.router": {"round_robin": "round robin", "least_outstanding": "least outstanding",
                        "least_kv": "least KV", "prefix_aware": "prefix-aware", "adapter_aware": "adapter-aware",
                        "random": "random"},
    "scheduler.kind": {"static": "static", "orca": "Orca", "vllm": "vLLM", "sarathi": "Sarathi-Serve",
                       "vllm-v0": "vLLM v0", "vllm-v1": "vLLM v1", "sglang": "SGLang"},
    "allocator.kind": {"vattention": "vAttention", "jenga": "Jenga"},
    "allocator.placement": {"first_fit": "first fit", "best_fit": "best fit"},
    "allocator.eviction": {"lru": "LRU", "fifo": "FIFO", "lfu": "LFU", "lru_protect_waiting": "LRU, waiting protected"},
}

_STATS = {"mean": "mean", "p50": "median", "p90": "p90", "p99": "p99", "max": "max"}
_SUFFIX_UNITS = (("_pct", "%"), ("_s", "s"), ("_bytes", "bytes"), ("_tokens", "tokens"), ("_gib", "GiB"))


def name_and_unit(column: str) -> tuple[str, str]:
    """(name, unit) of a column or key path; unit "" for counts, categories and unknowns."""
    if column in COLUMNS:
        return COLUMNS[column]
    if column in LATENCIES:
        return LATENCIES[column]
    head, _, tail = column.rpartition(".")
    if head in ("memory_pct", "memory_pct_time_weighted") and tail in MEMORY_CLASSES:
        weighted = ", time-weighted" if head.endswith("weighted") else ""
        return f"{MEMORY_CLASSES[tail]}{weighted}", "% of KV memory"
    if head in LATENCIES and tail in _STATS:
        name, unit = LATENCIES[head]
        return f"{name} {_STATS[tail]}", unit
    if tail in MEMORY_CLASSES and not head:  # iterations.csv: slots of a class
        return MEMORY_CLASSES[tail], "token slots"
    base = tail if head.startswith(("workload", "allocator", "scheduler", "cost", "kv", "replicas")) else column
    for suffix, unit in _SUFFIX_UNITS:
        if base.endswith(suffix) and len(base) > len(suffix):
            return base[: -len(suffix)].replace("_", " "), unit
    return base.replace("_", " "), ""


def axis_label(column: str) -> str:
    """The axis label of a column or key path: "name (unit)", or "name" without a unit."""
    name, unit = name_and_unit(column)
    return f"{name} ({unit})" if unit else name


def unit(column: str) -> str:
    """The unit of a column or key path ("" for counts, categories and unknowns)."""
    return name_and_unit(column)[1]


def value_name(key: str, value: str) -> str:
    """A swept key's value as a reader names it: "least KV" for replicas.router=least_kv,
    "16 tokens" for allocator.block_size=16 (a number with its unit; no "%" suffix space)."""
    if value in VALUES.get(key, {}):
        return VALUES[key][value]
    u = unit(key)
    if u and _is_number(value):
        return f"{value}{u}" if u in ("%", "×") else f"{value} {u}"
    return value


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True
