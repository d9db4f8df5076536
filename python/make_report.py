#!/usr/bin/env python3
"""Generates the vLLM-paper reproduction report from pagesim results.

  make_report.py RESULTS_DIR DEST_DIR

RESULTS_DIR holds one folder per experiment as written by experiments/vllm_paper/run_all.sh
(fig2, fig2_seeds, fig13a, fig13a_seeds, fig15, fig12, ablation_block_size,
ablation_preemption, calibration, calibration_2rps, calibration_4rps). DEST_DIR receives
REPORT.md and figures/ (PNG and SVG). Every number in the report comes from those result
files; the paper's numbers are the constants below. Files are written atomically.
"""
import csv
import datetime
import json
import os
import re
import statistics
import subprocess
import sys
from collections import OrderedDict, defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import plot_memory  # noqa: E402

SYSTEMS = ["orca-max", "orca-pow2", "orca-oracle", "vllm"]
NAMES = {"orca-max": "Orca (Max)", "orca-pow2": "Orca (Pow2)", "orca-oracle": "Orca (Oracle)", "vllm": "vLLM",
         "static": "Static (FasterTransformer-like)"}
# Paper, Fig. 2: token states, reservation, internal frag., external frag. & others.
PAPER_FIG2 = {"orca-max": (20.4, 13.3, 57.3, 8.9), "orca-pow2": (26.8, 17.9, 13.6, 41.6),
              "orca-oracle": (38.2, 25.2, 0.0, 36.6), "vllm": (96.3, None, None, None)}
FIG2_CLASSES = ["token states", "reservation", "internal frag.", "external frag. & others"]
FIG2_TOL_PP = 2.0
PAPER_FIG13A = {"orca-max": 7.00, "orca-pow2": 9.81, "orca-oracle": 13.62, "vllm": 30.42}
FIG13A_TOL = 0.10
PAPER_FIG15 = {"parallel": (16.2, 30.5), "beam": (44.3, 66.3)}
PAPER_FIG12 = {"vllm/orca-oracle": (1.7, 2.7), "vllm/orca-max": (2.7, 8.0)}
LATENCY_THRESHOLD = 0.5  # s/token: "sustainable" = mean normalized latency at or below this
PAPER_CAPACITY = (1.7, 2.0)  # req/s vLLM sustains on ShareGPT / OPT-13B (Fig. 12)


def read(results, name):
    with open(os.path.join(results, name, "sweep.csv"), newline="") as f:
        return list(csv.DictReader(f))


def f(row, key):
    return float(row[key])


def case(label):
    return label.split(",")[0]


def summary(results, name, row):
    with open(os.path.join(results, name, row["point"], "summary.json")) as fh:
        return json.load(fh)


def cost_params(results, name, row):
    """The resolved roofline parameters of one run, read from its summary's cost-model string."""
    text = summary(results, name, row)["cost_model"]
    return {k: float(v) for k, v in re.findall(r"(compute_efficiency|memory_efficiency|iteration_overhead)=([0-9.eE+-]+)",
                                               text)}


def offered_rate(results, name, row):
    """The nominal arrival rate of one run (req/s), read from its summary's workload string."""
    return float(re.search(r"rate=([0-9.eE+-]+) req/s", summary(results, name, row)["workload"]).group(1))


def protocol(results, name):
    """Duration, measurement window and generators of an experiment, read from the resolved config
    of its first run (every run of a sweep shares them unless a case overrides them)."""
    first = sorted(d for d in os.listdir(os.path.join(results, name))
                   if os.path.isdir(os.path.join(results, name, d)))[0]
    with open(os.path.join(results, name, first, "config.resolved.yaml")) as fh:
        text = fh.read()

    def value(key):
        return re.search(rf"^\s*{key}: (\S+)", text, re.MULTILINE).group(1)

    return {"duration": float(value("duration_s")), "start": float(value("window_start_s")),
            "end": float(value("window_end_s")), "rng": value("rng")}


def window_text(p):
    return f"{p['duration']:.0f} s of arrivals, averages over scheduler iterations in t = {p['start']:.0f}–{p['end']:.0f} s"


def spread(vals):
    return f"{statistics.mean(vals):.1f} ({min(vals):.1f}–{max(vals):.1f})"


