"""`pagesim plot OUT`: the plots that fit a results folder of `pagesim run`, ready for a paper.

  python -m pagesim.plot OUT [--metric a,b] [--format png,svg,pdf] [--size page,column]

Every figure is written at two printed widths (pagesim.plots.sizes): NAME.{fmt} 7 in wide (a
page-wide figure) and NAME_column.{fmt} 3.3 in wide (one column), fonts 6-8 pt at that size;
--size picks one (`pagesim plot` writes both). A single run (OUT/summary.json) gets
  memory_over_time   the memory classes as % of the KV pool over simulated time, outside the
                     measurement window faded; a cluster run: per replica its token states (%
                     of its pool) and its waiting queue
  latency_cdf        CDFs of TTFT, TPOT, end-to-end and normalized latency
A sweep (OUT/sweep.csv) gets
  sweep_metrics      each --metric against the swept keys: the numeric key with the most values
                     on x, ticked at every swept value (a log axis labelled 1, 2, 4 ... when the
                     values are powers of two or geometric), a line per case or per value of the
                     other keys (ordered colours for ordered values); bars on a categorical axis
                     of the points when no key is numeric
  sweep_memory       the memory classes of every point as stacked bars
  sweep_latency_cdf  per-request CDFs of TTFT, TPOT and end-to-end latency, a line per point
  memory_bars        the vLLM paper's Fig. 2 sweep (experiments/vllm_paper/fig2.yaml): pagesim's
                     bars beside the paper's published numbers
  fragmentation      a sweep of at most 8 points with iterations.csv: the classes over time, a
                     panel per point, outside the measurement window faded
Axes and legends say what a key or column means with its unit (pagesim.labels), never a raw
name; points are named by their case or their values in words ("least KV", "16 tokens").
Categorical labels never overlap: their widths are measured at the printed size (wrapped, then
turned, then thinned; pagesim.plots.ticks). Curves that coincide stay visible by marker, line
style and draw order (pagesim.plots.styles); latency CDFs are on a log axis past a decade.
Figures are written to a temporary name and renamed (a failed plot leaves nothing half-written)
and are deterministic (no timestamps, fixed SVG ids, no PDF dates).
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
from matplotlib.patches import Patch  # noqa: E402

from pagesim import labels  # noqa: E402  (needs no compiled module)
from pagesim.plots import memory as plot_memory  # noqa: E402
from pagesim.plots import styles, ticks  # noqa: E402
from pagesim.plots.sizes import SIZES  # noqa: E402
from pagesim._figures import DETERMINISTIC, draw_cdf, legend_above, log_x_if_wide  # noqa: E402

matplotlib.rcParams["svg.hashsalt"] = "pagesim"
DEFAULT_METRICS = ["throughput_rps", "normalized_latency_s_per_token", "memory_pct.token_states"]
LATENCIES = ["ttft_s", "tpot_s", "e2e_s", "normalized_latency_s_per_token"]  # requests.csv's
DPI = 200  # PNG: sharp in print at either width, a few hundred KB
MAX_LEGEND = 24  # legend entries at most; more series are drawn but not named


class PlotError(Exception):
    """A results folder that cannot be plotted: missing files, unknown metrics."""


def save(fig, out_dir, stem, formats, size):
    """Writes fig as out_dir/stem<size's suffix>.<format> for each format; returns the names."""
    stem += size.suffix
    for ext in formats:
        path = os.path.join(out_dir, f"{stem}.{ext}")
        tmp = f"{path}.tmp.{os.getpid()}"
        try:
            fig.savefig(tmp, format=ext, dpi=DPI, bbox_inches="tight", metadata=DETERMINISTIC[ext])
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


# ---- a single run ----

def style(ax, size):
    """Paper-size fonts and a light grid."""
    ax.tick_params(which="both", labelsize=size.font)
    ax.grid(alpha=0.3)


