#!/usr/bin/env python3
"""pagesim's vLLM KV budget (kv.engine vllm, sim/cost/vllm_kv_budget.h) against vLLM's own start-up logs.

Reads logs.csv (one published log per row: the settings it ran with, the figures it printed),
asks `pagesim model ... --gpu ...` for each row's budget, and writes REPORT.md: per log the
logged and predicted terms and the error of the KV pool (tokens where the log gives them, else
available KV GiB). Exit status 1 when a row is malformed (the message names the file, the row
and the field).

    experiments/engine_parity/kv_capacity/check.py PAGESIM [--logs logs.csv] [--report REPORT.md]
"""
import argparse
import csv
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

# Settings a row must give (a log whose settings are not all known cannot be checked).
SETTINGS = ["id", "vllm_version", "gpu", "model", "dtype", "kv_dtype", "tp", "gpu_memory_utilization",
            "max_model_len", "max_num_batched_tokens", "max_num_seqs", "block_size", "source"]
# Figures a row must give; kv_cache_tokens and max_concurrency are optional (older reports
# quote GiB only).
FIGURES = ["weights_gib", "activation_gib", "non_torch_gib", "kv_cache_gib"]
OPTIONAL = ["kv_cache_tokens", "max_concurrency", "defaults"]
DTYPES = {"bf16", "fp16"}  # the model dtype pagesim's presets hold (2 bytes)
TARGET_MEDIAN, TARGET_MAX = 1.0, 3.0  # |error| in percent


class LogError(Exception):
    """A malformed row of the logs file: names the file, the line and the field."""


def read_logs(path):
    """The rows of `path` as dicts with typed values; raises LogError naming file and field."""
    with open(path, newline="") as f:
        lines = [(n, line) for n, line in enumerate(f, 1) if line.strip() and not line.startswith("#")]
    if not lines:
        raise LogError(f"{path}: no header row")
    reader = csv.reader([line for _, line in lines])
    header = next(reader)
    missing = [c for c in SETTINGS + FIGURES if c not in header]
    if missing:
        raise LogError(f"{path}:{lines[0][0]}: header lacks the column(s) {', '.join(missing)}")
    rows = []
    for (number, _), cells in zip(lines[1:], reader):
        if len(cells) != len(header):
            raise LogError(f"{path}:{number}: {len(cells)} cells, expected {len(header)} ({', '.join(header)})")
        row = dict(zip(header, (c.strip() for c in cells)))
        where = f"{path}:{number} ({row.get('id') or 'no id'})"
        for field in SETTINGS + FIGURES:
            if row[field] == "":
                raise LogError(f"{where}: field '{field}' is empty; every setting and figure must be given "
                               "(a default marked in 'defaults', cited in README.md)")
        if row["dtype"] not in DTYPES:
            raise LogError(f"{where}: field 'dtype' is '{row['dtype']}', expected one of {sorted(DTYPES)}")
        try:
            for field in ["tp", "max_model_len", "max_num_batched_tokens", "max_num_seqs", "block_size"]:
                row[field] = int(row[field])
            for field in ["gpu_memory_utilization"] + FIGURES:
                row[field] = float(row[field])
            row["kv_cache_tokens"] = int(row["kv_cache_tokens"]) if row.get("kv_cache_tokens") else None
            row["max_concurrency"] = float(row["max_concurrency"]) if row.get("max_concurrency") else None
        except ValueError as e:
            raise LogError(f"{where}: {e}") from None
        rows.append(row)
    return rows


def predict(pagesim, row):
    """pagesim's kv_budget for the row's settings (the JSON object)."""
    cmd = [pagesim, "model", row["model"], "--tp", str(row["tp"]), "--kv-dtype", row["kv_dtype"],
           "--gpu", row["gpu"], "--vllm-version", row["vllm_version"],
           "--gpu-memory-utilization", repr(row["gpu_memory_utilization"]),
           "--max-num-batched-tokens", str(row["max_num_batched_tokens"]),
           "--max-num-seqs", str(row["max_num_seqs"]), "--block-size", str(row["block_size"]),
           "--max-model-len", str(row["max_model_len"])]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise LogError(f"{row['id']}: {' '.join(cmd)} exited {p.returncode}: {p.stderr.strip()}")
    return json.loads(p.stdout)["kv_budget"]


def compare(pagesim, rows):
    """One result per row: the logged and predicted figures and the KV pool's error (%)."""
    out = []
    for row in rows:
        b = predict(pagesim, row)
        if row["kv_cache_tokens"]:
            logged, predicted, unit = row["kv_cache_tokens"], b["kv_cache_tokens"], "tokens"
        else:
            logged, predicted, unit = row["kv_cache_gib"], b["kv_cache_bytes"] / 2**30, "GiB"
        out.append({"row": row, "budget": b, "unit": unit, "error_pct": 100.0 * (predicted - logged) / logged})
    return out


def summary(results):
    errors = [abs(r["error_pct"]) for r in results]
    return statistics.median(errors), max(errors)


def report(results, logs_name):
    med, worst = summary(results)
    lines = [
        "# KV pool: pagesim's vLLM budget against vLLM's start-up logs",
        "",
        f"Generated by `experiments/engine_parity/kv_capacity/check.py` from `{logs_name}` (sources and",
        "settings in README.md); pagesim's terms from `pagesim model MODEL --gpu ... --vllm-version ...`",
        "(sim/cost/vllm_kv_budget.h). GiB per GPU; error of the KV pool in tokens where the log gives",
        "them, else of the available KV GiB.",
        "",
        f"**{len(results)} logs: median |error| {med:.2f}%, max {worst:.2f}%** "
        f"(target: median <= {TARGET_MEDIAN:g}%, max <= {TARGET_MAX:g}%).",
        "",
        "| log | vLLM | model | TP | util | weights log / pagesim | activation | non-torch | KV GiB | "
        "KV tokens | error |",
        "|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for r in results:
        row, b = r["row"], r["budget"]
        tokens = f"{row['kv_cache_tokens']:,} / {b['kv_cache_tokens']:,}" if row["kv_cache_tokens"] else \
            f"— / {b['kv_cache_tokens']:,}"
        lines.append(
            f"| {row['id']} | {row['vllm_version']} | {row['model']} | {row['tp']} | {row['gpu_memory_utilization']:g} | "
            f"{row['weights_gib']:.2f} / {b['weights_gib']:.2f} | {row['activation_gib']:.2f} / {b['activation_gib']:.2f} | "
            f"{row['non_torch_gib']:.2f} / {b['non_torch_gib']:.2f} | {row['kv_cache_gib']:.2f} / {b['kv_cache_gib']:.2f} | "
            f"{tokens} | {r['error_pct']:+.2f}% ({r['unit']}) |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("pagesim")
    ap.add_argument("--logs", default=os.path.join(HERE, "logs.csv"))
    ap.add_argument("--report", default=os.path.join(HERE, "REPORT.md"))
    args = ap.parse_args(argv)
    try:
        results = compare(args.pagesim, read_logs(args.logs))
    except LogError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    with open(args.report, "w") as f:
        f.write(report(results, os.path.basename(args.logs)))
    med, worst = summary(results)
    print(f"{len(results)} logs: median |error| {med:.2f}%, max {worst:.2f}% -> {args.report}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
