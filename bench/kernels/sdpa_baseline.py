#!/usr/bin/env python3
"""PyTorch SDPA on contiguous KV: the outside baseline for pagesim_kernels_bench.

Runs torch.nn.functional.scaled_dot_product_attention over the same decode and prefill cases
as the C++ benchmark (contiguous K/V, no paging), timed the same way: CUDA events around each
call, 3 warm-ups, median of --repeats (>= 20) runs, L2 flushed (memset of twice its size)
before each run when the working set is below 256 MB. Decode counts bytes of K, V, Q read
and output written; prefill counts 4 * head_dim * visible (query, key) pairs * heads FLOPs.

Each case is written to --csv and --md as soon as it is measured (a run cut off by a time
limit keeps what it measured), and a case that raises (out of memory, an SDPA backend that
refuses the shape) is recorded as failed with its error while the others still run.

Usage: python3 sdpa_baseline.py [--csv FILE] [--md FILE] [--repeats N] [--quick]
torch is not a pagesim dependency: without torch or a GPU this prints why and exits 0 (1
without a GPU when PAGESIM_REQUIRE_GPU=1, as the GPU tests). Exits 1 when a case failed.
"""
import argparse
import csv
import os
import statistics
import sys

DECODE = [  # name, dtype, head_dim, batch, context, q_heads, kv_heads
    ("b64 x 4k, MHA 32/32", "f16", 128, 64, 4096, 32, 32),
    ("b64 x 4k, GQA 32/8", "f16", 128, 64, 4096, 32, 8),
    ("b1 x 64k, MHA 32/32", "f16", 128, 1, 65536, 32, 32),
    ("b1 x 64k, GQA 32/8", "f16", 128, 1, 65536, 32, 8),
    ("b256 x 1k, MHA", "f16", 128, 256, 1024, 32, 32),
    ("b8 x 16k, GQA 32/8", "f16", 128, 8, 16384, 32, 8),
    ("b64 x 4k, MHA, bf16", "bf16", 128, 64, 4096, 32, 32),
]
PREFILL = [  # name, dtype, head_dim, batch, query_len, history, q_heads, kv_heads
    ("1 x 4k causal, MHA 32/32", "f16", 128, 1, 4096, 0, 32, 32),
    ("1 x 4k causal, GQA 32/8", "f16", 128, 1, 4096, 0, 32, 8),
    ("1 x 4k causal, bf16", "bf16", 128, 1, 4096, 0, 32, 32),
    ("4 x 2k causal", "f16", 128, 4, 2048, 0, 32, 32),
    ("1 x 8k causal", "f16", 128, 1, 8192, 0, 32, 32),
    ("16 x 512 causal", "f16", 128, 16, 512, 0, 32, 32),
    ("1 x 512 over 8k history", "f16", 128, 1, 512, 8192, 32, 8),
]
FLUSH_BELOW = 256 * 1024 * 1024


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--csv", default="")
    ap.add_argument("--md", default="", help="also write the printed table to this file")
    ap.add_argument("--repeats", type=int, default=30)
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    if args.repeats < 20:
        sys.exit("sdpa_baseline.py: --repeats must be >= 20")
    try:
        import torch
        import torch.nn.functional as F
    except ImportError as e:
        print(f"sdpa_baseline.py: torch not available ({e}); nothing measured")
        return 0
    if not torch.cuda.is_available():
        print("sdpa_baseline.py: no CUDA device; nothing measured")
        return 1 if os.environ.get("PAGESIM_REQUIRE_GPU", "0") not in ("", "0") else 0
    dev = torch.device("cuda")
    props = torch.cuda.get_device_properties(dev)
    l2 = getattr(props, "L2_cache_size", 50 * 1024 * 1024)
    flush = torch.empty(2 * l2, dtype=torch.uint8, device=dev)
    dtypes = {"f16": torch.float16, "bf16": torch.bfloat16}

    def time_ms(fn, flush_each):
        for _ in range(3):
            fn()
        torch.cuda.synchronize()
        ms = []
        for i in range(args.repeats):
            if flush_each:
                flush.fill_(i & 0xFF)
            a = torch.cuda.Event(enable_timing=True)
            b = torch.cuda.Event(enable_timing=True)
            a.record()
            fn()
            b.record()
            b.synchronize()
            ms.append(a.elapsed_time(b))
        return statistics.median(ms), min(ms), max(ms)

    header = (f"device: {props.name}, {props.multi_processor_count} SMs, L2 {l2 >> 20} MiB; "
              f"torch {torch.__version__}; median of {args.repeats} runs, CUDA events")
    decode = DECODE[:3] if args.quick else DECODE
    prefill = PREFILL[:1] if args.quick else PREFILL

    def run_decode(name, dt, d, b, ctx, hq, hkv):
        t = dtypes[dt]
        q = torch.rand(b, hq, 1, d, dtype=t, device=dev) * 2 - 1
        k = torch.rand(b, hkv, ctx, d, dtype=t, device=dev) * 2 - 1
        v = torch.rand(b, hkv, ctx, d, dtype=t, device=dev) * 2 - 1
        gqa = hq != hkv
        fn = lambda: F.scaled_dot_product_attention(q, k, v, enable_gqa=gqa)  # noqa: E731
        nbytes = 2 * k.numel() * k.element_size() + 2 * q.numel() * q.element_size()
        med, lo, hi = time_ms(fn, nbytes < FLUSH_BELOW)
        return dict(kernel="decode", case=name, dtype=dt, head_dim=d, batch=b, context=ctx, query_len=1,
                    q_heads=hq, kv_heads=hkv, table="contiguous", algo="torch sdpa", median_ms=med,
                    min_ms=lo, max_ms=hi, bytes=nbytes, flops=0, value=nbytes / (med * 1e-3) / 1e12,
                    unit="TB/s", error="")

    def run_prefill(name, dt, d, b, ql, hist, hq, hkv):
        t = dtypes[dt]
        ctx = hist + ql
        q = torch.rand(b, hq, ql, d, dtype=t, device=dev) * 2 - 1
        k = torch.rand(b, hkv, ctx, d, dtype=t, device=dev) * 2 - 1
        v = torch.rand(b, hkv, ctx, d, dtype=t, device=dev) * 2 - 1
        gqa = hq != hkv
        if hist == 0:
            fn = lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=gqa)  # noqa: E731
        else:
            from torch.nn.attention.bias import causal_lower_right
            mask = causal_lower_right(ql, ctx)
            fn = lambda: F.scaled_dot_product_attention(q, k, v, attn_mask=mask, enable_gqa=gqa)  # noqa: E731
        pairs = ql * hist + ql * (ql + 1) / 2
        flops = 4.0 * d * pairs * hq * b
        ws = 2 * k.numel() * k.element_size() + 2 * q.numel() * q.element_size()
        med, lo, hi = time_ms(fn, ws < FLUSH_BELOW)
        return dict(kernel="prefill", case=name, dtype=dt, head_dim=d, batch=b, context=ctx, query_len=ql,
                    q_heads=hq, kv_heads=hkv, table="contiguous", algo="torch sdpa", median_ms=med,
                    min_ms=lo, max_ms=hi, bytes=ws, flops=flops, value=flops / (med * 1e-3) / 1e12,
                    unit="TFLOP/s", error="")

    fields = ["kernel", "case", "dtype", "head_dim", "batch", "context", "query_len", "q_heads", "kv_heads", "table",
              "algo", "median_ms", "min_ms", "max_ms", "bytes", "flops", "value", "unit", "error"]
    csv_file = open(args.csv, "w", newline="") if args.csv else None
    md_file = open(args.md, "w") if args.md else None
    writer = csv.DictWriter(csv_file, fieldnames=fields) if csv_file else None
    if writer:
        writer.writeheader()
        csv_file.flush()

    def emit(line):
        print(line, flush=True)
        if md_file:
            md_file.write(line + "\n")
            md_file.flush()

    emit(header)
    emit("")
    emit("| kernel | case | dtype | batch | context | q/kv heads | median ms | result |")
    emit("|---|---|---|---|---|---|---|---|")
    failed = 0
    cases = [(run_decode, "decode", c) for c in decode] + [(run_prefill, "prefill", c) for c in prefill]
    for run, kind, c in cases:
        try:
            r = run(*c)
            emit(f"| {r['kernel']} | {r['case']} | {r['dtype']} | {r['batch']} | {r['context']} | "
                 f"{r['q_heads']}/{r['kv_heads']} | {r['median_ms']:.4f} | {r['value']:.3f} {r['unit']} |")
        except Exception as e:  # one failing case must not lose the others
            failed += 1
            msg = f"{type(e).__name__}: {e}".replace("\n", " ").replace("|", "/")[:300]
            r = dict(kernel=kind, case=c[0], dtype=c[1], error=msg)
            emit(f"| {kind} | {c[0]} | {c[1]} | | | | | FAILED: {msg} |")
        if writer:
            writer.writerow(r)
            csv_file.flush()
        torch.cuda.empty_cache()
    for f in (csv_file, md_file):
        if f:
            f.close()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
