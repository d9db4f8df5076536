"""Plots of where KV memory goes, from a pagesim sweep folder.

  python -m pagesim.plots.memory OUT_DIR [--paper] [--title T] [--window START END]

Reads OUT_DIR/sweep.csv (one row per system) and each point's iterations.csv, and writes
  OUT_DIR/memory_bars.png/.svg       stacked bars of the memory classes (vLLM paper Fig. 2)
  OUT_DIR/fragmentation.png/.svg     per system, a stacked area of the five classes over time
With --paper the bars are drawn beside the vLLM paper's Fig. 2 numbers.
Files are written to a temporary name and renamed, so a failed run leaves nothing behind.
"""
import argparse
import csv
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from pagesim.reports.vllm_paper import paper as paper_numbers  # noqa: E402

# Same results => same files: no timestamps, fixed SVG element ids.
matplotlib.rcParams["svg.hashsalt"] = "pagesim"
DETERMINISTIC = {"png": {"Software": None}, "svg": {"Date": None}}

CLASSES = ["token_states", "reserved", "over_reserved", "rounding", "free"]
LABELS = {
    "token_states": "Token states",
    "reserved": "Reservation",
    "over_reserved": "Internal frag. (over-reservation)",
    "rounding": "Rounding",
    "free": "Free (unallocated; holes included)",
}
# The paper's fourth class, "external fragmentation & others", is pagesim's rounding + free: its
# segment of a paper bar is drawn in its own (hatched) style so that it is not read as `free`.
PAPER_EXTERNAL_LABEL = "Paper: external frag. & others (= rounding + free)"
COLORS = {
    "token_states": "#2f6db3",
    "reserved": "#f2a93b",
    "over_reserved": "#d9534f",
    "rounding": "#8e6bbf",
    "free": "#b8b8b8",
}


def save(fig, out_dir, stem):
    for ext in ("png", "svg"):
        path = os.path.join(out_dir, f"{stem}.{ext}")
        tmp = path + ".tmp"
        fig.savefig(tmp, format=ext, dpi=150, bbox_inches="tight", metadata=DETERMINISTIC[ext])
        os.replace(tmp, path)
    plt.close(fig)


def read_sweep(out_dir):
    path = os.path.join(out_dir, "sweep.csv")
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def memory_bars(rows, out_dir, paper, title, dest=None):
    labels = [r["label"] for r in rows]
    fig, ax = plt.subplots(figsize=(1.6 + 1.4 * len(rows) * (2 if paper else 1), 4.2))
    xs, names = [], []
    x = 0.0
    paper_labelled = False
    for r in rows:
        bottom = 0.0
        for c in CLASSES:
            v = float(r[f"memory_pct.{c}"])
            ax.bar(x, v, bottom=bottom, color=COLORS[c], width=0.8, edgecolor="white", linewidth=0.5,
                   label=LABELS[c] if x == 0 else None)
            if v >= 4:
                ax.text(x, bottom + v / 2, f"{v:.1f}", ha="center", va="center", fontsize=7, color="white")
            bottom += v
        xs.append(x)
        names.append(r["label"] + ("\npagesim" if paper else ""))
        x += 1
        if paper and r["label"] in paper_numbers.FIG2:
            tok, res, internal, ext = paper_numbers.fig2_bar(r["label"])
            bottom = 0.0
            for v, c in ((tok, "token_states"), (res, "reserved"), (internal, "over_reserved"), (ext, None)):
                if c is None:  # rounding + free together
                    ax.bar(x, v, bottom=bottom, color=COLORS["free"], width=0.8, alpha=0.55, hatch="///",
                           edgecolor=COLORS["rounding"], linewidth=0,
                           label=PAPER_EXTERNAL_LABEL if not paper_labelled else None)
                    paper_labelled = True
                else:
                    ax.bar(x, v, bottom=bottom, color=COLORS[c], width=0.8, alpha=0.55, edgecolor="white",
                           linewidth=0.5)
                if v >= 4:
                    ax.text(x, bottom + v / 2, f"{v:.1f}", ha="center", va="center", fontsize=7)
                bottom += v
            xs.append(x)
            names.append(r["label"] + "\npaper")
            x += 1.4
    ax.set_xticks(xs)
    ax.set_xticklabels(names, fontsize=8)
    ax.set_ylabel("% of KV cache memory")
    ax.set_ylim(0, 100)
    ax.set_title(title)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    save(fig, dest or out_dir, "memory_bars")


def binned(t, series, bins=1500):
    """Means over equal time bins, so long runs plot (and save) at a bounded size."""
    if len(t) <= bins:
        return t, series
    t0, t1 = t[0], t[-1]
    width = (t1 - t0) / bins or 1.0
    sums = [[0.0] * bins for _ in CLASSES]
    counts = [0] * bins
    for i, x in enumerate(t):
        b = min(int((x - t0) / width), bins - 1)
        counts[b] += 1
        for k, c in enumerate(CLASSES):
            sums[k][b] += series[c][i]
    keep = [b for b in range(bins) if counts[b]]
    return ([t0 + (b + 0.5) * width for b in keep],
            {c: [sums[k][b] / counts[b] for b in keep] for k, c in enumerate(CLASSES)})


def fragmentation(rows, out_dir, title, window, dest=None):
    fig, axes = plt.subplots(len(rows), 1, figsize=(8, 2.0 * len(rows)), sharex=True, squeeze=False)
    for ax, r in zip(axes[:, 0], rows):
        path = os.path.join(out_dir, r["point"], "iterations.csv")
        t, series = [], {c: [] for c in CLASSES}
        with open(path, newline="") as f:
            for it in csv.DictReader(f):
                cap = sum(float(it[c]) for c in CLASSES)
                t.append(float(it["start_s"]))
                for c in CLASSES:
                    series[c].append(100.0 * float(it[c]) / cap)
        t, series = binned(t, series)
        ax.stackplot(t, [series[c] for c in CLASSES], colors=[COLORS[c] for c in CLASSES],
                     labels=[LABELS[c] for c in CLASSES], linewidth=0, rasterized=True)
        if window:
            ax.axvspan(window[0], window[1], color="black", alpha=0.06, linewidth=0)
        ax.set_ylim(0, 100)
        ax.set_ylabel(r["label"], fontsize=8)
    axes[0, 0].set_title(title)
    axes[0, 0].legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    axes[-1, 0].set_xlabel("simulated time (s)" + ("; shaded: measurement window" if window else ""))
    save(fig, dest or out_dir, "fragmentation")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out_dir")
    p.add_argument("--paper", action="store_true", help="draw the vLLM paper's Fig. 2 numbers beside")
    p.add_argument("--title", default="KV cache usage")
    p.add_argument("--window", type=float, nargs=2, metavar=("START", "END"),
                   help="shade the measurement window (seconds)")
    a = p.parse_args()
    try:
        rows = read_sweep(a.out_dir)
    except OSError as e:
        sys.exit(f"pagesim.plots.memory: error: {e}")
    memory_bars(rows, a.out_dir, a.paper, a.title)
    fragmentation(rows, a.out_dir, a.title + ": memory classes over time", a.window)
    print(f"plots in {a.out_dir}: memory_bars.png, fragmentation.png (and .svg)")


if __name__ == "__main__":
    main()
