"""experiments/sim_to_real/REPORT.md from measured runs and pagesim's simulations of them.

Reads <results>/<variant>/<run>/client_metrics.json for the variants run_all.sh runs:
  roofline        cost.kind roofline (pagesim's default cost model), no fitted coefficient
  operators       cost.kind operators (measured operator tables), no fitted coefficient
  calibrated-in   operators + the calibration fitted on all runs (in sample)
  calibrated-loo  operators + for each run the calibration fitted on the other runs (out of
                  sample: leave one run out)
Every variant uses the streamed messages per token the calibration infers from the
measurements (a property of the client and server, not a latency coefficient).
The error of a value is |simulated − measured| / measured; a variant's figure for a
metric is the median over every stage of every run (BLIS's summary statistic).

With --operator-checks DIR, the report adds the operator checks found there
(<model>-<gpu>-operators.csv, written by `pagesim profile --device cuda`): the operators
cost.kind operators reads, timed on a GPU, beside the published tables' values for it.
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

import yaml

from .measured import METRICS, STATISTICS, load

VARIANTS = (
    ("roofline", "roofline, uncalibrated"),
    ("operators", "operators, uncalibrated"),
    ("calibrated-in", "operators, calibrated (in sample)"),
    ("calibrated-loo", "operators, calibrated (leave one run out)"),
)
SHORT = {"request_latency": "E2E", "time_to_first_token": "TTFT", "time_per_output_token": "TPOT",
         "inter_token_latency": "ITL"}
STAT_NAMES = {"mean": "mean", "median": "p50", "p90": "p90", "p99": "p99"}

# Peers' published median absolute percentage errors on held-out vLLM v0.15.1 runs.
PEERS = [
    ("BLIS trained-physics (inference-sim/inference-sim, docs/blog/posts/how-blis-learns-latency.md; "
     "36 held-out runs)", {"request_latency": 6.7, "inter_token_latency": 7.1, "time_to_first_token": 17.6}),
]


def ape(sim: float, meas: float) -> float:
    return abs(sim - meas) / abs(meas) * 100 if meas else float("inf")


def load_sim(results: Path, variant: str, run: str) -> list[dict[str, Any]] | None:
    path = results / variant / run / "client_metrics.json"
    if not path.is_file():
        return None
    return json.loads(path.read_text())["stages"]


def collect(measured: Path, results: Path) -> tuple[dict, dict]:
    runs = load(measured)
    table: dict[tuple[str, str, int, str, str], tuple[float, float]] = {}
    for variant, _ in VARIANTS:
        for name, run in runs.items():
            sim = load_sim(results, variant, name)
            if sim is None:
                if (results / variant).is_dir():  # the variant ran, but not for this run
                    raise ValueError(f"{results / variant / name / 'client_metrics.json'}: missing: run_all.sh "
                                     f"simulates every run of every variant it runs")
                continue
            stages = sorted(run["stages"], key=lambda s: s["stage"])
            if len(sim) != len(stages):
                raise ValueError(f"{results}/{variant}/{name}: {len(sim)} simulated stages, {len(stages)} measured")
            for s, m in zip(sim, stages):
                for metric in METRICS:
                    summary = s["latency_s"][metric]
                    if summary is None:
                        raise ValueError(f"{results}/{variant}/{name}: stage {m['stage']}: no simulated {metric}")
                    for stat in STATISTICS:
                        table[(variant, name, m["stage"], metric, stat)] = (
                            float(summary[stat]), float(m["latency_s"][metric][stat]))
    return runs, table


def medians(table, variant: str) -> dict[tuple[str, str], float]:
    out = {}
    for metric in METRICS:
        for stat in STATISTICS:
            errs = [ape(s, m) for (v, _, _, mt, st), (s, m) in table.items() if v == variant and mt == metric and st == stat]
            if errs:
                out[(metric, stat)] = statistics.median(errs)
    return out


def fmt_s(x: float) -> str:
    return f"{x * 1000:.3g}" if x * 1000 >= 0.1 else f"{x * 1e6:.3g} µs"


OPERATOR_NOTES = {
    "gemm_layer": "one layer's GEMMs, cuBLAS bf16 both sides",
    "lm_head": "the LM head GEMM, cuBLAS bf16 both sides",
    "context_attention": "pagesim paged_prefill vs vLLM's attention backend",
    "generation_attention": "pagesim paged_decode vs vLLM's attention backend",
}


def operator_check_lines(folder: Path) -> list[str]:
    """The report's section on the operator checks in `folder` (none: no lines)."""
    files = sorted(folder.glob("*-operators.csv")) if folder.is_dir() else []
    if not files:
        return []
    lines = ["", "## The operator tables checked on a GPU", "",
             "`pagesim profile --device cuda` times the operators `cost.kind: operators` reads on the GPU it "
             "runs on and sets the published table's value beside each (`sim/profile/operator_check.h`): "
             "measured / published, median and range over its points.", "",
             "| file | device | operator | points | median | range | what is compared |",
             "|---|---|---|---:|---:|---:|---|"]
    for f in files:
        text = f.read_text().splitlines()
        device = next((t[len("# device: "):].split(" (")[0] for t in text if t.startswith("# device: ")), "?")
        ratios: dict[str, list[float]] = {}
        rows = [t for t in text if t and not t.startswith("#")]
        header = rows[0].split(",")
        for row in rows[1:]:
            rec = dict(zip(header, row.split(",")))
            ratios.setdefault(rec["operator"], []).append(float(rec["ratio"]))
        for op, v in ratios.items():
            lines.append(f"| `{f.as_posix()}` | {device} | {op} | {len(v)} | {statistics.median(v):.2f} | "
                         f"{min(v):.2f}–{max(v):.2f} | {OPERATOR_NOTES.get(op, '')} |")
    lines += ["", "GEMMs within a few percent mean the tables' GEMM latencies hold on that device; attention "
              "compares pagesim's own kernels with the FlashAttention the tables measured "
              "(experiments/results/kernels-*.md), not the tables with themselves."]
    return lines


