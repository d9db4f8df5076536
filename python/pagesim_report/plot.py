"""`pagesim plot OUT`: the plots that fit a results folder of `pagesim run`.

  python -m pagesim_report.plot OUT [--metric a,b] [--format png,svg]

A single run (OUT/summary.json, no sweep.csv) gets
  OUT/memory_over_time.{png,svg}  the memory classes as % of the KV pool over simulated time
  OUT/latency_cdf.{png,svg}       CDFs of TTFT, TPOT, end-to-end and normalized latency
A sweep (OUT/sweep.csv) gets
  OUT/sweep_metrics.{png,svg}     each --metric (a sweep.csv column) against the swept keys:
                                  the numeric key with the most values on the x axis, one line
                                  per value of the others (the points' labels on the x axis
                                  when no key is numeric)
  OUT/sweep_memory.{png,svg}      the memory classes of every point as stacked bars
Labels never overlap: past 8 categories they turn vertical, past 40 only every k-th is
written. Figures are written to a temporary name and renamed (a failed plot leaves nothing
half-written) and are deterministic (no timestamps, fixed SVG ids). The memory classes,
their colours and labels are plot_memory.py's.
"""
import argparse
import csv
import difflib
import json
import math
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import plot_memory  # noqa: E402  (python/, beside this package)

matplotlib.rcParams["svg.hashsalt"] = "pagesim"
DEFAULT_METRICS = ["throughput_rps", "normalized_latency_s_per_token", "memory_pct.token_states"]
LATENCIES = [("ttft_s", "time to first token (s)"), ("tpot_s", "time per output token (s)"),
             ("e2e_s", "end-to-end latency (s)"), ("normalized_latency_s_per_token", "normalized latency (s/token)")]
MAX_LABELS = 40  # tick labels written on one axis at most


class PlotError(Exception):
    """A results folder that cannot be plotted: missing files, unknown metrics."""


def save(fig, out_dir, stem, formats):
    for ext in formats:
        path = os.path.join(out_dir, f"{stem}.{ext}")
        tmp = f"{path}.tmp.{os.getpid()}"
        try:
            fig.savefig(tmp, format=ext, dpi=110, bbox_inches="tight", metadata=plot_memory.DETERMINISTIC[ext])
            os.replace(tmp, path)
        finally:
            if os.path.exists(tmp):
                os.remove(tmp)
    plt.close(fig)
    return [f"{stem}.{ext}" for ext in formats]


def read_csv(path, required=()):
    """The rows of the CSV file at `path` as dicts. Raises PlotError naming the file when it
    cannot be read, has no header line or lacks one of the `required` columns."""
    try:
        with open(path, newline="") as f:
            reader = csv.DictReader(f)
            rows = list(reader)
            columns = reader.fieldnames
    except OSError as e:
        raise PlotError(f"{path}: {e.strerror}") from None
    except (csv.Error, UnicodeDecodeError) as e:
        raise PlotError(f"{path}: not a CSV file ({e}): a damaged file") from None
    if columns is None:
        raise PlotError(f"{path}: empty file: no header line (a run stopped before writing it?)")
    for c in required:
        if c not in columns:
            raise PlotError(f"{path}: no column '{c}' (expected {', '.join(required)}): a damaged file, or not "
                            "pagesim's")
    return rows


def read_json(path):
    """The JSON object in the file at `path`. Raises PlotError naming the file when it cannot
    be read, is not valid JSON (truncated) or holds no object."""
    try:
        with open(path) as f:
            value = json.load(f)
    except OSError as e:
        raise PlotError(f"{path}: {e.strerror}") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        where = f" at line {e.lineno} column {e.colno}" if isinstance(e, json.JSONDecodeError) else ""
        raise PlotError(f"{path}: not valid JSON{where}: a truncated or damaged file") from None
    if not isinstance(value, dict):
        raise PlotError(f"{path}: expected a JSON object, found {type(value).__name__}")
    return value


def number(path, line, row, column):
    """float(row[column]), or PlotError naming the file, line and column."""
    try:
        return float(row[column])
    except (TypeError, ValueError):
        raise PlotError(f"{path}: line {line}: column '{column}': {row.get(column)!r} is not a number (a truncated "
                        "or damaged row)") from None


def flatten(obj, prefix=""):
    """summary.json's nested keys as sweep.csv names them ("memory_pct.token_states")."""
    out = {}
    for k, v in obj.items():
        if isinstance(v, dict):
            out.update(flatten(v, f"{prefix}{k}."))
        else:
            out[f"{prefix}{k}"] = v
    return out