def fig2_classes(row):
    """pagesim's five classes folded into the paper's four bars."""
    return (f(row, "memory_pct.token_states"), f(row, "memory_pct.reserved"), f(row, "memory_pct.over_reserved"),
            f(row, "memory_pct.rounding") + f(row, "memory_pct.free"))


def save(fig, dest, stem):
    os.makedirs(dest, exist_ok=True)
    for ext in ("png", "svg"):
        path = os.path.join(dest, f"{stem}.{ext}")
        fig.savefig(path + ".tmp", format=ext, dpi=140, bbox_inches="tight", metadata=plot_memory.DETERMINISTIC[ext])
        os.replace(path + ".tmp", path)
    plt.close(fig)


def ok(flag):
    return "yes" if flag else "**no**"


class Report:
    def __init__(self):
        self.lines = []
        self.misses = []
        self.reasons = {}  # miss -> explanation computed from results

    def add(self, *lines):
        self.lines.extend(lines)

    def table(self, header, rows):
        self.add("| " + " | ".join(header) + " |", "|" + "---|" * len(header))
        for r in rows:
            self.add("| " + " | ".join(str(x) for x in r) + " |")
        self.add("")


def fig2(rep, results, figs):
    rows = {r["label"]: r for r in read(results, "fig2")}
    seeds = defaultdict(list)
    for r in read(results, "fig2_seeds"):
        seeds[case(r["label"])].append(fig2_classes(r))
    p = protocol(results, "fig2")
    exact = ("; with the artifact's generators, seed 0 is the exact trace of the paper's Fig. 2"
             if p["rng"] == "artifact" else "")
    rep.add("## Figure 2: where KV memory goes (4 req/s, overload)", "",
            f"Percent of KV memory by class ({window_text(p)}). "
            "pagesim's `rounding` and `free` together are the paper's *external fragmentation & others*. "
            f"`fig2.yaml` is seed 0{exact}; the 5-seed columns give the mean and range over seeds 0–4. "
            f"Target: each paper number within ±{FIG2_TOL_PP} percentage points, judged on seed 0 and on the "
            f"5-seed mean.", "")
    # Each paper number is judged twice: on seed 0 (fig2.yaml) and on the 5-seed mean, so that a
    # pass or a miss that one seed's window happens to give is visible either way.
    table, ok0, okm, n_judged = [], 0, 0, 0
    for s in SYSTEMS:
        ours = fig2_classes(rows[s])
        for i, cls in enumerate(FIG2_CLASSES):
            paper = PAPER_FIG2[s][i]
            vals = [v[i] for v in seeds[s]]
            mean = statistics.mean(vals)
            if paper is None:
                table.append([NAMES[s], cls, "—", f"{ours[i]:.1f}", "", spread(vals), "", ""])
                continue
            n_judged += 1
            d, md = ours[i] - paper, mean - paper
            good, good_mean = abs(d) <= FIG2_TOL_PP, abs(md) <= FIG2_TOL_PP
            ok0 += good
            okm += good_mean
            half = (max(vals) - min(vals)) / 2
            if not good:
                rep.misses.append(f"Fig. 2 {NAMES[s]} {cls}, seed 0: {ours[i]:.2f} vs {paper} ({d:+.2f} pp)")
                rep.reasons[rep.misses[-1]] = (
                    f"Over seeds 0–4 the same number ranges {min(vals):.1f}–{max(vals):.1f} (±{half:.1f} pp around "
                    f"the mean {mean:.1f}, {md:+.1f} pp from the paper): one 600-s window of one seed varies that "
                    f"much, and the paper's number is one such sample too."
                    if good_mean else
                    f"The 5-seed mean {mean:.1f} ({md:+.1f} pp) misses as well: a difference of model.")
            if not good_mean:
                rep.misses.append(f"Fig. 2 {NAMES[s]} {cls}, 5-seed mean: {mean:.2f} vs {paper} ({md:+.2f} pp)")
                rep.reasons[rep.misses[-1]] = (
                    f"Seed 0 gives {ours[i]:.1f} ({'within' if good else 'outside'} ±{FIG2_TOL_PP} pp) but seeds 0–4 "
                    f"range {min(vals):.1f}–{max(vals):.1f} (±{half:.1f} pp): "
                    + ("the seed-0 pass is not robust to the seed." if good else "a difference of model."))
            table.append([NAMES[s], cls, f"{paper:.1f}", f"{ours[i]:.1f}", f"{d:+.1f}", spread(vals), ok(good),
                          ok(good_mean)])
    rep.table(["system", "class", "paper %", "pagesim % (seed 0)", "diff (pp)", "pagesim, 5 seeds: mean (range)",
               f"seed 0 within ±{FIG2_TOL_PP}", f"5-seed mean within ±{FIG2_TOL_PP}"], table)
    rep.add(f"Paper numbers within ±{FIG2_TOL_PP} pp: {ok0} of {n_judged} on seed 0 "
            f"({ok(ok0 == n_judged)}), {okm} of {n_judged} on the 5-seed mean ({ok(okm == n_judged)}).", "")
    sweep = read(results, "fig2")
    plot_memory.memory_bars(sweep, os.path.join(results, "fig2"), True,
                            "Fig. 2: OPT-13B, A100-40GB, ShareGPT, 4 req/s", dest=figs)
    plot_memory.fragmentation(sweep, os.path.join(results, "fig2"),
                              "Memory classes over time (Fig. 2 runs)", (p["start"], p["end"]), dest=figs)
    rep.add("![Fig. 2](figures/memory_bars.png)", "",
            "Fragmentation over time, each system (the shaded band is the measurement window):", "",
            "![Fragmentation over time](figures/fragmentation.png)", "")