def legend(fig, ax, size, handles=None, names=None, ncol=None):
    """The legend beside the axes on a page; above them in a column (no room beside)."""
    if handles is None:
        handles, names = ax.get_legend_handles_labels()
    handles, names = handles[:MAX_LEGEND], names[:MAX_LEGEND]
    if not handles:
        return
    if size.narrow:
        legend_above(fig, handles, names, fontsize=size.font, ncol=ncol or 2)
    else:
        ax.legend(handles, names, fontsize=size.font, loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False,
                  ncol=1 + len(names) // 13)


def measurement_window(point_dir):
    """(start, end) seconds of the run's measurement window (config.resolved.yaml's measure),
    end None when open; None when the window is the whole run or the file cannot say."""
    import yaml

    try:
        with open(os.path.join(point_dir, "config.resolved.yaml")) as f:
            measure = (yaml.safe_load(f) or {}).get("measure") or {}
        start, end = float(measure.get("window_start_s", 0)), float(measure.get("window_end_s", math.inf))
    except (OSError, yaml.YAMLError, TypeError, ValueError, AttributeError):
        return None
    if start <= 0 and math.isinf(end):
        return None
    return start, (None if math.isinf(end) else end)


def memory_over_time(out_dir, title, formats, size):
    path = os.path.join(out_dir, "iterations.csv")
    rows = read_csv(path, ["start_s"] + list(plot_memory.CLASSES))
    if rows and "replica" in rows[0] and len({r["replica"] for r in rows}) > 1:
        return memory_over_time_per_replica(path, rows, title.replace("memory classes", "KV use and queues per replica"),
                                            formats, size)
    t, series = [], {c: [] for c in plot_memory.CLASSES}
    for i, row in enumerate(rows):
        line = i + 2  # the header is line 1
        values = {c: number(path, line, row, c) for c in plot_memory.CLASSES}
        cap = sum(values.values())
        t.append(number(path, line, row, "start_s"))
        for c in plot_memory.CLASSES:
            series[c].append(100.0 * values[c] / cap if cap else 0.0)
    t, series = plot_memory.binned(t, series)
    fig, ax = plt.subplots(figsize=(size.width_in, 2.4 if not size.narrow else 2.0))
    ax.stackplot(t, [series[c] for c in plot_memory.CLASSES], colors=[plot_memory.COLORS[c] for c in plot_memory.CLASSES],
                 labels=[plot_memory.LABELS[c] for c in plot_memory.CLASSES], linewidth=0, rasterized=True)
    ax.set_ylim(0, 100)
    ax.set_xlim(t[0] if t else 0, t[-1] if t else 1)
    window = measurement_window(out_dir)
    plot_memory.shade_window(ax, window, t[-1] if t else 1)
    ax.set_ylabel("% of KV cache memory", fontsize=size.label_font)
    ax.set_xlabel(labels.axis_label("start_s"), fontsize=size.label_font)
    if not size.narrow:
        ax.set_title(title, fontsize=size.label_font)
    ax.tick_params(labelsize=size.font)
    fig.tight_layout()
    handles, names = ax.get_legend_handles_labels()
    if window:
        handles.append(Patch(facecolor="#dddddd", edgecolor="black", linestyle="--", linewidth=0.7))
        names.append(plot_memory.WINDOW_HANDLE_LABEL)
    legend(fig, ax, size, handles, names)
    return save(fig, out_dir, "memory_over_time", formats, size)


def memory_over_time_per_replica(path, rows, title, formats, size):
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
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(size.width_in, 3.6), sharex=True)
    looks = styles.series(len(per), ordered=False, linewidth=0.8)
    for replica, look in zip(sorted(per), looks):
        t, ts, waiting = per[replica]
        bt, b = binned_series(t, {"token_states": ts["token_states"], "waiting": waiting})
        look = {**look, "marker": None}  # thousands of steps: the colour and the line style tell them apart
        top.plot(bt, b["token_states"], label=f"replica {replica}", drawstyle="steps-post", **look)
        bottom.plot(bt, b["waiting"], drawstyle="steps-post", **look)
    top.set_ylim(0, 100)
    top.set_ylabel("token states\n(% of the replica's KV)", fontsize=size.label_font)
    bottom.set_ylabel(labels.axis_label("waiting"), fontsize=size.label_font)
    bottom.set_xlabel(labels.axis_label("start_s"), fontsize=size.label_font)
    if not size.narrow:
        top.set_title(title, fontsize=size.label_font)
    for ax in (top, bottom):
        style(ax, size)
    fig.tight_layout()
    legend(fig, top, size, ncol=4)
    return save(fig, out_dir_of(path), "memory_over_time", formats, size)


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


