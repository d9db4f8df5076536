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
from matplotlib.patches import Patch  # noqa: E402

from pagesim._figures import DETERMINISTIC as _FIGURES_DETERMINISTIC  # noqa: E402
from pagesim.plots.sizes import PAGE  # noqa: E402
from pagesim.plots.ticks import categorical_ticks  # noqa: E402
from pagesim.reports.vllm_paper import paper as paper_numbers  # noqa: E402

# Same results => same files: no timestamps, fixed SVG element ids.
matplotlib.rcParams["svg.hashsalt"] = "pagesim"
DETERMINISTIC = _FIGURES_DETERMINISTIC  # png, svg and pdf (reports import it from here)

CLASSES = ["token_states", "reserved", "over_reserved", "rounding", "free"]
LABELS = {
    "token_states": "Token states",
    "reserved": "Reservation",
    "over_reserved": "Internal frag. (over-reservation)",
    "rounding": "Rounding",
    "free": "Free (unallocated; holes included)",
}
COLORS = {
    "token_states": "#2f6db3",
    "reserved": "#f2a93b",
    "over_reserved": "#d9534f",
    "rounding": "#8e6bbf",
    "free": "#b8b8b8",
}


# The systems as the paper names them.
PAPER_NAMES = {"orca-max": "Orca (Max)", "orca-pow2": "Orca (Pow2)", "orca-oracle": "Orca (Oracle)", "vllm": "vLLM"}


def save(fig, folder, stem, size=PAGE, formats=("png", "svg")):
    """Writes fig as folder/stem<size's suffix>.<format>; returns the file names."""
    stem += size.suffix
    for ext in formats:
        path = os.path.join(folder, f"{stem}.{ext}")
        tmp = path + ".tmp"
        fig.savefig(tmp, format=ext, dpi=200, bbox_inches="tight", metadata=DETERMINISTIC[ext])
        os.replace(tmp, path)
    plt.close(fig)
    return [f"{stem}.{ext}" for ext in formats]


def read_sweep(out_dir):
    path = os.path.join(out_dir, "sweep.csv")
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def _stack(ax, x, width, values, size, light=False, **style):
    """A stacked bar of (value, class) segments at x; each segment's number written inside it
    when it is tall enough and the bar wide enough for the text."""
    bottom = 0.0
    bar_in = width * ax.get_position().width * ax.figure.get_figwidth() / (ax.get_xlim()[1] - ax.get_xlim()[0])
    for v, c in values:
        ax.bar(x, v, bottom=bottom, width=width, color=COLORS[c], **style)
        if v >= (6 if not size.narrow else 9) and bar_in >= 0.22:
            ax.text(x, bottom + v / 2, f"{v:.1f}", ha="center", va="center", fontsize=size.font - 1,
                    color="white" if c in ("token_states", "over_reserved", "rounding") and not light else "black",
                    zorder=4)
        bottom += v