def fig13a(rep, results, figs):
    rows = {r["label"]: r for r in read(results, "fig13a")}
    seeds = defaultdict(list)
    for r in read(results, "fig13a_seeds"):
        seeds[case(r["label"])].append(f(r, "mean_batched_requests"))
    p = protocol(results, "fig13a")
    rep.add("## Figure 13a: mean batched requests, ShareGPT at 2 req/s", "",
            f"Mean number of running requests per scheduler iteration ({window_text(p)}: the paper's "
            f"run length and the window of the artifact's plot_fig13.py). "
            f"Target: within ±{FIG13A_TOL:.0%} of the paper.", "")
    table = []
    for s in SYSTEMS:
        ours = f(rows[s], "mean_batched_requests")
        d = ours / PAPER_FIG13A[s] - 1
        good = abs(d) <= FIG13A_TOL
        if not good:
            rep.misses.append(f"Fig. 13a {NAMES[s]}: {ours:.2f} vs {PAPER_FIG13A[s]} ({d:+.1%})")
            if s == "vllm":
                sat = {r["label"]: f(r, "throughput_rps") for r in read(results, "calibration")}
                inside = [(sat[r["label"]], f(r, "mean_batched_requests")) for r in read(results, "calibration_2rps")
                          if PAPER_CAPACITY[0] <= sat[r["label"]] <= PAPER_CAPACITY[1]]
                span = (f" Over the cost models whose capacity lies inside the paper's measured "
                        f"{PAPER_CAPACITY[0]}–{PAPER_CAPACITY[1]} req/s, vLLM's batch at 2 req/s spans "
                        f"{min(b for _, b in inside):.1f}–{max(b for _, b in inside):.1f} "
                        f"(paper {PAPER_FIG13A[s]})." if inside else "")
                cal, _ = calibrated_case(results)
                offered = offered_rate(results, "fig13a", rows[s])
                over = offered / f(cal, "throughput_rps") - 1 if cal else 0.0
                where = (f"At {offered:g} req/s the calibrated vLLM is offered {abs(over):.0%} "
                         f"{'more' if over > 0 else 'less'} than its saturated throughput "
                         f"({f(cal, 'throughput_rps'):.2f} req/s), where the mean batch is steep in capacity (see the "
                         f"sensitivity table under Fig. 13a). " if cal else "")
                orca_ok = all(abs(f(rows[o], "mean_batched_requests") / PAPER_FIG13A[o] - 1) <= FIG13A_TOL
                              for o in SYSTEMS if o != "vllm")
                rep.reasons[rep.misses[-1]] = where + (
                    "The Orca batches, limited by memory alone, are within target, so the difference points at the "
                    "calibration's uncertainty rather than the allocator." if orca_ok else
                    "The Orca batches miss too, so the calibration alone does not explain it.") + span
        vals = seeds[s]
        table.append([NAMES[s], f"{PAPER_FIG13A[s]:.2f}", f"{ours:.2f}", f"{d:+.1%}",
                      f"{statistics.mean(vals):.2f} ({min(vals):.2f}–{max(vals):.2f})", ok(good)])
    rep.table(["system", "paper", "pagesim", "diff", "pagesim, 5 seeds", f"within ±{FIG13A_TOL:.0%}"], table)
    fig, ax = plt.subplots(figsize=(6, 3))
    xs = range(len(SYSTEMS))
    ax.bar([x - 0.2 for x in xs], [f(rows[s], "mean_batched_requests") for s in SYSTEMS], 0.4, label="pagesim")
    ax.bar([x + 0.2 for x in xs], [PAPER_FIG13A[s] for s in SYSTEMS], 0.4, label="paper", alpha=0.6)
    ax.set_xticks(list(xs))
    ax.set_xticklabels([NAMES[s] for s in SYSTEMS], fontsize=8)
    ax.set_ylabel("mean batched requests")
    ax.legend(fontsize=8)
    save(fig, figs, "fig13a")
    rep.add("![Fig. 13a](figures/fig13a.png)", "")
    cal = read(results, "calibration_2rps")
    rep.add("Sensitivity of vLLM's batch at 2 req/s to the cost model's capacity (same workload and protocol; "
            "`calibration.yaml` at 2 req/s). Near saturation the mean batch grows steeply as capacity "
            "falls towards the offered rate:", "")
    sat = {r["label"]: f(r, "throughput_rps") for r in read(results, "calibration")}
    rep.table(["cost model", "vLLM saturated throughput (req/s)", "mean batched requests at 2 req/s",
               "token states % at 2 req/s", "preemptions at 2 req/s"],
              [[r["label"], f"{sat[r['label']]:.3f}", f"{f(r, 'mean_batched_requests'):.2f}",
                f"{f(r, 'memory_pct.token_states'):.1f}", r["preemptions"]] for r in cal])