def cdf_panels(size, n):
    """Axes for n CDF panels: a row on a page; a 2-wide grid in a column (the cell after the
    last panel, if any, holds the legend). Returns (fig, panels, legend cell or None)."""
    cols = n if not size.narrow else 2
    rows = math.ceil((n + (1 if size.narrow and n % 2 else 0)) / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(size.width_in, 2.0 if rows == 1 else 1.6 * rows + 0.2),
                             squeeze=False)
    cells = list(axes.flat)
    spare = cells[n] if len(cells) > n else None
    if spare is not None:
        spare.axis("off")
    return fig, cells[:n], spare


def latency_cdf(out_dir, title, formats, size):
    rows = read_csv(os.path.join(out_dir, "requests.csv"))
    fig, panels, _ = cdf_panels(size, len(LATENCIES))
    for k, (ax, column) in enumerate(zip(panels, LATENCIES)):
        values = [v for v in (as_float(r.get(column)) for r in rows) if v is not None]
        draw_cdf(ax, values, linewidth=1.0)
        log_x_if_wide(ax, values)
        ax.set_xlabel(labels.axis_label(column), fontsize=size.font)
        ax.set_ylim(0, 1.0)
        style(ax, size)
        if k % (len(LATENCIES) if not size.narrow else 2) == 0:
            ax.set_ylabel("fraction of requests", fontsize=size.font)
    if not size.narrow:
        fig.suptitle(title, fontsize=size.label_font)
    fig.tight_layout()
    return save(fig, out_dir, "latency_cdf", formats, size)


def plot_run(out_dir, formats, sizes):
    name = read_json(os.path.join(out_dir, "summary.json")).get("name", os.path.basename(os.path.normpath(out_dir)))
    files = []
    for size in sizes:
        if os.path.exists(os.path.join(out_dir, "iterations.csv")):
            files += memory_over_time(out_dir, f"{name}: memory classes over time", formats, size)
        if os.path.exists(os.path.join(out_dir, "requests.csv")):
            files += latency_cdf(out_dir, f"{name}: latency CDFs", formats, size)
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


def varying(rows, keys):
    """The keys of `keys` that take more than one value over `rows`, less those a point's case
    decides (a case sets them; its name already says so)."""
    out = []
    for k in keys:
        if len({r.get(k, "") for r in rows}) < 2:
            continue
        per_case = {}
        for r in rows:
            per_case.setdefault(r.get("case", ""), set()).add(r.get(k, ""))
        if any(r.get("case") for r in rows) and all(len(v) == 1 for v in per_case.values()):
            continue
        out.append(k)
    return out


def point_names(rows, keys=()):
    """The points as ticks and legends name them: their cases when each point is one case;
    else the values of the swept `keys` that vary, in words ("least KV", "16 tokens"), after
    the case when there is one; the labels when no key tells the points apart."""
    cases = [r.get("case", "") for r in rows]
    if all(cases) and len(set(cases)) == len(cases):
        return cases
    keys = varying(rows, [k for k in keys if k != "case"])
    names = [", ".join(([r["case"]] if r.get("case") else [])
                       + [labels.value_name(k, r[k]) for k in keys if r[k] != ""]) for r in rows]
    return names if keys and len(set(names)) == len(names) else [r["label"] for r in rows]