def memory_bars(rows, out_dir, paper, title, dest=None, size=PAGE, formats=("png", "svg")):
    """Stacked bars of the memory classes, a bar per point; with `paper`, beside each system the
    paper reports, a hatched bar of the paper's Fig. 2 numbers (its fourth class, external
    fragmentation & others, is pagesim's rounding + free). Returns the file names written."""
    with_paper = [paper and r["label"] in paper_numbers.FIG2 for r in rows]
    fig, ax = plt.subplots(figsize=(size.width_in if size.narrow else min(size.width_in, 1.6 + 1.3 * len(rows)),
                                    2.6 if size.narrow else 2.8))
    ax.set_xlim(-0.6, len(rows) - 0.4)
    sim_w, paper_w = 0.46, 0.30
    for i, (r, beside) in enumerate(zip(rows, with_paper)):
        x = i - (paper_w + 0.04) / 2 if beside else i
        _stack(ax, x, sim_w if beside else 0.7, [(float(r[f"memory_pct.{c}"]), c) for c in CLASSES], size,
               edgecolor="white", linewidth=0.4)
        if beside:
            tok, res, internal, ext = paper_numbers.fig2_bar(r["label"])
            _stack(ax, i + (sim_w + 0.04) / 2, paper_w,
                   [(tok, "token_states"), (res, "reserved"), (internal, "over_reserved"), (ext, "free")], size,
                   light=True, alpha=0.6, hatch="////", edgecolor="white", linewidth=0.4)
    ax.set_ylim(0, 100)
    ax.set_ylabel("% of KV cache memory", fontsize=size.label_font)
    ax.tick_params(labelsize=size.font)
    ax.grid(axis="y", alpha=0.3)
    ax.set_axisbelow(True)
    if title and not size.narrow:
        ax.set_title(title, fontsize=size.label_font)
    fig.tight_layout()
    categorical_ticks(ax, [PAPER_NAMES.get(r["label"], r["label"]) if paper else r["label"] for r in rows], size.font)
    handles = [Patch(facecolor=COLORS[c], label=LABELS[c]) for c in CLASSES]
    if any(with_paper):
        handles += [Patch(facecolor="white", edgecolor="black", linewidth=0.6, label="pagesim (left bar)"),
                    Patch(facecolor="white", edgecolor="black", hatch="////", linewidth=0.6,
                          label="paper, Fig. 2 (right bar; its last class\n= rounding + free)")]
    fig.tight_layout()
    if size.narrow:
        fig.legend(handles=handles, loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=2, fontsize=size.font,
                   frameon=False)
    else:
        ax.legend(handles=handles, fontsize=size.font, loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    return save(fig, dest or out_dir, "memory_bars", size, formats)


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


def shade_window(ax, window, t_end):
    """Fades what lies outside the measurement window (start, end or None: open) and marks
    its edges with dashed lines, so the measured span stands out over a stacked plot."""
    if not window:
        return
    start, end = window[0], window[1] if window[1] is not None else t_end
    t0 = min(ax.get_xlim()[0], 0.0)
    for lo, hi in ((t0, start), (end, max(t_end, end))):
        if hi > lo:
            ax.axvspan(lo, hi, facecolor="white", alpha=0.6, linewidth=0, zorder=3)
    for edge in (start, end):
        ax.axvline(edge, color="black", linestyle="--", linewidth=0.7, zorder=4)


WINDOW_HANDLE_LABEL = "outside the measurement window (faded)"


def fragmentation(rows, out_dir, title, window, dest=None, size=PAGE, formats=("png", "svg")):
    """Per point, a panel of the five classes over simulated time (% of the pool), the part
    outside the measurement window (start, end) faded. Returns the file names written."""
    fig, axes = plt.subplots(len(rows), 1, figsize=(size.width_in, (1.1 if size.narrow else 1.25) * len(rows) + 0.5),
                             sharex=True, squeeze=False)
    t_end = 0.0
    for ax, r in zip(axes[:, 0], rows):
        path = os.path.join(out_dir, r["point"], "iterations.csv")
        t, series = [], {c: [] for c in CLASSES}
        with open(path, newline="") as f:
            for it in csv.DictReader(f):
                cap = sum(float(it[c]) for c in CLASSES)
                t.append(float(it["start_s"]))
                for c in CLASSES:
                    series[c].append(100.0 * float(it[c]) / cap if cap else 0.0)
        t, series = binned(t, series)
        ax.stackplot(t, [series[c] for c in CLASSES], colors=[COLORS[c] for c in CLASSES],
                     labels=[LABELS[c] for c in CLASSES], linewidth=0, rasterized=True)
        t_end = max(t_end, t[-1] if t else 0.0)
        ax.set_xlim(0, t_end)
        ax.set_ylim(0, 100)
        ax.set_yticks([0, 50, 100])
        ax.tick_params(labelsize=size.font)
        ax.text(0.01, 0.93, PAPER_NAMES.get(r["label"], r["label"]), transform=ax.transAxes, ha="left", va="top",
                fontsize=size.font, zorder=5, bbox={"facecolor": "white", "edgecolor": "none", "pad": 1.0})
    for ax in axes[:, 0]:
        ax.set_xlim(0, t_end)
        shade_window(ax, window, t_end)
    fig.supylabel("% of KV cache memory", fontsize=size.label_font)
    if title and not size.narrow:
        axes[0, 0].set_title(title, fontsize=size.label_font)
    axes[-1, 0].set_xlabel("simulated time (s)", fontsize=size.label_font)
    handles = [Patch(facecolor=COLORS[c], label=LABELS[c]) for c in CLASSES]
    if window:
        handles.append(Patch(facecolor="#dddddd", edgecolor="black", linestyle="--", linewidth=0.7,
                             label=WINDOW_HANDLE_LABEL))
    fig.tight_layout(h_pad=0.3)
    if size.narrow:
        fig.legend(handles=handles, loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=2, fontsize=size.font,
                   frameon=False)
    else:
        axes[0, 0].legend(handles=handles, fontsize=size.font, loc="upper left", bbox_to_anchor=(1.0, 1.0),
                          frameon=False)
    return save(fig, dest or out_dir, "fragmentation", size, formats)


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