def fig15(rep, results, figs):
    rows = read(results, "fig15")
    rep.add("## Figure 15: memory saved by sharing (ShareGPT)", "",
            "Saving = 1 − 1/mean(logical blocks / physical blocks) over scheduler iterations in the window. "
            f"Paper: parallel sampling {PAPER_FIG15['parallel'][0]}–{PAPER_FIG15['parallel'][1]}%, "
            f"beam search {PAPER_FIG15['beam'][0]}–{PAPER_FIG15['beam'][1]}% (n or width 2, 4, 6).", "")
    table = []
    for r in rows:
        kind = r["label"].split("-")[0]
        lo, hi = PAPER_FIG15[kind]
        v = f(r, "sharing_saving_pct")
        good = lo <= v <= hi
        if not good:
            rep.misses.append(f"Fig. 15 {r['label']}: {v:.1f}% outside {lo}–{hi}%")
        table.append([r["label"], f"{v:.1f}", f"{lo}–{hi}", ok(good)])
    rep.table(["run", "saving % (pagesim)", "paper range %", "inside"], table)
    fig, ax = plt.subplots(figsize=(6, 3))
    ax.bar([r["label"] for r in rows], [f(r, "sharing_saving_pct") for r in rows],
           color=["#2f6db3"] * 3 + ["#f2a93b"] * 3)
    for kind, x0 in (("parallel", -0.4), ("beam", 2.6)):
        lo, hi = PAPER_FIG15[kind]
        ax.fill_between([x0, x0 + 2.8], lo, hi, color="grey", alpha=0.2, linewidth=0)
    ax.set_ylabel("memory saving (%)")
    ax.set_title("Fig. 15 (grey: the paper's range)", fontsize=9)
    save(fig, figs, "fig15")
    rep.add("![Fig. 15](figures/fig15.png)", "")
    beam_sensitivity(rep, results)
    # The artifact's fig15.sh runs Alpaca at 20 req/s and gives no rate for the ShareGPT numbers,
    # so the offered load is pagesim's choice (fig15.yaml); show what it does.
    loads = {offered_rate(results, "fig15", rows[0]): rows}
    for d in sorted(os.listdir(results)):
        if d.startswith("fig15_rate_"):
            more = read(results, d)
            loads[offered_rate(results, d, more[0])] = more
    if len(loads) > 1:
        rates = sorted(loads)
        rep.add("Sensitivity to the offered load (the paper does not give the rate of its ShareGPT sharing runs; "
                "`fig15.yaml` uses the bold one). Saving %:", "")
        labels = [r["label"] for r in rows]
        head = [f"**{r:g} req/s**" if loads[r] is rows else f"{r:g} req/s" for r in rates]
        rep.table(["run"] + head,
                  [[lab] + [f"{f(next(x for x in loads[r] if x['label'] == lab), 'sharing_saving_pct'):.1f}"
                            for r in rates] for lab in labels])