def points_axis_label(rows, keys=()):
    """The x label of a categorical axis of points: what point_names names them by."""
    cases = [r.get("case", "") for r in rows]
    if all(cases) and len(set(cases)) == len(cases):
        return "case"
    keys = varying(rows, [k for k in keys if k != "case"])
    if keys and len(set(point_names(rows, keys))) == len(rows) and point_names(rows, keys)[0] != rows[0]["label"]:
        return ", ".join((["case"] if any(cases) else []) + [labels.name_and_unit(k)[0] for k in keys])
    return "point"


def series_name(group_rows, others):
    """The legend entry of a line: the case its points share, else the other keys' values
    ("scheduler vLLM, block size 16 tokens")."""
    cases = {r.get("case", "") for r in group_rows}
    if len(cases) == 1 and "" not in cases:
        return cases.pop()
    parts = []
    for k in others:
        v = group_rows[0][k]
        if v == "":
            continue
        parts.append(f"{labels.name_and_unit(k)[0]}: {labels.value_name(k, v)}")
    return ", ".join(parts) or None


def numeric_keys(rows, keys):
    return [k for k in keys
            if len({r[k] for r in rows if r[k] != ""}) > 1 and all(as_float(r[k]) is not None for r in rows)]


def sweep_metrics(out_dir, rows, keys, metrics, formats, size):
    numeric = numeric_keys(rows, keys)
    width = size.width_in if not numeric or len(rows) <= 40 else min(size.width_in + 0.05 * len(rows), 14)
    panel = 1.9 if not size.narrow else 1.45
    fig, axes = plt.subplots(len(metrics), 1, figsize=(width, panel * len(metrics) + 0.3), squeeze=False,
                             sharex=True)
    if numeric:
        # The key with the most values along x (the first of equals), a line per case or per
        # value of the other keys; lines in the order of those values, coloured in that order
        # when the other keys are numbers too.
        x_key = max(numeric, key=lambda k: len({r[k] for r in rows}))
        others = [k for k in keys if k != x_key]
        groups = {}
        for r in rows:
            groups.setdefault((r.get("case", ""),) + tuple(r[k] for k in others), []).append(r)
        ordered = not any(r.get("case") for r in rows) and all(k in numeric or len({r[k] for r in rows}) == 1
                                                                for k in others)
        looks = styles.series(len(groups), ordered)
        xs = [float(r[x_key]) for r in rows]
        base = ticks.log_base(xs)
    for ax, metric in zip(axes[:, 0], metrics):
        if numeric:
            for i, (group, look) in enumerate(zip(groups.values(), looks)):
                points = sorted((float(r[x_key]), as_float(r[metric])) for r in group if as_float(r[metric]) is not None)
                ax.plot([p[0] for p in points], [p[1] for p in points],
                        label=series_name(group, others) if i < MAX_LEGEND else None, **look)
            if base:
                ax.set_xscale("log", base=base)
        else:
            # Cases (or categorical keys): a bar per point, named on a categorical axis; one
            # colour, as the axis names the bars.
            values = [as_float(r[metric]) for r in rows]
            ax.bar(range(len(rows)), [v if v is not None else math.nan for v in values], width=0.7, color="C0")
            ax.set_xlim(-0.6, len(rows) - 0.4)
        ax.set_ylabel(fill(labels.axis_label(metric), size), fontsize=size.font)
        style(ax, size)
        if not numeric:
            ax.grid(axis="x", visible=False)
    bottom = axes[-1, 0]
    if numeric:
        bottom.set_xlabel(labels.axis_label(x_key), fontsize=size.label_font)
        fig.tight_layout()
        ticks.numeric_ticks(bottom, xs, size.font)
        if len(groups) > 1:
            legend_above(fig, *axes[0, 0].get_legend_handles_labels(), fontsize=size.font,
                         ncol=2 if size.narrow else 4)
    else:
        bottom.set_xlabel(points_axis_label(rows, keys), fontsize=size.label_font)
        fig.tight_layout()
        ticks.categorical_ticks(bottom, point_names(rows, keys), size.font)
    fig.tight_layout()
    if numeric and len(groups) > 1:  # tight_layout again moved the axes: the legend goes back on top
        for lg in fig.legends:
            lg.remove()
        legend_above(fig, *axes[0, 0].get_legend_handles_labels(), fontsize=size.font, ncol=2 if size.narrow else 4)
    return save(fig, out_dir, "sweep_metrics", formats, size)


