"""`pagesim plot OUT`: the plots that fit a results folder of `pagesim run`.

  python -m pagesim.plot OUT [--metric a,b] [--format png,svg,pdf]

A single run (OUT/summary.json, no sweep.csv) gets
  OUT/memory_over_time.{fmt}   the memory classes as % of the KV pool over simulated time; a
                               cluster run (iterations.csv with a replica column): per replica
                               a line of its token states (% of its pool) and of its waiting queue
  OUT/latency_cdf.{fmt}        CDFs of TTFT, TPOT, end-to-end and normalized latency
A sweep (OUT/sweep.csv) gets
  OUT/sweep_metrics.{fmt}      each --metric (a sweep.csv column) against the swept keys: the
                               numeric key with the most values on the x axis, one line per
                               case (or per value of the other keys), named in the legend; a
                               categorical x axis of the points (their cases) as bars when no
                               key is numeric
  OUT/sweep_memory.{fmt}       the memory classes of every point as stacked bars
  OUT/sweep_latency_cdf.{fmt}  per-request CDFs of TTFT, TPOT and end-to-end latency, a line
                               per point named by its case / label (points with requests.csv)
Axes are labelled with their quantity and unit (pagesim.labels), never a raw column name.
Figures are sized for a paper (7 in wide: a two-column figure; fonts 7-8 pt). Labels never
overlap: past 8 categories they turn vertical, past 40 only every k-th is written. Figures
are written to a temporary name and renamed (a failed plot leaves nothing half-written) and
are deterministic (no timestamps, fixed SVG ids, no PDF dates). The memory classes, their
colours and labels are pagesim.plots.memory's.
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

from pagesim import labels  # noqa: E402  (needs no compiled module)
from pagesim.plots import memory as plot_memory  # noqa: E402
from pagesim._figures import DETERMINISTIC, draw_cdf, legend_above, log_x_if_wide  # noqa: E402

matplotlib.rcParams["svg.hashsalt"] = "pagesim"
DEFAULT_METRICS = ["throughput_rps", "normalized_latency_s_per_token", "memory_pct.token_states"]
LATENCIES = ["ttft_s", "tpot_s", "e2e_s", "normalized_latency_s_per_token"]  # requests.csv's
WIDTH_IN = 7.0  # a two-column paper figure
FONT = 7
MAX_LABELS = 40  # tick labels written on one axis at most
MAX_LEGEND = 24  # legend entries at most; more series are drawn but not named


class PlotError(Exception):
    """A results folder that cannot be plotted: missing files, unknown metrics."""


def save(fig, out_dir, stem, formats):
    for ext in formats:
        path = os.path.join(out_dir, f"{stem}.{ext}")
        tmp = f"{path}.tmp.{os.getpid()}"
        try:
            fig.savefig(tmp, format=ext, dpi=200, bbox_inches="tight", metadata=DETERMINISTIC[ext])
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
    """float(row[column]) when finite, or PlotError naming the file, line and column. Every
    value the plots take from iterations.csv comes through here."""
    try:
        value = float(row[column])
    except (TypeError, ValueError):
        raise PlotError(f"{path}: line {line}: column '{column}': {row.get(column)!r} is not a number (a truncated "
                        "or damaged row)") from None
    # float() takes "inf" and "nan": drawn, they give a NaN axis limit (a traceback) or a blank plot.
    if not math.isfinite(value):
        raise PlotError(f"{path}: line {line}: column '{column}': found {row[column]!r}, expected a finite number")
    return value


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


def categorical_ticks(ax, names):
    """Puts `names` at 0..n-1 so that they never overlap: vertical past 8, and past
    MAX_LABELS only every k-th one written."""
    n = len(names)
    step = max(1, math.ceil(n / MAX_LABELS))
    ticks = list(range(0, n, step))
    ax.set_xticks(ticks)
    ax.set_xticklabels([names[i] for i in ticks], rotation=90 if n > 8 else 0, fontsize=FONT)


# ---- a single run ----

def style(ax):
    """Paper-size fonts and a light grid."""
    ax.tick_params(labelsize=FONT)
    ax.grid(alpha=0.3)


def memory_over_time(out_dir, title, formats):
    path = os.path.join(out_dir, "iterations.csv")
    rows = read_csv(path, ["start_s"] + list(plot_memory.CLASSES))
    if rows and "replica" in rows[0] and len({r["replica"] for r in rows}) > 1:
        return memory_over_time_per_replica(path, rows, title.replace("memory classes", "KV use and queues per replica"),
                                            formats)
    t, series = [], {c: [] for c in plot_memory.CLASSES}
    for i, row in enumerate(rows):
        line = i + 2  # the header is line 1
        values = {c: number(path, line, row, c) for c in plot_memory.CLASSES}
        cap = sum(values.values())
        t.append(number(path, line, row, "start_s"))
        for c in plot_memory.CLASSES:
            series[c].append(100.0 * values[c] / cap if cap else 0.0)
    t, series = plot_memory.binned(t, series)
    fig, ax = plt.subplots(figsize=(WIDTH_IN, 2.4))
    ax.stackplot(t, [series[c] for c in plot_memory.CLASSES], colors=[plot_memory.COLORS[c] for c in plot_memory.CLASSES],
                 labels=[plot_memory.LABELS[c] for c in plot_memory.CLASSES], linewidth=0, rasterized=True)
    ax.set_ylim(0, 100)
    ax.set_xlim(t[0] if t else 0, t[-1] if t else 1)
    ax.set_ylabel("% of KV cache memory", fontsize=FONT + 1)
    ax.set_xlabel(labels.axis_label("start_s"), fontsize=FONT + 1)
    ax.set_title(title, fontsize=FONT + 1)
    ax.tick_params(labelsize=FONT)
    ax.legend(fontsize=FONT, loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    return save(fig, out_dir, "memory_over_time", formats)


def memory_over_time_per_replica(path, rows, title, formats):
    """A cluster run: per replica, a line of its token states (% of its own pool) and one of
    its waiting queue, over simulated time."""
    per = {}
    for i, row in enumerate(rows):
        line = i + 2
        values = {c: number(path, line, row, c) for c in plot_memory.CLASSES}
        cap = sum(values.values())
        t, ts, waiting = per.setdefault(int(number(path, line, row, "replica")), ([], {"token_states": []}, []))
        t.append(number(path, line, row, "start_s"))
        ts["token_states"].append(100.0 * values["token_states"] / cap if cap else 0.0)
        waiting.append(number(path, line, row, "waiting") if "waiting" in row else 0.0)
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(WIDTH_IN, 3.6), sharex=True)
    for replica in sorted(per):
        t, ts, waiting = per[replica]
        bt, b = binned_series(t, {"token_states": ts["token_states"], "waiting": waiting})
        color = f"C{replica % 10}"
        top.plot(bt, b["token_states"], linewidth=0.8, color=color, label=f"replica {replica}", drawstyle="steps-post")
        bottom.plot(bt, b["waiting"], linewidth=0.8, color=color, drawstyle="steps-post")
    top.set_ylim(0, 100)
    top.set_ylabel("token states\n(% of the replica's KV)", fontsize=FONT + 1)
    bottom.set_ylabel(labels.axis_label("waiting"), fontsize=FONT + 1)
    bottom.set_xlabel(labels.axis_label("start_s"), fontsize=FONT + 1)
    top.set_title(title, fontsize=FONT + 1)
    for ax in (top, bottom):
        style(ax)
    handles, names = top.get_legend_handles_labels()
    top.legend(handles[:MAX_LEGEND], names[:MAX_LEGEND], fontsize=FONT, loc="upper left", bbox_to_anchor=(1.0, 1.0),
               frameon=False, ncol=1 + len(names[:MAX_LEGEND]) // 13)
    return save(fig, out_dir_of(path), "memory_over_time", formats)


def out_dir_of(path):
    return os.path.dirname(path) or "."


def binned_series(t, series, bins=1500):
    """Means over equal time bins of any named series (pagesim.plots.memory.binned's, for other columns)."""
    if len(t) <= bins:
        return t, series
    t0, t1 = t[0], t[-1]
    width = (t1 - t0) / bins or 1.0
    sums = {k: [0.0] * bins for k in series}
    counts = [0] * bins
    for i, x in enumerate(t):
        b = min(int((x - t0) / width), bins - 1)
        counts[b] += 1
        for k in series:
            sums[k][b] += series[k][i]
    keep = [b for b in range(bins) if counts[b]]
    return [t0 + (b + 0.5) * width for b in keep], {k: [sums[k][b] / counts[b] for b in keep] for k in series}


def latency_cdf(out_dir, title, formats):
    rows = read_csv(os.path.join(out_dir, "requests.csv"))
    fig, axes = plt.subplots(1, len(LATENCIES), figsize=(WIDTH_IN, 2.0), squeeze=False)
    for ax, column in zip(axes[0], LATENCIES):
        values = [v for v in (as_float(r.get(column)) for r in rows) if v is not None]
        draw_cdf(ax, values, linewidth=1.0)
        log_x_if_wide(ax, values)
        ax.set_xlabel(labels.axis_label(column), fontsize=FONT)
        ax.set_ylim(0, 1.0)
        style(ax)
    axes[0, 0].set_ylabel("fraction of requests", fontsize=FONT)
    fig.suptitle(title, fontsize=FONT + 1)
    fig.tight_layout()
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
    """The sweep.csv columns that are swept keys: those after `label` (and `case`) that are
    not a result (not in the first point's summary.json)."""
    header = list(rows[0].keys())
    summary = os.path.join(out_dir, rows[0]["point"], "summary.json")
    results = set(flatten(read_json(summary))) if os.path.exists(summary) else set()
    keys = []
    first = header.index("case") + 1 if "case" in header else header.index("label") + 1
    for column in header[first:]:
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


def point_names(rows):
    """The points as ticks and legends name them: their cases when each point is one case,
    else their labels (a sweep of cases x keys labels a point "case,key=value")."""
    cases = [r.get("case", "") for r in rows]
    return cases if all(cases) and len(set(cases)) == len(cases) else [r["label"] for r in rows]


def series_name(group_rows, others):
    """The legend entry of a line: the case its points share, else the other keys' values
    ("scheduler: vllm, block size: 16 tokens")."""
    cases = {r.get("case", "") for r in group_rows}
    if len(cases) == 1 and "" not in cases:
        return cases.pop()
    parts = []
    for k in others:
        v = group_rows[0][k]
        if v == "":
            continue
        name, unit = labels.name_and_unit(k)
        parts.append(f"{name}: {v}{' ' + unit if unit and unit != '%' else unit if unit else ''}")
    return ", ".join(parts) or None


def sweep_metrics(out_dir, rows, keys, metrics, formats):
    numeric = [k for k in keys
               if len({r[k] for r in rows if r[k] != ""}) > 1 and all(as_float(r[k]) is not None for r in rows)]
    categorical = not numeric
    width = WIDTH_IN if categorical or len(rows) <= 40 else min(WIDTH_IN + 0.05 * len(rows), 14)
    fig, axes = plt.subplots(len(metrics), 1, figsize=(width, 1.9 * len(metrics) + 0.3), squeeze=False,
                             sharex=True)
    if numeric:
        # The key with the most values along x (the first of equals), a line per case or per
        # value of the other keys.
        x_key = max(numeric, key=lambda k: len({r[k] for r in rows}))
        others = [k for k in keys if k != x_key]
        groups = {}
        for r in rows:
            groups.setdefault((r.get("case", ""),) + tuple(r[k] for k in others), []).append(r)
    for ax, metric in zip(axes[:, 0], metrics):
        if numeric:
            for i, group in enumerate(groups.values()):
                points = sorted((float(r[x_key]), as_float(r[metric])) for r in group if as_float(r[metric]) is not None)
                ax.plot([p[0] for p in points], [p[1] for p in points], marker="o", markersize=3, linewidth=1,
                        color=f"C{i % 10}", label=series_name(group, others) if i < MAX_LEGEND else None)
            if len(set(float(r[x_key]) for r in rows)) > 2 and min(float(r[x_key]) for r in rows) > 0 and \
                    max(float(r[x_key]) for r in rows) / min(float(r[x_key]) for r in rows) >= 16:
                ax.set_xscale("log", base=2)  # block sizes, capacities: powers of two
        else:
            # Cases (or categorical keys): a bar per point, named on a categorical axis.
            values = [as_float(r[metric]) for r in rows]
            ax.bar(range(len(rows)), [v if v is not None else math.nan for v in values], width=0.7,
                   color=[f"C{i % 10}" for i in range(len(rows))])
            ax.set_xlim(-0.6, len(rows) - 0.4)
        ax.set_ylabel(labels.axis_label(metric), fontsize=FONT)
        style(ax)
    if numeric:
        axes[-1, 0].set_xlabel(labels.axis_label(x_key), fontsize=FONT + 1)
        fig.tight_layout()
        if len(groups) > 1:
            legend_above(fig, *axes[0, 0].get_legend_handles_labels())
    else:
        categorical_ticks(axes[-1, 0], point_names(rows))
        axes[-1, 0].set_xlabel("case" if point_names(rows)[0] == rows[0].get("case") else "point", fontsize=FONT + 1)
        fig.tight_layout()
    return save(fig, out_dir, "sweep_metrics", formats)


# The classes beyond the five that some runs have (sweep.csv columns, as summary.json's objects
# name them), drawn below `free` where a point has them, so every bar reaches 100%.
EXTRA_CLASSES = [
    ("layer_classes.memory_pct.out_of_window", "Out of window", "#5fa8a0"),
    ("layer_classes.memory_pct.recurrent_state", "Recurrent state", "#3f7f5f"),
    ("layer_classes.memory_pct.unused_layers", "Unused layers", "#9fbf8f"),
    ("adapter_weights.memory_pct", "LoRA adapter weights", "#c77dba"),
    ("speculative_classes.memory_pct.proposed_accepted", "Proposed, accepted", "#6fa8dc"),
    ("speculative_classes.memory_pct.proposed_rejected", "Proposed, rejected", "#e69138"),
    ("speculative_classes.memory_pct.lookahead", "Lookahead", "#ffd966"),
    ("speculative_classes.memory_pct.draft_kv", "Draft KV", "#8d6e63"),
]


def memory_segments(rows):
    """(sweep.csv column, label, colour) of each class a bar stacks, bottom to top: the five
    with `free` last, the extra classes some point has in between."""
    segments = [(f"memory_pct.{c}", plot_memory.LABELS[c], plot_memory.COLORS[c]) for c in plot_memory.CLASSES[:-1]]
    segments += [e for e in EXTRA_CLASSES if any(as_float(r.get(e[0])) for r in rows)]
    segments.append(("memory_pct.free", plot_memory.LABELS["free"], plot_memory.COLORS["free"]))
    return segments


def sweep_memory(out_dir, rows, formats):
    n = len(rows)
    fig, ax = plt.subplots(figsize=(WIDTH_IN if n <= 40 else min(WIDTH_IN + 0.1 * n, 20), 2.6))
    bottom = [0.0] * n
    for column, label, color in memory_segments(rows):
        heights = [as_float(r.get(column)) or 0.0 for r in rows]
        ax.bar(range(n), heights, bottom=bottom, color=color, width=0.8, linewidth=0, label=label)
        bottom = [b + h for b, h in zip(bottom, heights)]
    categorical_ticks(ax, point_names(rows))
    ax.set_xlim(-0.6, n - 0.4)
    ax.set_ylim(0, 100)
    ax.set_ylabel("% of KV cache memory\n(window average)", fontsize=FONT + 1)
    ax.set_xlabel("case" if point_names(rows)[0] == rows[0].get("case") else "point", fontsize=FONT + 1)
    ax.tick_params(labelsize=FONT)
    ax.legend(fontsize=FONT, loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    return save(fig, out_dir, "sweep_memory", formats)


def sweep_latency_cdf(out_dir, rows, formats):
    """Per-request latency CDFs, a line per point with requests.csv, named by case / label;
    [] when no point wrote requests.csv."""
    curves = []
    for r, name in zip(rows, point_names(rows)):
        path = os.path.join(out_dir, r["point"], "requests.csv")
        if os.path.exists(path):
            curves.append((name, read_csv(path, LATENCIES[:3])))
    if not curves:
        return []
    columns = LATENCIES[:3]
    fig, axes = plt.subplots(1, len(columns), figsize=(WIDTH_IN, 2.2), squeeze=False)
    styles = ["-", "--", ":", "-."]
    for ax, column in zip(axes[0], columns):
        seen = []
        for i, (name, requests) in enumerate(curves):
            values = [v for v in (as_float(q.get(column)) for q in requests) if v is not None]
            seen += values
            draw_cdf(ax, values, linewidth=1.0, color=f"C{i % 10}", linestyle=styles[(i // 10) % len(styles)],
                     label=name if i < MAX_LEGEND else None)
        log_x_if_wide(ax, seen)
        ax.set_xlabel(labels.axis_label(column), fontsize=FONT)
        ax.set_ylim(0, 1.0)
        style(ax)
    axes[0, 0].set_ylabel("fraction of requests", fontsize=FONT)
    fig.tight_layout()
    legend_above(fig, *axes[0, 0].get_legend_handles_labels())
    return save(fig, out_dir, "sweep_latency_cdf", formats)


def plot_sweep(out_dir, metrics, formats):
    rows = read_csv(os.path.join(out_dir, "sweep.csv"), ["point", "label"])
    if not rows:
        raise PlotError(f"{os.path.join(out_dir, 'sweep.csv')}: no point")
    check_metrics(rows, metrics)
    keys = swept_keys(out_dir, rows)
    return (sweep_metrics(out_dir, rows, keys, metrics, formats) + sweep_memory(out_dir, rows, formats)
            + sweep_latency_cdf(out_dir, rows, formats))


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
    p.add_argument("--format", default="png,svg", help="png, svg, pdf, comma-separated")
    a = p.parse_args(argv)
    metrics = [m for m in a.metric.split(",") if m]
    formats = [f for f in a.format.split(",") if f]
    for f in formats:
        if f not in DETERMINISTIC:
            sys.exit(f"pagesim plot: error: --format {f}: expected png, svg or pdf")
    try:
        files = plot(a.out_dir, metrics, formats)
    except PlotError as e:
        sys.exit(f"pagesim plot: error: {e}")
    except OSError as e:  # writing a figure (a full disk, a read-only folder)
        sys.exit(f"pagesim plot: error: {e.filename or a.out_dir}: {e.strerror}")
    print(f"plots in {a.out_dir}: {', '.join(files)}")


if __name__ == "__main__":
    main()