def beam_sensitivity(rep, results):
    """Fig. 15's beam savings under the neutral model and the score model's entropies."""
    if not os.path.isdir(os.path.join(results, "fig15_beam_sensitivity")):
        return
    lo, hi = PAPER_FIG15["beam"]
    table = defaultdict(dict)  # model column -> width -> saving
    for r in read(results, "fig15_beam_sensitivity"):
        m = re.fullmatch(r"beam-(\d+)-(neutral|scores-([0-9.]+))", r["label"])
        table[m.group(2)][int(m.group(1))] = f(r, "sharing_saving_pct")
    cols = ["neutral"] + sorted((c for c in table if c != "neutral"), key=lambda c: float(c.split("-")[1]))
    widths = sorted(table["neutral"])
    rep.add("Beam survival decides the beam savings. `fig15_beam_sensitivity.yaml` reruns the beam cases with "
            "the score model (sim/engine/score_beam_model.h): vLLM's own beam selection (top-k of cumulative "
            "log-probabilities; survivors continue, discarded beams fork the outstanding candidates) on "
            "log-probabilities from a stand-in language model whose next-token entropy has mean H nats. "
            "H = 0 shares only the prompt, as parallel sampling does; large H collapses every step onto one "
            "beam. Saving % (in bold: inside the paper's range):", "")
    rep.table(["beam width"] + [c if c == "neutral" else f"scores, H = {c.split('-')[1]}" for c in cols],
              [[w] + [(f"**{table[c][w]:.1f}**" if lo <= table[c][w] <= hi else f"{table[c][w]:.1f}") for c in cols]
               for w in widths])
    fits = [c for c in cols if all(lo <= table[c][w] <= hi for w in widths)]
    per_width = {w: [c for c in cols if lo <= table[c][w] <= hi] for w in widths}
    reason = (
        "pagesim has no language model, so which beams survive a step is a model. The default, neutral one "
        "(sim/engine/neutral_beam_model.h) lets each next beam pick its parent uniformly: beams coalesce within "
        "about 2k steps and the saving approaches 1 − 1/k. The artifact ran OPT-13B's real scores, on prompts made "
        "of token id 0 repeated (its trace.py has only lengths for ShareGPT), so the saving is a property of that "
        "model on those prompts. Running vLLM's own selection on a one-parameter stand-in "
        + ("puts every width inside the paper's range for " + ", ".join(fits) + "; "
           if fits else "puts no swept setting inside the paper's range for every width (inside: "
           + "; ".join(f"width {w}: " + (", ".join(per_width[w]) if per_width[w] else "none") for w in widths)
           + "); ")
        + "the paper's savings also spread less across widths than any of these models do. The sensitivity "
          "table under Fig. 15 gives the numbers. Closing this gap needs the beam genealogies of "
          "the real model (a beam search on a GPU with OPT-13B weights), not a constant fitted to the paper.")
    for m in rep.misses:
        if m.startswith("Fig. 15 beam"):
            rep.reasons[m] = reason


def sustainable_rate(points, threshold=None):
    """Highest rate with normalized latency <= threshold (default LATENCY_THRESHOLD), linear between
    sweep points; the first crossing counts. Returns (rate, censored): censored when the curve never
    crosses inside the sweep, so the rate is only a lower bound (the highest swept rate)."""
    t = LATENCY_THRESHOLD if threshold is None else threshold
    points = sorted(points)
    if points[0][1] > t:
        return 0.0, False
    for (r0, l0), (r1, l1) in zip(points, points[1:]):
        if l0 <= t < l1:
            return r0 + (r1 - r0) * (t - l0) / (l1 - l0), False
    return points[-1][0], True