def fill(text, size):
    """An axis label broken before its unit when a column figure has no room for one line."""
    if size.narrow and len(text) > 24 and " (" in text:
        return text.replace(" (", "\n(", 1)
    return text


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


def sweep_memory(out_dir, rows, keys, formats, size):
    n = len(rows)
    fig, ax = plt.subplots(figsize=(size.width_in if n <= 40 else min(size.width_in + 0.1 * n, 20),
                                    2.6 if not size.narrow else 2.2))
    bottom = [0.0] * n
    for column, label, color in memory_segments(rows):
        heights = [as_float(r.get(column)) or 0.0 for r in rows]
        ax.bar(range(n), heights, bottom=bottom, color=color, width=0.8, linewidth=0, label=label)
        bottom = [b + h for b, h in zip(bottom, heights)]
    ax.set_xlim(-0.6, n - 0.4)
    ax.set_ylim(0, 100)
    ax.set_ylabel("% of KV cache memory\n(window average)", fontsize=size.label_font)
    ax.set_xlabel(points_axis_label(rows, keys), fontsize=size.label_font)
    ax.tick_params(labelsize=size.font)
    fig.tight_layout()
    ticks.categorical_ticks(ax, point_names(rows, keys), size.font)
    fig.tight_layout()
    legend(fig, ax, size, ncol=2)
    return save(fig, out_dir, "sweep_memory", formats, size)


def sweep_latency_cdf(out_dir, rows, keys, formats, size):
    """Per-request latency CDFs, a line per point with requests.csv, named as the points are;
    [] when no point wrote requests.csv."""
    curves = []
    for r, name in zip(rows, point_names(rows, keys)):
        path = os.path.join(out_dir, r["point"], "requests.csv")
        if os.path.exists(path):
            curves.append((name, read_csv(path, LATENCIES[:3])))
    if not curves:
        return []
    columns = LATENCIES[:3]
    numeric = numeric_keys(rows, keys)
    ordered = bool(numeric) and len(varying(rows, keys)) == 1 and not any(r.get("case") for r in rows)
    looks = styles.series(len(curves), ordered, linewidth=0.9)
    fig, panels, spare = cdf_panels(size, len(columns))
    for k, (ax, column) in enumerate(zip(panels, columns)):
        seen = []
        for i, ((name, requests), look) in enumerate(zip(curves, looks)):
            values = [v for v in (as_float(q.get(column)) for q in requests) if v is not None]
            seen += values
            look = {**look, "markersize": look["markersize"] * 0.8}
            draw_cdf(ax, values, series=(i, len(curves)), label=name if i < MAX_LEGEND else None, **look)
        log_x_if_wide(ax, seen)
        ax.set_xlabel(labels.axis_label(column), fontsize=size.font)
        ax.set_ylim(0, 1.0)
        style(ax, size)
        if k % (len(columns) if not size.narrow else 2) == 0:
            ax.set_ylabel("fraction of requests", fontsize=size.font)
    fig.tight_layout()
    handles, names = panels[0].get_legend_handles_labels()
    title = points_axis_label(rows, keys)
    title = None if title in ("case", "point") else title
    if spare is not None:
        spare.legend(handles[:MAX_LEGEND], names[:MAX_LEGEND], loc="center", fontsize=size.font, frameon=False,
                     ncol=1 if len(names) <= 8 else 2, title=title, title_fontsize=size.font)
    else:
        legend_above(fig, handles[:MAX_LEGEND], names[:MAX_LEGEND], fontsize=size.font, title=title)
    return save(fig, out_dir, "sweep_latency_cdf", formats, size)


# The bundled reproduction of the vLLM paper's Fig. 2 (experiments/vllm_paper/fig2.yaml's name):
# its sweep gets the paper-comparison bars beside pagesim's.
PAPER_FIG2 = "vllm-paper-fig2"
MAX_FRAGMENTATION_POINTS = 8  # a panel per point: more would be unreadable at paper size


