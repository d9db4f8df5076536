"""pagesim.compare / `pagesim compare A B [C...]`: results side by side.

Each source is a results folder `pagesim run` wrote (a run or a sweep) or a result object.
Points are matched by label across the sources (a run without sweep is the one point ""),
so two sweeps of the same experiment — before and after a change, two cost models — line up
point by point. For every matched point and metric the comparison gives each source's value
and, against the first source (the baseline), the difference and the difference in % of the
baseline. Figures: the metrics as grouped bars per point, and per-request latency CDFs.

    c = pagesim.compare("out/fig2-a100", "out/fig2-h100")
    c.table            # index (point, metric); a column per source, then "<B> - <A>", "<B> vs <A> %"
    c.long             # tidy: one row per (point, metric, source): value, diff, diff_pct
    c.plot("out/cmp")  # compare_metrics.png, compare_latency_cdf.png
"""

from __future__ import annotations

import math
import os
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Optional, Sequence, Union

from . import labels
from .result import RunResult, SweepResult, flatten, open_results

if TYPE_CHECKING:
    import pandas

Source = Union[str, "os.PathLike[str]", RunResult, SweepResult]

# Summary metrics compared by default: throughput, latency percentiles, memory use, batching.
DEFAULT_METRICS = [
    "throughput_rps",
    "ttft_s.p50",
    "ttft_s.p99",
    "tpot_s.p50",
    "tpot_s.p99",
    "e2e_s.p50",
    "e2e_s.p99",
    "normalized_latency_s_per_token",
    "memory_pct.token_states",
    "mean_batched_requests",
    "preemptions",
]
# requests.csv's latency columns drawn as CDFs.
CDF_COLUMNS = ["ttft_s", "tpot_s", "e2e_s"]
RUN_POINT = ""  # the point of a run without sweep
FORMATS = ("png", "svg", "pdf")


def _points(result: Union[RunResult, SweepResult]) -> list[RunResult]:
    return list(result) if isinstance(result, SweepResult) else [result]


def _point_list(result: Union[RunResult, SweepResult]) -> str:
    """The result's folder and its points' labels, the first few, for an error message."""
    found = [p.label for p in _points(result)]
    if found == [RUN_POINT]:
        return f"{result.out}: a run without sweep (point '')"
    more = f" and {len(found) - 3} more" if len(found) > 3 else ""
    return f"{result.out}: {', '.join(repr(label) for label in found[:3])}{more}"


def _default_names(results: Sequence[Union[RunResult, SweepResult]]) -> list[str]:
    names = [r.out.name or str(r.out) for r in results]
    if len(set(names)) == len(names):
        return names
    return [str(r.out) for r in results] if len({str(r.out) for r in results}) == len(results) else \
        [f"{n} ({i})" for i, n in enumerate(names)]