def fig12(rep, results, figs):
    curves, thr = OrderedDict(), defaultdict(dict)
    for r in read(results, "fig12"):
        rate = f(r, "workload.arrival.rate")
        curves.setdefault(case(r["label"]), []).append((rate, f(r, "normalized_latency_s_per_token")))
        thr[case(r["label"])][rate] = f(r, "throughput_rps")
    found = {k: sustainable_rate(v) for k, v in curves.items()}
    rates = {k: v for k, (v, _) in found.items()}
    p = protocol(results, "fig12")
    rep.add("## Figure 12: normalized latency vs request rate (ShareGPT, OPT-13B)", "",
            f"Sustainable rate: the highest request rate whose mean normalized latency (over every request of a "
            f"{p['duration']:.0f}-s run, drain included, as the artifact's plot_fig12.py) stays at or below {LATENCY_THRESHOLD} s/token (linear interpolation "
            f"between the swept rates). Beside it, the highest completion rate reached in the sweep (finished "
            f"requests / simulated time): above it a finite run only builds a queue, so a latency threshold can "
            f"read a rate past saturation.", "")
    rep.table(["system", "sustainable rate (req/s)", "highest completion rate in the sweep (req/s)"],
              [[NAMES[k], f"{v:.2f}" + (" (lower bound: never crossed)" if found[k][1] else ""),
                f"{max(thr[k].values()):.2f}"] for k, v in rates.items()])
    table = []
    for key, (lo, hi) in PAPER_FIG12.items():
        a, b = key.split("/")
        ratio = rates[a] / rates[b] if rates[b] > 0 else float("inf")
        good = lo <= ratio <= hi
        if not good:
            rep.misses.append(f"Fig. 12 {key}: {ratio:.2f}x outside {lo}–{hi}x")
        table.append([f"{NAMES[a]} / {NAMES[b]}", f"{ratio:.2f}×", f"{lo}–{hi}×", ok(good)])
    v = rates["vllm"]
    good = PAPER_CAPACITY[0] <= v <= PAPER_CAPACITY[1]
    if not good:
        rep.misses.append(f"Fig. 12 vLLM sustainable rate: {v:.2f} req/s outside {PAPER_CAPACITY[0]}–"
                          f"{PAPER_CAPACITY[1]} req/s")
        cal, _ = calibrated_case(results)
        rep.reasons[rep.misses[-1]] = (
            (f"The cost model was calibrated on vLLM's saturated throughput ({f(cal, 'throughput_rps'):.2f} req/s "
             f"at 8 req/s offered), not on this latency knee. " if cal else "")
            + f"With {p['duration']:.0f} s of arrivals, a rate above saturation only builds a queue for "
              f"{p['duration']:.0f} s, so the mean "
              f"normalized latency crosses {LATENCY_THRESHOLD} s/token past saturation (vLLM's completion rate "
              f"tops out at {max(thr['vllm'].values()):.2f} req/s in this sweep). The ratios above use the same "
              f"method for every system.")
    table.append(["vLLM (absolute, req/s)", f"{v:.2f}", f"{PAPER_CAPACITY[0]}–{PAPER_CAPACITY[1]}", ok(good)])
    rep.table(["ratio", "pagesim", "paper", "inside"], table)
    sens = []
    for t in (0.2, LATENCY_THRESHOLD, 1.0):
        rt = {k: sustainable_rate(c, t)[0] for k, c in curves.items()}
        sens.append([f"{t:g}", f"{rt['vllm']:.2f}", f"{rt['vllm'] / rt['orca-oracle']:.2f}×",
                     f"{rt['vllm'] / rt['orca-max']:.2f}×"])
    rep.add("Sensitivity to the latency threshold:", "")
    rep.table(["threshold (s/token)", "vLLM rate (req/s)", "vLLM / Orca (Oracle)", "vLLM / Orca (Max)"], sens)
    fig, ax = plt.subplots(figsize=(6, 3.5))
    for k, v in curves.items():
        v = sorted(v)
        ax.plot([x for x, _ in v], [y for _, y in v], marker="o", markersize=3, label=NAMES[k])
    ax.axhline(LATENCY_THRESHOLD, color="grey", linestyle=":", linewidth=1)
    ax.set_ylim(0, 1.0)
    ax.set_xlabel("request rate (req/s)")
    ax.set_ylabel("normalized latency (s/token)")
    ax.legend(fontsize=7)
    save(fig, figs, "fig12")
    rep.add("![Fig. 12](figures/fig12.png)", "")


