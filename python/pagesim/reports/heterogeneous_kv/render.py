"""The heterogeneous-KV report's text, from a results folder of run_all.sh:

  RESULTS/models/NAME.tpT.DTYPE.json   `pagesim model NAME --tp T --kv-dtype DTYPE`
  RESULTS/kv_dtype/                    the kv_dtype.yaml sweep (sweep.csv, POINT/summary.json)

Every number comes from those files or from paper.py. report() returns the Markdown lines.
"""
import csv
import glob
import os

from pagesim.reports.load import ResultsError, number, read_json

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


# Part (b): the models in the order of the sweep files' cases, and the allocators.
ALLOCATOR_MODELS = ("gemma-2-9b", "gemma-3-27b", "ministral-8b", "gpt-oss-120b")
ALLOCATORS = ("uniform", "hybrid", "jenga", "vattention")
ALLOCATOR_WORKLOADS = (("allocators_sharegpt", "ShareGPT lengths (synthetic Poisson arrivals, 30 req/s)"),
                       ("allocators_azure", "Azure conversation trace (arrivals compressed 10×)"))


def load_allocator_rows(results, folder):
    """{(model, allocator): sweep.csv row} of one part-(b) sweep."""
    path = os.path.join(results, folder, "sweep.csv")
    try:
        with open(path, newline="") as fh:
            rows = list(csv.DictReader(fh))
    except OSError as e:
        raise ResultsError(f"{path}: {e.strerror}") from None
    out = {}
    for row in rows:
        for key in ("model", "gpu", "allocator.kind"):
            if key not in row:
                raise ResultsError(f"{path}: no column {key!r}")
        out[(row["model"], row["allocator.kind"])] = row
    for m in ALLOCATOR_MODELS:
        for a in ALLOCATORS:
            if (m, a) not in out:
                raise ResultsError(f"{path}: no point for model {m}, allocator.kind {a}")
    return out


def part_b(results):
    lines = ["## (b) uniform vs hybrid vs jenga vs vattention", "",
             "Each model on a GPU that holds its weights with room for KV (Gemma-2-9B and Ministral-8B: "
             "A100-80GB; Gemma-3-27B and gpt-oss-120b: H200), the KV pool derived from memory (kv.slots 0: "
             "the same bytes for every allocator), scheduler vllm-v1, prefix caching off, block size 16, "
             "vattention with 2 MiB pages and 256 request slots "
             "(experiments/heterogeneous_kv/allocators_sharegpt.yaml, allocators_azure.yaml; 60 simulated "
             "seconds, averages over scheduler iterations from 20 s on). Shares are % of the pool's bytes: "
             "token states (KV an attention layer still reads), out of window (KV of sliding-window layers "
             "for tokens behind the window, kept but never read again), rounding (unfilled ends of pages, "
             "and hybrid's padded KV cache groups). Throughput: generated tokens per simulated second.", ""]
    for folder, title in ALLOCATOR_WORKLOADS:
        rows = load_allocator_rows(results, folder)
        lines += [f"### {title}", "",
                  "| model | GPU | allocator | token states % | out of window % | rounding % | free % | mean batch "
                  "| tokens/s | × uniform | preemptions |", "|---|---|---|---|---|---|---|---|---|---|---|"]
        for m in ALLOCATOR_MODELS:
            base = number(rows[(m, "uniform")], "throughput_tokens_per_s")
            for a in ALLOCATORS:
                row = rows[(m, a)]
                oow = row.get("layer_classes.memory_pct.out_of_window")
                if oow is None:
                    raise ResultsError(f"{folder}/sweep.csv: no column 'layer_classes.memory_pct.out_of_window'")
                tps = number(row, "throughput_tokens_per_s")
                lines.append(f"| {m} | {row['gpu']} | {a} | {number(row, 'memory_pct.token_states'):.1f} "
                             f"| {float(oow):.1f} | {number(row, 'memory_pct.rounding'):.1f} "
                             f"| {number(row, 'memory_pct.free'):.1f} | {number(row, 'mean_batched_requests'):.1f} "
                             f"| {tps:.0f} | {tps / base:.2f} | {int(number(row, 'preemptions'))} |")
        lines += [""]
    lines += _jenga_comparison(results)
    return lines