def render(measured: Path, results: Path, calibration: Path, command: str,
           operator_checks: Path | None = None) -> str:
    runs, table = collect(measured, results)
    lines = ["# pagesim against measured vLLM servers", "",
             f"Generated by `{command}`; do not edit. Method: `python/pagesim/reports/sim_to_real/` (module docs) and "
             "`experiments/sim_to_real/README.md`.", ""]
    med = {v: medians(table, v) for v, _ in VARIANTS}
    lines += ["## Median absolute percentage error over every stage of every run", "",
              "| cost model | " + " | ".join(f"{SHORT[m]} {STAT_NAMES[s]}" for m in METRICS for s in STATISTICS) + " |",
              "|---|" + "---:|" * (len(METRICS) * len(STATISTICS))]
    for v, label in VARIANTS:
        if med[v]:
            lines.append(f"| {label} | " + " | ".join(f"{med[v].get((m, s), float('nan')):.1f}%" for m in METRICS
                                                      for s in STATISTICS) + " |")
    for label, figs in PEERS:
        lines.append(f"| {label} | " + " | ".join(
            (f"{figs[m]:.1f}%" if s == "mean" and m in figs else "—") for m in METRICS for s in STATISTICS) + " |")
    loo = med["calibrated-loo"]
    if loo:
        lines += ["", "Out of sample (leave one run out), the means: "
                  + ", ".join(f"{SHORT[m]} {loo[(m, 'mean')]:.1f}%" for m in METRICS) + "."]
    lines += ["", "Notes on reading it:",
              "- Every metric is inference-perf's, over the streamed messages (two per generated token in "
              "these runs): TPOT and ITL are about half the engine's step, and the ITL p50 is the "
              "microseconds between a token's two messages, which pagesim emits at one instant (hence 100%).",
              "- The peers' figures are their medians over their own 36 held-out runs, not these six; BLIS's "
              "ITL is (E2E − TTFT) / (output − 1), the engine's step, where this report's ITL is "
              "inference-perf's.",
              "- The first stage of each Mixtral run holds a server stall of about a second (measured ITL max "
              "0.95–1.1 s, against 41–87 ms in every other stage), a warm-up pagesim does not model: those "
              "stages' measured TTFT means are several milliseconds higher than the steps explain.",
              "- Near saturation (Llama-2-7B at 20 req/s) an error in the step time is amplified: the batch "
              "grows with the latency it causes.",
              "- What is simulated and fitted, and the other limits: experiments/sim_to_real/README.md."]
    if calibration.is_file():
        cal = yaml.safe_load(calibration.read_text())
        lines += ["", f"## Calibration (`{calibration.as_posix()}`, fitted on all runs)", "",
                  "| key | value |", "|---|---:|"]
        lines += [f"| `{k}` | {v:.6g} |" for k, v in cal["values"].items()]
        lines += ["", f"Fit: {cal['fit']['objective']}; {cal['fit']['iterations']} iterations, "
                  f"rms error {cal['fit']['rms_error_pct']}%. Command: `{cal['fit']['command']}`."]
    if operator_checks is not None:
        lines += operator_check_lines(operator_checks)
    lines += ["", "## Per run, stage and metric", "",
              "Latencies in ms (µs where marked); error = |simulated − measured| / measured."]
    for name, run in runs.items():
        lines += ["", f"### {name}", "",
                  f"{run['server']['model']}, TP {run['server']['tensor_parallel']}, {run['hardware']}; "
                  f"shared_prefix {run['client']['data_resolved']['shared_prefix']}.", ""]
        head = "| stage | metric | measured | " + " | ".join(f"{lbl} | err" for _, lbl in VARIANTS) + " |"
        lines += [head, "|---|---|---:|" + "---:|---:|" * len(VARIANTS)]
        for st in sorted(run["stages"], key=lambda s: s["stage"]):
            for metric in METRICS:
                for stat in STATISTICS:
                    row = f"| {st['stage']} ({st['rate_per_s']:g}/s) | {SHORT[metric]} {STAT_NAMES[stat]} | "
                    meas = float(st["latency_s"][metric][stat])
                    row += fmt_s(meas) + " |"
                    for v, _ in VARIANTS:
                        pair = table.get((v, name, st["stage"], metric, stat))
                        row += (f" {fmt_s(pair[0])} | {ape(*pair):.1f}% |" if pair else " — | — |")
                    lines.append(row)
    return "\n".join(lines) + "\n"


def write(measured: Path, results: Path, calibration: Path, out: Path, command: str,
          operator_checks: Path | None = None) -> None:
    text = render(measured, results, calibration, command, operator_checks)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text(text)
    tmp.replace(out)
