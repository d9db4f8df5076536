"""A load test against pagesim, request by request: `pagesim trace compare MEASURED SIMULATED`.

MEASURED is the measured_requests.csv `pagesim trace import` writes from a benchmark's result
file (vLLM's `vllm bench serve --save-detailed` JSON or inference-perf's
per_request_lifecycle_metrics.json); SIMULATED a run of the trace.csv written beside it (the
run's folder, or its requests.csv). Both files have the columns ttft_s, tpot_s and e2e_s with
the same definitions (sim/metrics/request_record.h; traces/benchmark_requests.h), in seconds.

Per metric: mean, p50, p90 and p99 on each side (NumPy's default linear percentiles, as vLLM
and inference-perf report them), and the simulated value's difference from the measured one
in percent. TPOT counts requests with more than one output token (vLLM's rule); an empty
field (a latency the client did not measure) is left out.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import sys
from pathlib import Path
from typing import Any, Sequence

METRICS = (("ttft_s", "TTFT"), ("tpot_s", "TPOT"), ("e2e_s", "E2E"))
STATISTICS = ("mean", "p50", "p90", "p99")
COLUMNS = ("id", "output_tokens") + tuple(m for m, _ in METRICS)


class RequestsError(ValueError):
    """A requests file that cannot be compared; names the file, line and column."""


def percentile(ordered: Sequence[float], q: float) -> float:
    """NumPy's default (linear) percentile q in [0, 100] of non-empty, sorted `ordered`."""
    pos = (len(ordered) - 1) * q / 100.0
    lo = math.floor(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def summarize(values: Sequence[float]) -> dict[str, float] | None:
    """mean, p50, p90, p99 of `values`; None when there is none."""
    if not values:
        return None
    ordered = sorted(values)
    return {"mean": math.fsum(ordered) / len(ordered), "p50": percentile(ordered, 50),
            "p90": percentile(ordered, 90), "p99": percentile(ordered, 99)}


def requests_csv(path: Path) -> Path:
    """`path` itself, or a run folder's requests.csv."""
    if not path.is_dir():
        return path
    if (path / "requests.csv").is_file():
        return path / "requests.csv"
    if (path / "sweep.csv").is_file():
        raise RequestsError(f"{path}: a sweep's folder: name one point's folder (NN-label/) or its requests.csv")
    raise RequestsError(f"{path}: expected a run folder with requests.csv (the run needs output.requests_csv: true)")


def read(path: Path) -> dict[str, list[float]]:
    """The latencies of a requests file, per metric, in seconds (TPOT only for output > 1)."""
    path = requests_csv(path)
    try:
        with path.open(newline="") as f:
            reader = csv.DictReader(f)
            missing = [c for c in COLUMNS if c not in (reader.fieldnames or [])]
            if missing:
                raise RequestsError(f"{path}:1: header: expected the columns {', '.join(COLUMNS)}, "
                                    f"missing {', '.join(missing)}")
            out: dict[str, list[float]] = {m: [] for m, _ in METRICS}
            for row in reader:
                line = reader.line_num

                def number(column: str) -> float | None:
                    text = (row[column] or "").strip()
                    if not text:
                        return None
                    try:
                        value = float(text)
                    except ValueError:
                        value = math.nan
                    if not math.isfinite(value) or value < 0:
                        raise RequestsError(f"{path}:{line}: column '{column}': expected a number >= 0 or an empty "
                                            f"field, found {text!r}")
                    return value

                output = number("output_tokens")
                for metric, _ in METRICS:
                    v = number(metric)
                    if v is None or (metric == "tpot_s" and (output or 0) <= 1):
                        continue
                    out[metric].append(v)
    except FileNotFoundError:
        raise RequestsError(f"{path}: no such file") from None
    if not out["e2e_s"]:
        raise RequestsError(f"{path}: expected at least one request with an e2e_s value, found none")
    return out


def compare(measured: Path, simulated: Path) -> dict[str, Any]:
    """Per metric: the measured and simulated statistics and the difference in % of measured."""
    m, s = read(measured), read(simulated)
    result: dict[str, Any] = {"measured": str(measured), "simulated": str(simulated),
                              "requests": {"measured": len(m["e2e_s"]), "simulated": len(s["e2e_s"])},
                              "metrics": {}}
    for metric, _ in METRICS:
        a, b = summarize(m[metric]), summarize(s[metric])
        diff = None
        if a and b:
            diff = {k: (b[k] - a[k]) / a[k] * 100 if a[k] else None for k in STATISTICS}
        result["metrics"][metric] = {"measured": a, "simulated": b, "difference_pct": diff,
                                     "requests": {"measured": len(m[metric]), "simulated": len(s[metric])}}
    return result


def format_table(result: dict[str, Any]) -> str:
    """The comparison as a Markdown table, milliseconds."""
    lines = [f"measured: {result['measured']} ({result['requests']['measured']} requests)",
             f"simulated: {result['simulated']} ({result['requests']['simulated']} requests)", "",
             "| metric | statistic | measured (ms) | simulated (ms) | difference |", "|---|---|---:|---:|---:|"]
    for metric, name in METRICS:
        r = result["metrics"][metric]
        for stat in STATISTICS:
            a = f"{r['measured'][stat] * 1e3:.2f}" if r["measured"] else "-"
            b = f"{r['simulated'][stat] * 1e3:.2f}" if r["simulated"] else "-"
            d = r["difference_pct"][stat] if r["difference_pct"] else None
            lines.append(f"| {name} | {stat} | {a} | {b} | {'-' if d is None else f'{d:+.1f}%'} |")
    if result["requests"]["measured"] != result["requests"]["simulated"]:
        lines += ["", "note: the two sides hold different numbers of requests (a run stops at workload.duration_s "
                  "or max_requests, and requests.csv holds finished requests only)"]
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="pagesim trace compare", description=__doc__.split("\n\n")[0])
    ap.add_argument("measured", help="measured_requests.csv (pagesim trace import)")
    ap.add_argument("simulated", help="the run's folder or its requests.csv")
    ap.add_argument("--json", help="also write the comparison to this JSON file")
    args = ap.parse_args(argv)
    try:
        result = compare(Path(args.measured), Path(args.simulated))
    except RequestsError as e:
        print(f"pagesim trace compare: error: {e}", file=sys.stderr)
        return 1
    sys.stdout.write(format_table(result))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
    return 0