def ablations(rep, results, figs):
    rows = read(results, "ablation_block_size")
    rep.add("## Ablation: block size (vLLM, ShareGPT, 2 req/s)", "")
    rep.table(["block size", "token states %", "rounding %", "throughput (req/s)", "normalized latency (s/token)",
               "preemptions"],
              [[r["allocator.block_size"], f"{f(r, 'memory_pct.token_states'):.1f}", f"{f(r, 'memory_pct.rounding'):.1f}",
                f"{f(r, 'throughput_rps'):.3f}", f"{f(r, 'normalized_latency_s_per_token'):.3f}", r["preemptions"]]
               for r in rows])
    pre = read(results, "ablation_preemption")
    by = defaultdict(dict)
    for r in pre:
        by[r["scheduler.preemption"]][int(r["allocator.block_size"])] = r
    rep.add("## Ablation: recompute vs swap across block sizes (vLLM, ShareGPT, 4 req/s)", "",
            "Swap moves KV blocks over PCIe (bytes / bandwidth plus a fixed cost per block, so small "
            "blocks swap slowly); recompute re-prefills prompt + generated tokens.", "")
    sizes = sorted(by["recompute"])
    rep.table(["block size", "norm. latency, recompute", "norm. latency, swap", "preemptions recompute / swap",
               "GiB swapped"],
              [[b, f"{f(by['recompute'][b], 'normalized_latency_s_per_token'):.3f}",
                f"{f(by['swap'][b], 'normalized_latency_s_per_token'):.3f}",
                f"{by['recompute'][b]['preemptions']} / {by['swap'][b]['preemptions']}",
                f"{f(by['swap'][b], 'swapped_bytes') / 2**30:.1f}"] for b in sizes])
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(9, 3.2))
    a1.plot([int(r["allocator.block_size"]) for r in rows], [f(r, "memory_pct.token_states") for r in rows], marker="o")
    a1.set_xscale("log", base=2)
    a1.set_xlabel("block size (tokens)")
    a1.set_ylabel("token states (% of KV)")
    for mode in ("recompute", "swap"):
        a2.plot(sizes, [f(by[mode][b], "normalized_latency_s_per_token") for b in sizes], marker="o", label=mode)
    a2.set_xscale("log", base=2)
    a2.set_xlabel("block size (tokens)")
    a2.set_ylabel("normalized latency (s/token)")
    a2.legend(fontsize=8)
    save(fig, figs, "ablations")
    rep.add("![Ablations](figures/ablations.png)", "")


def calibrated_case(results):
    """The calibration row whose cost model is the one fig2.yaml ran, and that model's parameters."""
    fig2_vllm = next(r for r in read(results, "fig2") if r["label"] == "vllm")
    used = cost_params(results, "fig2", fig2_vllm)
    for r in read(results, "calibration"):
        if cost_params(results, "calibration", r) == used:
            return r, used
    return None, used


def calibration(rep, results):
    sat = read(results, "calibration")
    at4 = {r["label"]: r for r in read(results, "calibration_4rps")}
    cal, used = calibrated_case(results)
    offered4 = offered_rate(results, "calibration_4rps", next(iter(at4.values())))
    cap = f(cal, "throughput_rps") if cal else None
    cap_text = (f"With it vLLM's saturated throughput on this workload (offered 8 req/s, finished requests / "
                f"simulated time) is {cap:.3f} req/s (`calibration.yaml`, case `{cal['label']}`), against the "
                f"{PAPER_CAPACITY[0]}–{PAPER_CAPACITY[1]} req/s the paper measured (Fig. 12: a latency knee, not a "
                f"throughput; see the Fig. 12 section for pagesim's own knee)."
                if cal else "No calibration case uses this cost model: its capacity is not measured here.")
    rep.add("## Cost model and its calibration", "",
            f"Every run uses the roofline cost model of OPT-13B on an A100-40GB (datasheet peaks, "
            f"{used.get('compute_efficiency', float('nan')):.0%} compute and "
            f"{used.get('memory_efficiency', float('nan')):.0%} memory efficiency) plus a fixed per-iteration "
            f"overhead of {1e3 * used.get('iteration_overhead', float('nan')):.1f} ms (values read from the Fig. 2 "
            "runs' summaries). The overhead is the single calibrated constant: it stands for the 2023 engine's "
            "per-step CPU work (scheduling, sampling, kernel launches). " + cap_text + " Sensitivity: vLLM's "
            "saturated throughput (offered 8 req/s) and its Fig. 2 bar (offered 4 req/s) under each cost model:", "")
    rep.table(["cost model", "vLLM saturated throughput (req/s)", "Fig. 2 vLLM token states % (4 req/s)",
               "Fig. 2 vLLM free % (4 req/s)"],
              [[r["label"], f"{f(r, 'throughput_rps'):.3f}", f"{f(at4[r['label']], 'memory_pct.token_states'):.1f}",
                f"{f(at4[r['label']], 'memory_pct.free'):.1f}"] for r in sat])
    fastest = max(sat, key=lambda r: f(r, "throughput_rps"))
    tok4 = [f(at4[r["label"]], "memory_pct.token_states") for r in sat]
    below = all(f(r, "throughput_rps") < offered4 for r in sat)
    rep.add(f"Fig. 2's vLLM bar needs overload. Every cost model above has a saturated throughput "
            f"{'below' if below else 'not always below'} the offered {offered4:g} req/s (the fastest, "
            f"`{fastest['label']}`, {f(fastest, 'throughput_rps'):.2f} req/s), and the token-state share at "
            f"{offered4:g} req/s spans {min(tok4):.1f}–{max(tok4):.1f}%. "
            + ("So this table cannot show what happens when vLLM keeps up; the 2 req/s sensitivity table under "
               "Fig. 13a does (token-state share against capacity). " if below else "")
            + "Fig. 13a (2 req/s) is the experiment that depends on the calibration.", "")