def as_float(text):
    try:
        return float(text)
    except (TypeError, ValueError):
        return None


def categorical_ticks(ax, labels):
    """Puts `labels` at 0..n-1 so that they never overlap: vertical past 8, and past
    MAX_LABELS only every k-th one written."""
    n = len(labels)
    step = max(1, math.ceil(n / MAX_LABELS))
    ticks = list(range(0, n, step))
    ax.set_xticks(ticks)
    ax.set_xticklabels([labels[i] for i in ticks], rotation=90 if n > 8 else 0, fontsize=7 if n > 8 else 8)


# ---- a single run ----

def memory_over_time(out_dir, title, formats):
    t, series = [], {c: [] for c in plot_memory.CLASSES}
    path = os.path.join(out_dir, "iterations.csv")
    for i, row in enumerate(read_csv(path, ["start_s"] + list(plot_memory.CLASSES))):
        line = i + 2  # the header is line 1
        values = {c: number(path, line, row, c) for c in plot_memory.CLASSES}
        cap = sum(values.values())
        t.append(number(path, line, row, "start_s"))
        for c in plot_memory.CLASSES:
            series[c].append(100.0 * values[c] / cap if cap else 0.0)
    t, series = plot_memory.binned(t, series)
    fig, ax = plt.subplots(figsize=(8, 3))
    ax.stackplot(t, [series[c] for c in plot_memory.CLASSES], colors=[plot_memory.COLORS[c] for c in plot_memory.CLASSES],
                 labels=[plot_memory.LABELS[c] for c in plot_memory.CLASSES], linewidth=0, rasterized=True)
    ax.set_ylim(0, 100)
    ax.set_ylabel("% of KV cache memory")
    ax.set_xlabel("simulated time (s)")
    ax.set_title(title)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return save(fig, out_dir, "memory_over_time", formats)


def latency_cdf(out_dir, title, formats):
    rows = read_csv(os.path.join(out_dir, "requests.csv"))
    fig, axes = plt.subplots(1, len(LATENCIES), figsize=(3.2 * len(LATENCIES), 2.8), squeeze=False)
    for ax, (column, name) in zip(axes[0], LATENCIES):
        values = sorted(v for v in (as_float(r.get(column)) for r in rows) if v is not None and v >= 0)
        if values:
            n = len(values)
            ax.step(values, [(i + 1) / n for i in range(n)], where="post", linewidth=1.2)
        ax.set_xlabel(name, fontsize=8)
        ax.set_ylim(0, 1.0)
        ax.grid(alpha=0.3)
    axes[0, 0].set_ylabel("fraction of requests")
    fig.suptitle(title, fontsize=9)
    return save(fig, out_dir, "latency_cdf", formats)


def plot_run(out_dir, formats):
    name = read_json(os.path.join(out_dir, "summary.json")).get("name", os.path.basename(os.path.normpath(out_dir)))
    files = []
    if os.path.exists(os.path.join(out_dir, "iterations.csv")):
        files += memory_over_time(out_dir, f"{name}: memory classes over time", formats)
    if os.path.exists(os.path.join(out_dir, "requests.csv")):
        files += latency_cdf(out_dir, f"{name}: latency CDFs", formats)
    if not files:
        raise PlotError(f"{out_dir}: no iterations.csv or requests.csv to plot (output.iterations_stride: 0 and "
                        "output.requests_csv: false)")
    return files


# ---- a sweep ----

def swept_keys(out_dir, rows):
    """The sweep.csv columns that are swept keys: those after `label` that are not a result
    (not in the first point's summary.json)."""
    header = list(rows[0].keys())
    summary = os.path.join(out_dir, rows[0]["point"], "summary.json")
    results = set(flatten(read_json(summary))) if os.path.exists(summary) else set()
    keys = []
    for column in header[header.index("label") + 1:]:
        if column in results:
            break
        keys.append(column)
    return keys


def check_metrics(rows, metrics):
    columns = list(rows[0].keys())
    for m in metrics:
        if m not in columns:
            close = difflib.get_close_matches(m, columns, n=3)
            hint = f" (did you mean {', '.join(close)}?)" if close else ""
            raise PlotError(f"--metric {m}: no such column in sweep.csv{hint}")
        if all(as_float(r[m]) is None for r in rows):
            raise PlotError(f"--metric {m}: not a number in any row of sweep.csv")