class Comparison:
    """Sources side by side: see the module's docstring. Build with compare()."""

    def __init__(self, results: list[Union[RunResult, SweepResult]], names: list[str], metrics: list[str]) -> None:
        import pandas

        self.results = results
        self.names = names
        self.metrics = metrics
        rows = []
        for name, result in zip(names, results):
            for p in _points(result):
                values = flatten(p.summary)
                rows.append({"source": name, "point": p.label, "case": p.case,
                             **{m: values.get(m, math.nan) for m in metrics}})
        # One row per (source, point): its label, case and every metric.
        self.points: "pandas.DataFrame" = pandas.DataFrame(rows)
        order = []  # points in the order the sources first list them
        for label in self.points["point"]:
            if label not in order:
                order.append(label)
        self.point_labels: list[str] = order
        base = names[0]
        long_rows = []
        by = {(r["source"], r["point"]): r for r in rows}
        for label in order:
            for m in metrics:
                base_row = by.get((base, label))
                b = float(base_row[m]) if base_row is not None else math.nan
                for name in names:
                    row = by.get((name, label))
                    v = float(row[m]) if row is not None else math.nan
                    diff = v - b
                    pct = 100.0 * diff / b if b not in (0.0,) and not math.isnan(b) else math.nan
                    long_rows.append({"point": label, "metric": m, "unit": labels.unit(m), "source": name,
                                      "value": v, "diff": diff, "diff_pct": pct})
        # Tidy: one row per (point, metric, source); diff and diff_pct against the first source.
        self.long: "pandas.DataFrame" = pandas.DataFrame(long_rows)
        wide = self.long.pivot_table(index=["point", "metric"], columns="source", values="value", sort=False,
                                     dropna=False)[names]
        for name in names[1:]:
            wide[f"{name} - {base}"] = wide[name] - wide[base]
            wide[f"{name} vs {base} %"] = 100.0 * (wide[name] - wide[base]) / wide[base].where(wide[base] != 0)
        # Index (point, metric); a column per source, then each one's difference to the first.
        self.table: "pandas.DataFrame" = wide

    def to_csv(self, path: Union[str, Path]) -> Path:
        """Writes the tidy table (`long`) as CSV; returns the path."""
        path = Path(path)
        self.long.to_csv(path, index=False)
        return path

    def to_text(self) -> str:
        """The table as text: per point, a row per metric (with its unit), a column per source
        and the differences to the first source."""
        import pandas

        table = self.table.copy()
        table.index = pandas.MultiIndex.from_tuples(
            [(p if p != RUN_POINT else "(run)", labels.axis_label(m)) for p, m in table.index], names=["point", "metric"])
        with pandas.option_context("display.width", 200, "display.max_columns", None, "display.max_rows", None,
                                   "display.float_format", lambda v: f"{v:.4g}"):
            return table.to_string() + "\n"

    def __str__(self) -> str:
        return self.to_text()

    def plot(self, folder: Union[str, Path], formats: Sequence[str] = ("png",)) -> list[Path]:
        """Draws compare_metrics (each metric as bars grouped by point, a bar per source) and,
        when the sources have requests.csv, compare_latency_cdf (TTFT, TPOT and end-to-end
        CDFs, a line per source and point) into `folder`; returns the files written."""
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        from ._figures import draw_cdf, legend_above, log_x_if_wide, save_figure
        from .plots.ticks import categorical_ticks

        for f in formats:
            if f not in FORMATS:
                raise ValueError(f"formats: {f!r}: expected one of {', '.join(FORMATS)}")
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        written: list[Path] = []
        n = len(self.metrics)
        cols = 2 if n > 1 else 1
        rows = math.ceil(n / cols)
        fig, axes = plt.subplots(rows, cols, figsize=(7.0, 1.9 * rows + 0.5), squeeze=False)
        width = 0.8 / len(self.names)
        ticks = [p if p != RUN_POINT else "run" for p in self.point_labels]
        values = self.long.set_index(["point", "metric", "source"])["value"]
        for k, metric in enumerate(self.metrics):
            ax = axes[k // cols][k % cols]
            for j, name in enumerate(self.names):
                ys = [values.get((p, metric, name), math.nan) for p in self.point_labels]
                xs = [i + (j - (len(self.names) - 1) / 2) * width for i in range(len(ys))]
                ax.bar(xs, ys, width=width, label=name, color=f"C{j}")
            ax.set_xlim(-0.6, len(ticks) - 0.4)
            ax.set_ylabel(labels.axis_label(metric), fontsize=7)
            ax.tick_params(axis="y", labelsize=7)
            ax.grid(axis="y", alpha=0.3)
        for k in range(n, rows * cols):
            axes[k // cols][k % cols].set_visible(False)
        fig.tight_layout()
        for k in range(n):  # placed by their measured widths once the panels have their size
            categorical_ticks(axes[k // cols][k % cols], ticks, 7)
        fig.tight_layout()
        legend_above(fig, *axes[0][0].get_legend_handles_labels(), fontsize=8)
        written += save_figure(fig, folder, "compare_metrics", formats)

        curves = []
        for j, (name, result) in enumerate(zip(self.names, self.results)):
            for k, p in enumerate(_points(result)):
                if p.requests is not None:
                    curves.append((j, k, name if not p.label else f"{name}: {p.label}", p.requests))
        if curves:
            fig, axes = plt.subplots(1, len(CDF_COLUMNS), figsize=(7.0, 2.4), squeeze=False)
            styles = ["-", "--", ":", "-."]
            for ax, column in zip(axes[0], CDF_COLUMNS):
                seen: list[float] = []
                for j, k, label, requests in curves:
                    xs = requests[column].dropna().tolist()
                    seen += xs
                    draw_cdf(ax, xs, linewidth=1, label=label,
                             color=f"C{k % 10}" if len(self.names) == 1 else f"C{j % 10}",
                             linestyle=styles[k % len(styles)] if len(self.names) > 1 else "-")
                log_x_if_wide(ax, seen)
                ax.set_xlabel(labels.axis_label(column), fontsize=7)
                ax.set_ylim(0, 1)
                ax.tick_params(which="both", labelsize=7)
                ax.grid(alpha=0.3)
            axes[0][0].set_ylabel("fraction of requests", fontsize=7)
            fig.tight_layout()
            legend_above(fig, *axes[0][0].get_legend_handles_labels())
            written += save_figure(fig, folder, "compare_latency_cdf", formats)
        return written


def compare(*sources: Source, names: Optional[Sequence[str]] = None,
            metrics: Optional[Sequence[str]] = None) -> Comparison:
    """Compares two or more results side by side (see the module's docstring).

    sources: results folders (a run's or a sweep's, as `pagesim run` wrote them) or results
        of pagesim.run / sweep / open; the first is the baseline of the differences.
    names: one per source (default: the folders' names, their paths where names repeat).
    metrics: summary metrics as sweep.csv names them ("ttft_s.p99", "memory_pct.free");
        default DEFAULT_METRICS.

    Raises ValueError for fewer than two sources, sources of which no two share a point label
    (naming each one's labels), a wrong number of names or a metric that no source's
    summary.json has (naming the close ones); ResultsFolderError for a folder that is not a
    results folder.
    """
    if len(sources) < 2:
        raise ValueError(f"compare: expected at least two results to compare, found {len(sources)}")
    results = [s if isinstance(s, (RunResult, SweepResult)) else open_results(s) for s in sources]
    # A label in one source only compares with nothing; when every label is, the table is all NaN.
    sources_of = Counter(label for r in results for label in {p.label for p in _points(r)})
    if max(sources_of.values()) < 2:
        raise ValueError(f"compare: no point label in two sources (points are matched by label): "
                         f"{'; '.join(_point_list(r) for r in results)}; expected a label in at least two of them")
    if names is None:
        names = _default_names(results)
    names = list(names)
    if len(names) != len(results):
        raise ValueError(f"names: expected one per source ({len(results)}), found {len(names)}")
    if len(set(names)) != len(names):
        raise ValueError(f"names: expected distinct names, found {names}")
    metrics = list(metrics or DEFAULT_METRICS)
    known = set()
    for r in results:
        for p in _points(r):
            known.update(k for k, v in flatten(p.summary).items() if isinstance(v, (int, float)))
    for m in metrics:
        if m not in known:
            import difflib

            close = difflib.get_close_matches(m, sorted(known), n=3)
            hint = f" (did you mean {', '.join(close)}?)" if close else ""
            raise ValueError(f"metric {m!r}: not a number in any source's summary.json{hint}")
    return Comparison(results, names, metrics)