def sweep_memory_over_time(out_dir, rows, formats, size):
    """memory_bars (Fig. 2's sweep only: pagesim's bars beside the paper's numbers) and
    fragmentation (a sweep of at most 8 points with iterations.csv: the classes over time,
    a panel per point, the measurement window shaded)."""
    files = []
    name = read_json(os.path.join(out_dir, rows[0]["point"], "summary.json")).get("name") \
        if os.path.exists(os.path.join(out_dir, rows[0]["point"], "summary.json")) else None
    if name == PAPER_FIG2:
        files += plot_memory.memory_bars(rows, out_dir, True, None, size=size, formats=formats)
    with_iterations = [r for r in rows if os.path.exists(os.path.join(out_dir, r["point"], "iterations.csv"))]
    if with_iterations and len(rows) <= MAX_FRAGMENTATION_POINTS:
        window = measurement_window(os.path.join(out_dir, with_iterations[0]["point"]))
        files += plot_memory.fragmentation(with_iterations, out_dir, None, window, size=size, formats=formats)
    return files


def plot_sweep(out_dir, metrics, formats, sizes):
    rows = read_csv(os.path.join(out_dir, "sweep.csv"), ["point", "label"])
    if not rows:
        raise PlotError(f"{os.path.join(out_dir, 'sweep.csv')}: no point")
    check_metrics(rows, metrics)
    keys = swept_keys(out_dir, rows)
    files = []
    for size in sizes:
        files += (sweep_metrics(out_dir, rows, keys, metrics, formats, size)
                  + sweep_memory(out_dir, rows, keys, formats, size)
                  + sweep_latency_cdf(out_dir, rows, keys, formats, size)
                  + sweep_memory_over_time(out_dir, rows, formats, size))
    return files


def plot(out_dir, metrics=None, formats=("png", "svg"), sizes=("page", "column")):
    """Draws what fits `out_dir` at each of `sizes` (pagesim.plots.sizes: "page", "column");
    returns the file names written. Raises PlotError."""
    for s in sizes:
        if s not in SIZES:
            raise PlotError(f"--size {s}: expected {' or '.join(SIZES)}")
    sizes = [SIZES[s] for s in sizes]
    if os.path.exists(os.path.join(out_dir, "sweep.csv")):
        return plot_sweep(out_dir, metrics or DEFAULT_METRICS, formats, sizes)
    if os.path.exists(os.path.join(out_dir, "summary.json")):
        if metrics:
            raise PlotError("--metric applies to a sweep (a folder with sweep.csv); this is a single run")
        return plot_run(out_dir, formats, sizes)
    raise PlotError(f"{out_dir}: neither sweep.csv nor summary.json: not a results folder of pagesim run")


def main(argv=None):
    p = argparse.ArgumentParser(prog="pagesim plot", description=__doc__.splitlines()[0])
    p.add_argument("out_dir")
    p.add_argument("--metric", default="", help="sweep.csv columns, comma-separated")
    p.add_argument("--format", default="png,svg", help="png, svg, pdf, comma-separated")
    p.add_argument("--size", default="page,column", help="page (7 in: NAME.fmt), column (3.3 in: NAME_column.fmt), "
                   "comma-separated")
    a = p.parse_args(argv)
    metrics = [m for m in a.metric.split(",") if m]
    formats = [f for f in a.format.split(",") if f]
    for f in formats:
        if f not in DETERMINISTIC:
            sys.exit(f"pagesim plot: error: --format {f}: expected png, svg or pdf")
    try:
        files = plot(a.out_dir, metrics, formats, [s for s in a.size.split(",") if s])
    except PlotError as e:
        sys.exit(f"pagesim plot: error: {e}")
    except OSError as e:  # writing a figure (a full disk, a read-only folder)
        sys.exit(f"pagesim plot: error: {e.filename or a.out_dir}: {e.strerror}")
    print(f"plots in {a.out_dir}: {', '.join(files)}")


if __name__ == "__main__":
    main()