def sweep_metrics(out_dir, rows, keys, metrics, formats):
    numeric = [k for k in keys
               if len({r[k] for r in rows if r[k] != ""}) > 1 and all(as_float(r[k]) is not None for r in rows)]
    fig, axes = plt.subplots(len(metrics), 1, figsize=(min(4 + 0.18 * len(rows), 14), 2.6 * len(metrics)),
                             squeeze=False)
    for ax, metric in zip(axes[:, 0], metrics):
        if numeric:
            # The key with the most values along x (the first of equals), a line per value of the rest.
            x_key = max(numeric, key=lambda k: len({r[k] for r in rows}))
            others = [k for k in keys if k != x_key]
            lines = {}
            for r in rows:
                lines.setdefault(tuple(r[k] for k in others), []).append((float(r[x_key]), as_float(r[metric])))
            for group, points in lines.items():
                points = sorted(p for p in points if p[1] is not None)
                label = ", ".join(f"{k}={v}" for k, v in zip(others, group) if v != "") or None
                ax.plot([p[0] for p in points], [p[1] for p in points], marker="o", markersize=3, linewidth=1,
                        label=label)
            ax.set_xlabel(x_key, fontsize=8)
            if len(lines) > 1:
                ax.legend(fontsize=6, loc="upper left", bbox_to_anchor=(1.0, 1.0), ncol=1 + len(lines) // 20)
        else:
            values = [as_float(r[metric]) for r in rows]
            ax.plot(range(len(rows)), [v if v is not None else math.nan for v in values], marker="o", markersize=3,
                    linewidth=1)
            categorical_ticks(ax, [r["label"] for r in rows])
        ax.set_ylabel(metric, fontsize=8)
        ax.grid(alpha=0.3)
    fig.tight_layout()
    return save(fig, out_dir, "sweep_metrics", formats)


def sweep_memory(out_dir, rows, formats):
    n = len(rows)
    fig, ax = plt.subplots(figsize=(min(2 + 0.25 * n, 20), 3.6))
    bottom = [0.0] * n
    for c in plot_memory.CLASSES:
        heights = [as_float(r.get(f"memory_pct.{c}")) or 0.0 for r in rows]
        ax.bar(range(n), heights, bottom=bottom, color=plot_memory.COLORS[c], width=0.8, linewidth=0,
               label=plot_memory.LABELS[c])
        bottom = [b + h for b, h in zip(bottom, heights)]
    categorical_ticks(ax, [r["label"] for r in rows])
    ax.set_xlim(-0.6, n - 0.4)
    ax.set_ylim(0, 100)
    ax.set_ylabel("% of KV cache memory")
    ax.set_title("memory classes per point (window average)")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return save(fig, out_dir, "sweep_memory", formats)


def plot_sweep(out_dir, metrics, formats):
    rows = read_csv(os.path.join(out_dir, "sweep.csv"), ["point", "label"])
    if not rows:
        raise PlotError(f"{os.path.join(out_dir, 'sweep.csv')}: no point")
    check_metrics(rows, metrics)
    keys = swept_keys(out_dir, rows)
    return sweep_metrics(out_dir, rows, keys, metrics, formats) + sweep_memory(out_dir, rows, formats)


def plot(out_dir, metrics=None, formats=("png", "svg")):
    """Draws what fits `out_dir`; returns the file names written. Raises PlotError."""
    if os.path.exists(os.path.join(out_dir, "sweep.csv")):
        return plot_sweep(out_dir, metrics or DEFAULT_METRICS, formats)
    if os.path.exists(os.path.join(out_dir, "summary.json")):
        if metrics:
            raise PlotError("--metric applies to a sweep (a folder with sweep.csv); this is a single run")
        return plot_run(out_dir, formats)
    raise PlotError(f"{out_dir}: neither sweep.csv nor summary.json: not a results folder of pagesim run")


def main(argv=None):
    p = argparse.ArgumentParser(prog="pagesim plot", description=__doc__.splitlines()[0])
    p.add_argument("out_dir")
    p.add_argument("--metric", default="", help="sweep.csv columns, comma-separated")
    p.add_argument("--format", default="png,svg", help="png, svg or both, comma-separated")
    a = p.parse_args(argv)
    metrics = [m for m in a.metric.split(",") if m]
    formats = [f for f in a.format.split(",") if f]
    for f in formats:
        if f not in plot_memory.DETERMINISTIC:
            sys.exit(f"pagesim plot: error: --format {f}: expected png or svg")
    try:
        files = plot(a.out_dir, metrics, formats)
    except PlotError as e:
        sys.exit(f"pagesim plot: error: {e}")
    except OSError as e:  # writing a figure (a full disk, a read-only folder)
        sys.exit(f"pagesim plot: error: {e.filename or a.out_dir}: {e.strerror}")
    print(f"plots in {a.out_dir}: {', '.join(files)}")


if __name__ == "__main__":
    main()
