"""experiments/sim_to_real/REPORT.md from measured runs and pagesim's simulations of them.

Reads <results>/<variant>/<run>/client_metrics.json for the variants run_all.sh runs:
  roofline        cost.kind roofline (pagesim's default cost model), no fitted coefficient
  operators       cost.kind operators (measured operator tables), no fitted coefficient
  calibrated-in   operators + the calibration fitted on all runs (in sample)
  calibrated-lomo operators + for each run the calibration fitted on the other models' runs
                  (transfer to a model never fitted: the headline)
  calibrated-lotp the same leaving out the run's TP degree (run only where the TP degrees do
                  not split the runs as the models do)
  calibrated-loo  operators + for each run the calibration fitted on the other runs (leave one
                  run out; the same model's other runs stay in the fit)
  lomo-<ablation> leave one model out with one term removed or the previous method restored,
                  fitted again without it (ABLATIONS)
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
    ("calibrated-lomo", "operators, calibrated (leave one model out)"),
    ("calibrated-lotp", "operators, calibrated (leave one TP degree out)"),
    ("calibrated-loo", "operators, calibrated (leave one run out)"),
    ("calibrated-in", "operators, calibrated (in sample)"),
    ("operators", "operators, uncalibrated"),
    ("roofline", "roofline, uncalibrated"),
)
# Leave one model out with one term taken away (or the previous method restored), refitted.
ABLATIONS = (
    ("lomo-no-memory-ops", "without the memory ops (norms, activation, embedding: cost.operators.memory_ops false)"),
    ("lomo-gpu-scale-fitted", "cost.operators.gpu_scale fitted as well (the previous method)"),
    ("lomo-fit-to-means", "fitted to per-stage means, not medians (the previous method)"),
    ("lomo-kv-pagesim", "the KV pool by pagesim's own formula (kv.engine: pagesim), same calibration"),
)
ALL_VARIANTS = VARIANTS + ABLATIONS
PER_RUN_VARIANTS = ("calibrated-lomo", "calibrated-loo", "calibrated-in", "operators", "roofline")
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
    for variant, _ in ALL_VARIANTS:
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


def medians(table, variant: str, runs: set[str] | None = None) -> dict[tuple[str, str], float]:
    """(metric, statistic) -> the median APE over every stage of `runs` (default all)."""
    out = {}
    for metric in METRICS:
        for stat in STATISTICS:
            errs = [ape(s, m) for (v, r, _, mt, st), (s, m) in table.items()
                    if v == variant and mt == metric and st == stat and (runs is None or r in runs)]
            if errs:
                out[(metric, stat)] = statistics.median(errs)
    return out


def signed_medians(table, variant: str, runs: set[str]) -> dict[str, float]:
    """metric -> the median signed error (%) of its per-stage mean over `runs`."""
    out = {}
    for metric in METRICS:
        errs = [100 * (s - m) / m for (v, r, _, mt, st), (s, m) in table.items()
                if v == variant and mt == metric and st == "mean" and r in runs]
        if errs:
            out[metric] = statistics.median(errs)
    return out


def noise_floor(runs: dict[str, dict[str, Any]]) -> list[tuple[str, int, str, float]]:
    """(run, stage, metric, standard error of the stage's mean in % of it) for E2E, TTFT and TPOT.

    Each configuration ran once, so run-to-run spread at equal settings cannot be measured;
    what the data give is the sampling error of a stage mean: sd / sqrt(requests), the sd
    estimated from the measured p10-p90 spread as for a normal distribution (p90 - p10 =
    2.563 sd). A heavier tail (a stall) makes the true error larger."""
    out = []
    for name, run in runs.items():
        for st in sorted(run["stages"], key=lambda s: s["stage"]):
            n = st["requests_ok"]
            for metric in ("request_latency", "time_to_first_token", "time_per_output_token"):
                lat = st["latency_s"][metric]
                sd = (lat["p90"] - lat["p10"]) / 2.563
                out.append((name, st["stage"], metric, 100 * sd / (n ** 0.5) / lat["mean"]))
    return out


PEER_METRICS = {"e2e_mean": ("request_latency", "mean"), "e2e_p90": ("request_latency", "p90"),
                "e2e_p99": ("request_latency", "p99"), "ttft_mean": ("time_to_first_token", "mean"),
                "ttft_p90": ("time_to_first_token", "p90"), "ttft_p99": ("time_to_first_token", "p99"),
                "itl_mean": None}


def read_peers(path: Path) -> list[dict[str, str]]:
    """The rows of a peer file (experiments/sim_to_real/peers/README.md), '#' lines skipped."""
    import csv
    text = path.read_text().splitlines()
    rows = list(csv.DictReader(t for t in text if not t.startswith("#")))
    need = {"simulator", "stage_index", "metric_name", "predicted", "actual"}
    if not rows or not need <= set(rows[0]):
        raise ValueError(f"{path}: expected the columns {', '.join(sorted(need))}")
    return rows


def peer_lines(path: Path, run: str, runs: dict[str, dict[str, Any]], table) -> list[str]:
    """The same-rows table: pagesim's leave-one-model-out prediction of `run` beside the peers'."""
    rows = read_peers(path)
    sims = sorted({r["simulator"] for r in rows})
    stages = {st["stage"]: st for st in runs[run]["stages"]}

    def pagesim(stage: int, metric: str, actual: float) -> float | None:
        spec = PEER_METRICS.get(metric, "missing")
        if spec == "missing" or stage not in stages:
            return None
        if spec is not None:
            pair = table.get(("calibrated-lomo", run, stage, spec[0], spec[1]))
            return 1000 * pair[0] if pair else None
        e2e = table.get(("calibrated-lomo", run, stage, "request_latency", "mean"))
        ttft = table.get(("calibrated-lomo", run, stage, "time_to_first_token", "mean"))
        if not e2e or not ttft:
            return None
        return actual * (e2e[0] - ttft[0]) / (e2e[1] - ttft[1])

    keys = sorted({(int(r["stage_index"]), r["metric_name"]) for r in rows if int(r["stage_index"]) in stages},
                  key=lambda k: (k[0], list(PEER_METRICS).index(k[1]) if k[1] in PEER_METRICS else 99))
    lines = ["| stage | metric | actual (ms) | pagesim, leave one model out | "
             + " | ".join(sims) + " |", "|---|---|---:|---:|" + "---:|" * len(sims)]
    errs: dict[str, list[float]] = {}
    for stage, metric in keys:
        here = {r["simulator"]: r for r in rows if int(r["stage_index"]) == stage and r["metric_name"] == metric}
        actual = float(next(iter(here.values()))["actual"])
        mine = pagesim(stage, metric, actual)
        cells = []
        for name in ["pagesim"] + sims:
            pred = mine if name == "pagesim" else (float(here[name]["predicted"]) if name in here else None)
            if pred is None:
                cells.append("—")
                continue
            e = ape(pred, actual)
            errs.setdefault(name, []).append(e)
            cells.append(f"{pred:.4g} ({e:.1f}%)")
        lines.append(f"| {stage} | {metric} | {actual:.4g} | " + " | ".join(cells) + " |")
    lines.append("| | median APE | | " + " | ".join(
        f"{statistics.median(errs[n]):.1f}% ({len(errs[n])})" if n in errs else "—" for n in ["pagesim"] + sims) + " |")
    return lines


def fmt_s(x: float) -> str:
    return f"{x * 1000:.3g}" if x * 1000 >= 0.1 else f"{x * 1e6:.3g} µs"


OPERATOR_NOTES = {
    "gemm_layer": "one layer's GEMMs, cuBLAS bf16 both sides",
    "lm_head": "the LM head GEMM, cuBLAS bf16 both sides",
    "context_attention": "pagesim paged_prefill vs vLLM's attention backend",
    "generation_attention": "pagesim paged_decode vs vLLM's attention backend",
    "moe": "one MoE block's fused experts: cuBLAS per expert, tokens spread evenly, vs vLLM's fused_moe "
           "under power-law routing",
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


def error_header() -> list[str]:
    return ["| cost model | " + " | ".join(f"{SHORT[m]} {STAT_NAMES[s]}" for m in METRICS for s in STATISTICS) + " |",
            "|---|" + "---:|" * (len(METRICS) * len(STATISTICS))]


def error_row(label: str, med: dict[tuple[str, str], float]) -> str:
    return f"| {label} | " + " | ".join(f"{med.get((m, s), float('nan')):.1f}%" for m in METRICS
                                        for s in STATISTICS) + " |"


def calibration_lines(path: Path, title: str) -> list[str]:
    from .calibrate import MEANINGS
    cal = yaml.safe_load(path.read_text())
    lines = ["", f"### {title} (`{path.as_posix()}`)", "", "| key | value | what it is |", "|---|---:|---|"]
    lines += [f"| `{k}` | {v:.6g} | {MEANINGS.get(k, '')} |" for k, v in cal["values"].items()]
    fit = cal["fit"]
    lines += ["", f"Fitted on {len(fit['runs'])} runs; {fit['objective']}; {fit['iterations']} iterations, "
              f"rms error {fit['rms_error_pct']}%. Command: `{fit['command']}`."]
    return lines


def render(measured: Path, results: Path, calibration: Path, command: str,
           operator_checks: Path | None = None, peers: Path | None = None) -> str:
    from .measured import groups
    runs, table = collect(measured, results)
    by_model = groups(runs, "model")
    by_tp = groups(runs, "tp")
    same_split = sorted(map(sorted, by_model.values())) == sorted(map(sorted, by_tp.values()))
    lines = ["# pagesim against measured vLLM servers", "",
             f"Generated by `{command}`; do not edit. Method: `python/pagesim/reports/sim_to_real/` (module docs) and "
             "`experiments/sim_to_real/README.md`.", ""]
    med = {v: medians(table, v) for v, _ in ALL_VARIANTS}
    lomo = med["calibrated-lomo"]
    lines += ["## Transfer to a model never fitted: median absolute percentage error over every stage of every run",
              "",
              "The headline is leave one model out: each run is predicted with the coefficients fitted on the "
              "other models' runs only, so nothing of its model, TP degree or workload was fitted. Leave one run "
              "out, the figure this report used to lead with, keeps the same model's other runs in the fit.", ""]
    lines += error_header()
    for v, label in VARIANTS:
        if med[v]:
            lines.append(error_row(label, med[v]))
        elif v == "calibrated-lotp" and same_split and lomo:
            lines.append(f"| {label} | " + " | ".join(["= leave one model out"] + [""] * (len(METRICS) * len(STATISTICS) - 1))
                         + " |")
    for label, figs in PEERS:
        lines.append(f"| {label} | " + " | ".join(
            (f"{figs[m]:.1f}%" if s == "mean" and m in figs else "—") for m in METRICS for s in STATISTICS) + " |")
    if lomo:
        lines += ["", "Leave one model out, the means: "
                  + ", ".join(f"{SHORT[m]} {lomo[(m, 'mean')]:.1f}%" for m in METRICS) + " (targets: 5% on E2E, "
                  "TPOT and ITL, 10% on TTFT)."]
    if same_split:
        lines += ["", "Each model of these runs ran at one TP degree ("
                  + "; ".join(f"{g}: {', '.join(sorted({runs[r]['server']['model'] for r in rs}))}"
                              for g, rs in by_tp.items())
                  + "), so fitting one TP degree and predicting the other is leaving one model out: one fit, one row."]
    if lomo:
        lines += ["", "### Both ways", "",
                  "| fitted on | predicted | TP | stages | E2E mean | TTFT mean | TPOT mean | ITL mean | E2E p90 | "
                  "E2E p99 | TTFT p90 | TTFT p99 |", "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for group, members in by_model.items():
            m = medians(table, "calibrated-lomo", set(members))
            others = sorted({runs[r]["server"]["model"] for r in runs if r not in members})
            tps = sorted({runs[r]["server"]["tensor_parallel"] for r in members})
            stages = sum(len(runs[r]["stages"]) for r in members)
            lines.append(f"| {', '.join(others)} | {runs[members[0]]['server']['model']} | "
                         f"{', '.join(map(str, tps))} | {stages} | "
                         + " | ".join(f"{m[(mt, st)]:.1f}%" for mt, st in (
                             ("request_latency", "mean"), ("time_to_first_token", "mean"),
                             ("time_per_output_token", "mean"), ("inter_token_latency", "mean"),
                             ("request_latency", "p90"), ("request_latency", "p99"),
                             ("time_to_first_token", "p90"), ("time_to_first_token", "p99"))) + " |")
        lines += ["", "### The sign of what is left, by model and TP degree", "",
                  "Median signed error of the per-stage means, leave one model out (+: pagesim predicts higher).",
                  "", "| model | TP | " + " | ".join(f"{SHORT[m]} mean" for m in METRICS) + " |",
                  "|---|---:|" + "---:|" * len(METRICS)]
        for group, members in by_model.items():
            for tp_group, tp_members in by_tp.items():
                both = set(members) & set(tp_members)
                if not both:
                    continue
                sg = signed_medians(table, "calibrated-lomo", both)
                lines.append(f"| {runs[members[0]]['server']['model']} | {tp_group[2:]} | "
                             + " | ".join(f"{sg[m]:+.1f}%" for m in METRICS) + " |")
    if any(med[v] for v, _ in ABLATIONS) and lomo:
        lines += ["", "## The terms, one at a time", "",
                  "Each row leaves one model out as the headline does, with one term taken away or the previous "
                  "method restored and the coefficients fitted again without it (median APE over every stage of "
                  "every run).", ""]
        lines += error_header()
        lines.append(error_row("all terms (the headline)", lomo))
        for v, label in ABLATIONS:
            if med[v]:
                lines.append(error_row(label + (" — no effect on these runs" if med[v] == lomo else ""), med[v]))
        ablation_dir = calibration.parent / "ablation"
        fits = sorted(ablation_dir.glob("*/*.yaml")) if ablation_dir.is_dir() else []
        if fits:
            lines += ["", "What each ablation's fits found (the coefficients differ from the headline's where a "
                      "term is taken away):", "", "| ablation | fitted without | values |", "|---|---|---|"]
            for f in fits:
                values = yaml.safe_load(f.read_text())["values"]
                lines.append(f"| {f.parent.name} | {f.stem} | " + ", ".join(
                    f"`{k}` {v:.4g}" for k, v in values.items() if k != "client.stream_events_per_token") + " |")
    floor = noise_floor(runs)
    if floor:
        lines += ["", "## The noise floor the data allow", "",
                  "Each configuration ran once (one model, workload and rate per stage), so the spread between "
                  "repeated runs at equal settings cannot be measured from these runs. What they do give is the "
                  "sampling error of each stage's mean: its standard deviation over the square root of the "
                  "requests, the deviation estimated from the measured p10-p90 spread (p90 - p10 = 2.563 sd for a "
                  "normal distribution; a heavy tail such as the Mixtral warm-up stall makes it larger).", "",
                  "| metric | median | max | stages |", "|---|---:|---:|---:|"]
        for metric in ("request_latency", "time_to_first_token", "time_per_output_token"):
            v = [e for _, _, mt, e in floor if mt == metric]
            lines.append(f"| {SHORT[metric]} mean | {statistics.median(v):.2f}% | {max(v):.2f}% | {len(v)} |")
        lines += ["", "So a stage mean is known to a fraction of a percent: the errors above are the model's, not "
                  "the measurements' noise. The stages at equal rates of different workloads differ by their "
                  "lengths, not by chance, and are not a spread."]
    if peers is not None and peers.is_file():
        run = next((r for r in runs if r.endswith("155451-llama-2-7b-tp1-codegen")), None)
        if run is not None and lomo:
            lines += ["", f"## The same rows as the peers: {run}", "",
                      f"Predictions of the dev run `{run}` by the simulators of "
                      "inference-sim/sim-to-real-accuracy-validation (`results_trainval/error_records.csv`; "
                      f"`{peers.as_posix()}`, its README says what is kept), beside pagesim's prediction fitted "
                      "without this model (leave one model out). Value (APE); their `actual` is the measured value "
                      "as they computed it; their itl_mean is BLIS's (E2E - TTFT) / (output - 1), and pagesim's "
                      "there is their actual times pagesim's ratio of (E2E - TTFT) to the measured.", ""]
            lines += peer_lines(peers, run, runs, table)
    lines += ["", "## Calibrations"]
    if calibration.is_file():
        lines += calibration_lines(calibration, "Fitted on all runs")
    lomo_dir = calibration.parent / "lomo"
    for group in by_model:
        path = lomo_dir / f"{group}.yaml"
        if path.is_file():
            lines += calibration_lines(path, f"Fitted without {group}")
    lines += ["", "Notes on reading it:",
              "- Every metric is inference-perf's, over the streamed messages (two per generated token in "
              "these runs): TPOT and ITL are about half the engine's step, and the ITL p50 is the "
              "microseconds between a token's two messages, which pagesim emits at one instant (hence 100%).",
              "- The peers' figures are their medians over their own 36 held-out runs, not these six; BLIS's "
              "ITL is (E2E − TTFT) / (output − 1), the engine's step, where this report's ITL is "
              "inference-perf's.",
              "- The first stage of each Mixtral run holds a server stall of about a second (measured ITL max "
              "0.95–1.1 s, against 41–87 ms in every other stage), a warm-up pagesim does not model: it raises "
              "those stages' TTFT means by about 10 ms (15%) over their medians. The fits match medians for "
              "that reason.",
              "- Near saturation (Llama-2-7B and Mixtral at 20 req/s) an error in the step time is amplified: "
              "the batch grows with the latency it causes.",
              "- What is simulated and fitted, the terms and the other limits: experiments/sim_to_real/README.md."]
    if operator_checks is not None:
        lines += operator_check_lines(operator_checks)
    lines += ["", "## Per run, stage and metric", "",
              "Latencies in ms (µs where marked); error = |simulated − measured| / measured."]
    labels = dict(ALL_VARIANTS)
    for name, run in runs.items():
        lines += ["", f"### {name}", "",
                  f"{run['server']['model']}, TP {run['server']['tensor_parallel']}, {run['hardware']}; "
                  f"shared_prefix {run['client']['data_resolved']['shared_prefix']}.", ""]
        shown = [v for v in PER_RUN_VARIANTS if med[v]]
        head = "| stage | metric | measured | " + " | ".join(f"{labels[v]} | err" for v in shown) + " |"
        lines += [head, "|---|---|---:|" + "---:|---:|" * len(shown)]
        for st in sorted(run["stages"], key=lambda s: s["stage"]):
            for metric in METRICS:
                for stat in STATISTICS:
                    row = f"| {st['stage']} ({st['rate_per_s']:g}/s) | {SHORT[metric]} {STAT_NAMES[stat]} | "
                    meas = float(st["latency_s"][metric][stat])
                    row += fmt_s(meas) + " |"
                    for v in shown:
                        pair = table.get((v, name, st["stage"], metric, stat))
                        row += (f" {fmt_s(pair[0])} | {ape(*pair):.1f}% |" if pair else " — | — |")
                    lines.append(row)
    return "\n".join(lines) + "\n"


def write(measured: Path, results: Path, calibration: Path, out: Path, command: str,
          operator_checks: Path | None = None, peers: Path | None = None) -> None:
    text = render(measured, results, calibration, command, operator_checks, peers)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text(text)
    tmp.replace(out)
