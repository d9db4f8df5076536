"""The heterogeneous-KV report's text, from a results folder of run_all.sh:

  RESULTS/models/NAME.tpT.DTYPE.json   `pagesim model NAME --tp T --kv-dtype DTYPE`
  RESULTS/kv_dtype/                    the kv_dtype.yaml sweep (sweep.csv, POINT/summary.json)

Every number comes from those files or from paper.py. report() returns the Markdown lines.
"""
import csv
import glob
import os

from pagesim_report.load import ResultsError, number, read_json

from . import memory, paper

# Part (a): the RFC's models first, then the other presets with layer groups.
WASTE_MODELS = ("llama-3.2-11b-vision", "gemma-2-9b", "ministral-8b", "gemma-2-27b", "gemma-3-27b",
                "gpt-oss-120b", "llama-4-scout", "jamba-v0.1")
WASTE_LENGTHS = (1024, 4096, 8192, 32768, 131072)
# Part (c): the vAttention paper's models (both TP degrees), then heterogeneous ones at TP-1.
PAGE_SIZES = (64 * 1024, 128 * 1024, 256 * 1024, 2 * 1024 * 1024)
DTYPES = ("auto", "fp8", "int4")


def load_models(results):
    """{(name, tp, kv_dtype): model document} for every RESULTS/models/*.json."""
    out = {}
    for path in sorted(glob.glob(os.path.join(results, "models", "*.json"))):
        doc = read_json(path)
        for key in ("model", "tensor_parallel", "kv_dtype", "groups_per_gpu", "kv_bytes_per_token_per_gpu"):
            if key not in doc:
                raise ResultsError(f"{path}: no key {key!r}")
        out[(doc["model"], doc["tensor_parallel"], doc["kv_dtype"])] = doc
    return out


def _size(b):
    """Bytes as KiB / MiB, the way the vAttention paper writes page sizes and waste."""
    return f"{b / 2**20:g} MiB" if b >= 2**20 else f"{b / 1024:g} KiB"


def _pct(x):
    return f"{x:.2f}%"


def part_a(models):
    lines = ["## (a) What a uniform allocator wastes", "",
             "A uniform allocator (vLLM before its hybrid allocator) gives every token one page size "
             "and keeps it in every attending layer; a request's attention needs only what each layer "
             "group keeps (full: every token; sliding window W: the last W; chunked local C: the "
             "current chunk; cross-attention: the encoder's tokens, in the cross layers only). Waste = "
             "1 − needed / allocated, at one token per block as in the RFC's figure "
             f"([vllm-project/vllm#11382]({paper.RFC_URL})), from `pagesim model` (per GPU, bf16 KV, "
             "TP-1). Encoder tokens count in the allocated side as vLLM v0 kept them in the same pool.",
             "", "| model | groups | length n | RFC | pagesim | difference |", "|---|---|---|---|---|---|"]
    for name, rfc in paper.RFC_WASTE_PCT.items():
        m = models.get((name, 1, "auto"))
        if m is None:
            raise ResultsError(f"models/{name}.tp1.auto.json is missing")
        groups = ", ".join(f"{g['layers']} {g['kind']}" for g in m["groups_per_gpu"])
        if memory.encoder_tokens(m):
            n = memory.decoder_tokens_for_waste(m, rfc + 0.005)
            at_1 = memory.uniform_waste_pct(m, 1)
            why = (f"the RFC does not state its request; {rfc}% is pagesim's value at n = {n} text tokens "
                   f"beside {memory.encoder_tokens(m)} image tokens (4 tiles of 1601); the waste tends to "
                   f"32/40 = 80% as n → 0 ({_pct(at_1)} at n = 1) and falls as the text grows")
        else:
            n = m["max_seq_len"]
            why = "none: the RFC takes a request of the model's full context"
        lines.append(f"| {name} | {groups} | {n} | {rfc}% | {_pct(memory.uniform_waste_pct(m, n))} | {why} |")
    lines += ["", "The same waste by request length (— beyond the model's context; recurrent state is "
              "per sequence, outside the per-token pages):", "",
              "| model | " + " | ".join(str(n) for n in WASTE_LENGTHS) + " | recurrent state / seq |",
              "|---|" + "---|" * (len(WASTE_LENGTHS) + 1)]
    for name in WASTE_MODELS:
        m = models.get((name, 1, "auto"))
        if m is None:
            continue
        cells = [_pct(memory.uniform_waste_pct(m, n)) if n <= m["max_seq_len"] else "—" for n in WASTE_LENGTHS]
        state = memory.recurrent_state_bytes(m)
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {_size(state) if state else '—'} |")
    return lines + [""]


def part_b():
    return ["## (b) uniform vs hybrid vs jenga vs vattention", "",
            "This section compares the heterogeneous allocators on ShareGPT lengths and the Azure "
            "conversation trace (Gemma-2/3, Ministral, gpt-oss). It is written by the lead once the "
            "allocators (allocator/hetero/, allocator/vattention/) are merged; no number is given here "
            "until they run.", ""]