def _jenga_comparison(results):
    ratios = []
    gains = []
    cells = []
    for folder, title in ALLOCATOR_WORKLOADS:
        rows = load_allocator_rows(results, folder)
        for m in ALLOCATOR_MODELS:
            u, j = rows[(m, "uniform")], rows[(m, "jenga")]
            r = number(j, "throughput_tokens_per_s") / number(u, "throughput_tokens_per_s")
            g = number(j, "memory_pct.token_states") - number(u, "memory_pct.token_states")
            ratios.append(r)
            gains.append(g)
            cells.append(f"| {title.split(' (')[0]} | {m} | {round(g, 1) + 0.0:+.1f} | {r:.2f}× |")
    mean = sum(ratios) / len(ratios)
    return ["### Beside the Jenga paper", "",
            f"Jenga ([arXiv 2503.18292]({paper.JENGA_URL}), abstract) against vLLM's PagedAttention "
            "(pagesim's `uniform`): memory utilization up to "
            f"+{paper.JENGA_MEMORY_UTILIZATION_GAIN_PCT}%, serving throughput up to "
            f"{paper.JENGA_THROUGHPUT_MAX:.2f}× ({paper.JENGA_THROUGHPUT_MEAN:.2f}× on average). pagesim, jenga "
            "against uniform on the runs above:", "",
            "| workload | model | token states, jenga − uniform (points) | throughput, jenga / uniform |",
            "|---|---|---|---|"] + cells + [
            "", f"pagesim: token-state share up to {max(gains):+.1f} points, throughput up to "
            f"{max(ratios):.2f}× ({mean:.2f}× on average over these {len(ratios)} runs), against the paper's "
            f"{paper.JENGA_THROUGHPUT_MAX:.2f}× and {paper.JENGA_THROUGHPUT_MEAN:.2f}×. The settings match only in "
            "kind, and the differences follow from what differs: (1) the paper measures the highest "
            "throughput each system sustains; these runs offer one fixed load for 60 s, so a system that "
            "fits more requests shows its gain as fewer preemptions and a larger batch more than as "
            "finished tokens, and the ratio is bounded by the offered load; (2) the gain grows with the "
            "share of tokens behind the window: ShareGPT and the Azure conversations are short (mostly "
            "under 2k tokens), so Gemma-2's 4096-token window drops little (about 8% of the pool on "
            "ShareGPT, nothing on Azure) and Ministral's 32768-token window nothing (hybrid = jenga = "
            "uniform there), while Gemma-3 (1024-token window in 52 of 62 layers) and gpt-oss (128-token "
            "window in half the layers) gain most; the paper's maximum is its best case over its models "
            "and datasets (which one gives 4.92× is not checked here), and part (a) shows where uniform "
            "waste is largest: long contexts and the vision model's encoder tokens; (3) pagesim's jenga and hybrid differ only where vLLM's KV cache groups pad "
            "(Gemma-3: its 52 sliding-window layers fill 6 KV cache groups of 10 layers, 8 of them empty, "
            "so about a tenth of the pool is rounding), which Jenga's LCM pages avoid; "
            "(4) jenga's customized prefix-cache eviction is off here (no prefix caching), so its cache "
            "gains are not in these numbers. vattention keeps every token of a sliding-window layer "
            "mapped (it unmaps only when a request ends) and rounds each per-layer buffer up to a 2 MiB "
            "page, so on these short requests it holds fewer attended tokens than uniform; with gpt-oss "
            "its 256 request slots, not memory, bound the batch (and on the Azure trace gpt-oss's pool "
            "is not full under hybrid and jenga: free memory, not a lack of it, is what their gain "
            "shows there).", ""]


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
    return lines + part_a(models) + part_b(results) + part_c(models) + part_d(results, models)
