"""Tick labels that never overlap, decided by measuring the labels with the figure's renderer
at the size they are printed (not by counting them): a categorical axis writes its names
horizontally when each fits its slot, else wrapped at a separator, else at 45°, else vertically
and, when even vertical labels are taller than a slot, only every k-th. A numeric sweep's axis
is ticked at every swept value, on a log axis labelled with plain numbers (1, 2, 4, ... 256)
when the values are powers of two or spread geometrically. Call these after the figure has its
size and a first tight_layout (the slot widths are measured then). Stateless."""

from __future__ import annotations

import math
import re
from typing import Any, Sequence

from matplotlib.ticker import FixedFormatter, FixedLocator, NullLocator

GAP = 0.9  # a label may take this share of its slot: the rest keeps neighbours apart
SEPARATORS = re.compile(r"(?<=[_ ,=/-])")  # a name wraps after these characters


def _renderer(ax: Any) -> Any:
    return ax.figure.canvas.get_renderer()


def _extent(ax: Any, texts: Sequence[str], fontsize: float, rotation: float = 0) -> tuple[float, float]:
    """The largest width and height (display pixels) of `texts` written at `fontsize`."""
    renderer = _renderer(ax)
    w = h = 0.0
    for text in texts:
        t = ax.text(0, 0, text, fontsize=fontsize, rotation=rotation, transform=None)
        box = t.get_window_extent(renderer)
        t.remove()
        w, h = max(w, box.width), max(h, box.height)
    return w, h


def wrap(name: str, lines: int) -> str:
    """`name` broken after separators into at most `lines` lines of about equal length."""
    parts = [p for p in SEPARATORS.split(name) if p]
    if len(parts) < 2 or lines < 2:
        return name
    target = len(name) / lines
    out, line = [], ""
    for p in parts:
        if line and len(line) + len(p) > target * 1.15 and len(out) < lines - 1:
            out.append(line)
            line = ""
        line += p
    out.append(line)
    return "\n".join(s.strip() for s in out)


def categorical_ticks(ax: Any, names: Sequence[str], fontsize: float) -> str:
    """Writes `names` at x = 0..n-1 (the x limits already set) so that no two overlap; returns
    how: "horizontal", "wrapped", "diagonal" or "vertical" (every k-th name when k > 1)."""
    n = len(names)
    slot = abs(ax.transData.transform((1, 0))[0] - ax.transData.transform((0, 0))[0]) if n > 1 else math.inf
    ax.set_xticks(range(n))
    ax.xaxis.set_minor_locator(NullLocator())
    width, height = _extent(ax, names, fontsize)
    if width <= GAP * slot:
        ax.set_xticklabels(names, fontsize=fontsize)
        return "horizontal"
    for lines in (2, 3):
        wrapped = [wrap(s, lines) for s in names]
        w, h = _extent(ax, wrapped, fontsize)
        if w <= GAP * slot and h <= 3.5 * height:
            ax.set_xticklabels(wrapped, fontsize=fontsize, linespacing=1.0)
            return "wrapped"
    # Rotated by θ, parallel labels stand slot·sin θ apart: a line of text must fit in that.
    if height <= GAP * slot * math.sin(math.radians(45)):
        ax.set_xticklabels(names, fontsize=fontsize, rotation=45, ha="right", rotation_mode="anchor")
        return "diagonal"
    step = max(1, math.ceil(height / (GAP * slot)))
    ax.set_xticks(range(0, n, step))
    ax.set_xticklabels([names[i] for i in range(0, n, step)], fontsize=fontsize, rotation=90)
    return "vertical"


def number_text(v: float) -> str:
    return str(int(v)) if float(v).is_integer() and abs(v) < 1e15 else f"{v:g}"


def log_base(values: Sequence[float]) -> int:
    """2 or 10 when `values` (a numeric sweep's) are better read on a log axis: positive,
    spanning 16x or more, each at least 1.5x the one before (block sizes, capacities, rates
    by doubling); 0 for a linear axis."""
    xs = sorted(set(values))
    if len(xs) < 3 or xs[0] <= 0 or xs[-1] / xs[0] < 16 or any(b / a < 1.5 for a, b in zip(xs, xs[1:])):
        return 0
    powers_of_two = all(math.log2(x).is_integer() for x in xs)
    return 2 if powers_of_two else 10


def numeric_ticks(ax: Any, values: Sequence[float], fontsize: float) -> None:
    """Ticks `ax`'s x axis at every swept value (the scale already chosen), labelled with plain
    numbers from the left; a label that would touch the last one written is left out (its tick
    stays)."""
    xs = sorted(set(values))
    ax.xaxis.set_major_locator(FixedLocator(xs))
    ax.xaxis.set_minor_locator(NullLocator())
    texts = [number_text(x) for x in xs]
    renderer = _renderer(ax)
    shown, right = [], -math.inf
    for x, text in zip(xs, texts):
        t = ax.text(0, 0, text, fontsize=fontsize, transform=None)
        half = t.get_window_extent(renderer).width / 2
        t.remove()
        centre = ax.transData.transform((x, 0))[0]
        if centre - half >= right:
            shown.append(text)
            right = centre + half + 0.3 * fontsize * ax.figure.dpi / 72  # a third of an em apart
        else:
            shown.append("")
    ax.xaxis.set_major_formatter(FixedFormatter(shown))
    ax.tick_params(axis="x", labelsize=fontsize)