def part_c(models):
    lines = ["## (c) vAttention: worst-case waste per request", "",
             "vAttention maps physical pages on demand into one virtually contiguous K and one V buffer "
             "per layer and tensor-parallel worker; the worst case is a page just mapped and left unused "
             "in every buffer: tp · 2 · attending layers · page. Tokens per page = page / (KV heads per "
             "worker · head_dim · 2 bytes). From `pagesim model` (bf16 KV). Paper "
             f"([arXiv 2405.04437]({paper.VATTENTION_URL}), §7.4, Table 8): 64 KiB pages waste "
             f"{paper.VATTENTION_WASTE_RANGE_MB[64 * 1024][0]}–{paper.VATTENTION_WASTE_RANGE_MB[64 * 1024][1]} MB, "
             f"256 KiB {paper.VATTENTION_WASTE_RANGE_MB[256 * 1024][0]}–{paper.VATTENTION_WASTE_RANGE_MB[256 * 1024][1]} MB "
             f"per request over its models; tokens per page {paper.VATTENTION_BLOCK_RANGE[0]}–"
             f"{paper.VATTENTION_BLOCK_RANGE[1]}.", "",
             "| model | TP | tokens per page (64K / 128K / 256K / 2M) | worst waste 64K | 128K | 256K | 2M |",
             "|---|---|---|---|---|---|---|"]
    lo = {p: None for p in PAGE_SIZES}
    hi = {p: None for p in PAGE_SIZES}
    for (name, tp, dtype), m in sorted(models.items(), key=lambda kv: (kv[0][0] not in paper.VATTENTION_MODELS,
                                                                        kv[0][0], kv[0][1])):
        if dtype != "auto" or (name not in paper.VATTENTION_MODELS and tp != 1):
            continue
        per_page = []
        for p in PAGE_SIZES:
            t = memory.vattention_tokens_per_page(m, p)
            per_page.append("/".join(str(v) for v in sorted(set(t.values()))))
        wastes = [memory.vattention_worst_waste_bytes(m, p) for p in PAGE_SIZES]
        if name in paper.VATTENTION_MODELS:
            for p, w in zip(PAGE_SIZES, wastes):
                lo[p] = w if lo[p] is None else min(lo[p], w)
                hi[p] = w if hi[p] is None else max(hi[p], w)
        lines.append(f"| {name} | {tp} | {' / '.join(per_page)} | " + " | ".join(_size(w) for w in wastes) + " |")
    lines += [""]
    if lo[PAGE_SIZES[0]] is not None:
        lines += ["Over the paper's models: " + "; ".join(
            f"{_size(p)} pages {_size(lo[p])}–{_size(hi[p])}"
            + (f" (paper {paper.VATTENTION_WASTE_RANGE_MB[p][0]}–{paper.VATTENTION_WASTE_RANGE_MB[p][1]} MB)"
               if p in paper.VATTENTION_WASTE_RANGE_MB else "") for p in PAGE_SIZES) +
            ". The paper's MB are MiB (Yi-6B TP-1: 2 · 32 layers · 64 KiB = 4 MiB). Heterogeneous "
            "models: vAttention keeps a buffer per layer whatever its kind, so a sliding-window layer "
            "still maps pages for every token unless the pages behind the window are unmapped; "
            "whether the `vattention` allocator does is for part (b).", ""]
    return lines


def part_d(results, models):
    folder = os.path.join(results, "kv_dtype")
    path = os.path.join(folder, "sweep.csv")
    try:
        with open(path, newline="") as fh:
            rows = list(csv.DictReader(fh))
    except OSError as e:
        raise ResultsError(f"{path}: {e.strerror}") from None
    lines = ["## (d) KV precision: fp16 vs fp8 vs int4", "",
             "Llama-3-8B on one A100-80GB, the pool derived from memory (kv.slots 0), ShareGPT lengths, "
             "Poisson arrivals above saturation (experiments/heterogeneous_kv/kv_dtype.yaml; averages "
             "over scheduler iterations in the measurement window). fp8: 1 byte per element, per-tensor "
             "scales; int4: 4 bits plus an fp16 scale and zero per 32 elements (sim/cost/kv_dtype.h).", "",
             "| kv_dtype | KV bytes / token | slots | × fp16 | mean batch | req/s | tokens/s | TPOT p50 (ms) "
             "| token states % | free % | preemptions |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    base = None
    for row in rows:
        dtype = row.get("kv_dtype", "")
        summary = read_json(os.path.join(folder, row["point"], "summary.json"))
        if "kv_slots" not in summary:
            raise ResultsError(f"{folder}/{row['point']}/summary.json: no key 'kv_slots'")
        slots = summary["kv_slots"]
        base = slots if base is None else base
        m = models.get(("llama-3-8b", 1, dtype))
        bpt = m["kv_bytes_per_token_per_gpu"] if m else "?"
        lines.append(f"| {dtype} | {bpt} | {slots} | {slots / base:.2f} | {number(row, 'mean_batched_requests'):.1f} "
                     f"| {number(row, 'throughput_rps'):.3f} | {number(row, 'throughput_tokens_per_s'):.0f} "
                     f"| {1000 * number(row, 'tpot_s.p50'):.1f} | {number(row, 'memory_pct.token_states'):.1f} "
                     f"| {number(row, 'memory_pct.free'):.1f} | {int(number(row, 'preemptions'))} |")
    lines += ["", "fp8 doubles the slots exactly and int4 multiplies them by 3.2 (80 bytes per 128-element "
              "head vector instead of 256), up to whole blocks. The batch follows the pool while the pool "
              "is what binds (fp16 and fp8 run it ~97% full); throughput grows less than the batch because "
              "each step reads more KV and computes for more sequences (TPOT rises). At int4 the pool no "
              "longer fills: another limit of this setting (prefill admission at 8,192 batched tokens per "
              "iteration against longer iterations) binds first.", ""]
    return lines


def report(results, commit, date):
    """The report's Markdown lines. Raises ResultsError when a needed file or key is missing."""
    models = load_models(results)
    lines = ["# Heterogeneous KV memory (issue #15)", "",
             f"Generated by experiments/heterogeneous_kv/run_all.sh at commit {commit} on {date}; do not "
             "edit by hand.", ""]
    return lines + part_a(models) + part_b() + part_c(models) + part_d(results, models)
