"""Writing matplotlib figures the way every pagesim figure is written: deterministic (same
results, same bytes: no timestamps, fixed SVG ids) and atomic (a temporary name renamed, so
a failed plot leaves nothing half-written). matplotlib is imported by the caller."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Sequence, Union

# Per format, the metadata matplotlib would otherwise fill with the date or its version.
DETERMINISTIC: dict[str, dict[str, Any]] = {
    "png": {"Software": None},
    "svg": {"Date": None},
    "pdf": {"CreationDate": None, "Producer": None, "Creator": None},
}


def save_figure(fig: Any, folder: Union[str, Path], stem: str, formats: Sequence[str], dpi: int = 200) -> list[Path]:
    """Writes `fig` as folder/stem.<format> for each format, closes it, returns the paths.
    REQUIRES: every format in DETERMINISTIC."""
    import matplotlib
    import matplotlib.pyplot as plt

    matplotlib.rcParams["svg.hashsalt"] = "pagesim"
    written = []
    try:
        for ext in formats:
            path = Path(folder) / f"{stem}.{ext}"
            tmp = path.with_name(f"{path.name}.tmp.{os.getpid()}")
            try:
                fig.savefig(tmp, format=ext, dpi=dpi, bbox_inches="tight", metadata=DETERMINISTIC[ext])
                os.replace(tmp, path)
            finally:
                if tmp.exists():
                    tmp.unlink()
            written.append(path)
    finally:
        plt.close(fig)
    return written


def legend_above(fig: Any, handles: list[Any], names: list[str], fontsize: float = 7, ncol: int = 4,
                 title: Any = None) -> None:
    """One legend for the whole figure, above its axes, at most `ncol` entries a row (call
    after tight_layout; saving with bbox_inches="tight" keeps it in the picture)."""
    if handles:
        fig.legend(handles, names, loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=min(len(names), ncol),
                   fontsize=fontsize, frameon=False, title=title, title_fontsize=fontsize)


def draw_cdf(ax: Any, values: Sequence[float], series: tuple[int, int] = (0, 1), **style: Any) -> bool:
    """Draws the empirical CDF of the non-negative, non-NaN `values` as a step line; returns
    whether there was anything to draw. With a marker in `style`, series = (i, n) places this
    curve's markers at its own quantiles (pagesim.plots.styles.cdf_markevery)."""
    from pagesim.plots.styles import cdf_markevery

    xs = sorted(v for v in values if v == v and v >= 0)
    if not xs:
        return False
    n = len(xs)
    if style.get("marker"):
        style.setdefault("markevery", cdf_markevery(n, *series))
    ax.step(xs, [(i + 1) / n for i in range(n)], where="post", **style)
    return True


def log_x_if_wide(ax: Any, values: Sequence[float]) -> bool:
    """A log x axis when the positive `values` span more than a decade (latency tails: on a
    linear axis the bulk of a TPOT CDF is one vertical line), labelled with plain numbers
    (0.01, 0.1, 1; 10^k past 10^4), at most as many as the axes' width holds (about 2.5 an
    inch), and at 2 and 5 within a decade when it spans less than two. Returns whether the
    axis is logarithmic."""
    import math

    from matplotlib.ticker import FixedLocator, FuncFormatter, LogLocator

    positive = [v for v in values if v == v and v > 0]
    if not positive or max(positive) / min(positive) <= 10:
        return False
    ax.set_xscale("log")
    width_in = ax.get_position().width * ax.figure.get_figwidth()
    lo, hi = math.floor(math.log10(min(positive))), math.ceil(math.log10(max(positive)))
    stride = max(1, math.ceil((hi - lo + 1) / max(2, int(width_in * 2.5))))  # every stride-th decade labelled
    ax.xaxis.set_major_locator(FixedLocator([10.0 ** k for k in range(lo, hi + 1) if k % stride == 0]))
    ax.xaxis.set_minor_locator(LogLocator(base=10, subs=[float(m) for m in range(1, 10)], numticks=100))
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: _plain(v)))
    few = math.log10(max(positive) / min(positive)) < 2

    def minor(v: float, _: Any) -> str:
        mantissa = round(v / 10 ** math.floor(math.log10(v) + 1e-9), 6)
        return _plain(v) if few and mantissa in (2.0, 5.0) else ""  # 1 x 10^k: a major tick's

    ax.xaxis.set_minor_formatter(FuncFormatter(minor))
    return True


def _plain(v: float) -> str:
    """A tick value as printed: 0.05, 1, 1000; 10^k (mathtext) outside [0.001, 10^4]."""
    import math

    if 1e-3 <= v < 1e4:
        return f"{v:g}"
    return f"$10^{{{round(math.log10(v))}}}$"