EXPLANATIONS = {
    "Fig. 15 beam": "pagesim's beam model (sim/engine/neutral_beam_model.h) lets each next beam pick its parent uniformly "
                    "at random: a neutral Wright–Fisher process whose beams coalesce within about 2k steps, so "
                    "nearly the whole sequence is shared and the saving approaches 1 − 1/k (50, 75, 83% for "
                    "k = 2, 4, 6). Real beam search scores keep beams on their own hypotheses longer, so the "
                    "paper's beams share less at larger widths. The difference is the stochastic model of beam "
                    "survival (no model scores are simulated), not the allocator: the block sharing and "
                    "copy-on-write it drives are tested exactly (tests/allocator, tests/sim).",
}


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    results, dest = sys.argv[1], sys.argv[2]
    figs = os.path.join(dest, "figures")
    os.makedirs(figs, exist_ok=True)
    rep = Report()
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        commit = "unknown"
    p2 = protocol(results, "fig2")
    rep.add("# Reproducing the vLLM paper's memory claims with pagesim", "",
            f"Generated by `experiments/vllm_paper/run_all.sh` from the results in `{results}` "
            f"(pagesim commit {commit}, {datetime.date.today().isoformat()}). Do not edit by hand: rerun the script.",
            "",
            "Protocol (DESIGN.md and the paper's artifact, sosp-ae-39/sosp-ae-astra): OPT-13B on one A100-40GB, "
            "KV cache 15,728 slots (983 blocks of 16); ShareGPT OPT lengths filtered to input + output < 2048, "
            "cycled and shuffled; Poisson arrivals drawn per 10 ms quantum; at most 2,560 batched tokens and 256 "
            "sequences per iteration; Orca baselines on a buddy allocator over the block pool (max chunk 128 "
            "blocks), vLLM on paged blocks of 16 with the artifact's scheduler. "
            + ("The workload is drawn with the artifact's own generators (`workload.rng: artifact`: NumPy's legacy "
               "MT19937 Poisson counts and CPython's random.shuffle, checked bit for bit against both), so seed 0 "
               "is the exact trace the paper's runs used. " if p2["rng"] == "artifact" else "")
            + f"Durations and windows as the artifact: Fig. 2 {window_text(p2)}; "
              f"Fig. 13a {window_text(protocol(results, 'fig13a'))}; Fig. 12 "
              f"{protocol(results, 'fig12')['duration']:.0f} s of arrivals per rate.", "")
    calibration(rep, results)
    fig2(rep, results, figs)
    fig13a(rep, results, figs)
    fig15(rep, results, figs)
    fig12(rep, results, figs)
    ablations(rep, results, figs)
    rep.add("## Where pagesim differs from the paper", "")
    if not rep.misses:
        rep.add("Every number is within its target.", "")
    for m in rep.misses:
        reason = rep.reasons.get(m) or next((v for k, v in EXPLANATIONS.items() if m.startswith(k)),
                                            "No modelling reason recorded.")
        rep.add(f"- **{m}.** {reason}")
    rep.add("")
    path = os.path.join(dest, "REPORT.md")
    with open(path + ".tmp", "w") as out:
        out.write("\n".join(rep.lines))
    os.replace(path + ".tmp", path)
    print(f"report: {path} ({len(rep.misses)} number(s) outside target)")


if __name__ == "__main__":
    main()
