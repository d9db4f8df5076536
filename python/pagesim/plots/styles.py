"""How series look so that each stays visible and the legend reads in order: a numeric sweep's
lines (ordered values) take colours in order from a sequential colormap, categories take tab10;
every series also takes its own marker and line style, and series drawn later are thinner and
on top, so curves that coincide show as a dashed line over a solid one (never moved apart: a
curve is drawn where its data are). CDF markers sit at staggered quantiles, so coinciding CDFs
show each series' marker at its own height. Stateless."""

from __future__ import annotations

from typing import Any

import matplotlib

MARKERS = ["o", "s", "^", "D", "v", "P", "X", "<", ">", "*"]
LINESTYLES = ["-", "--", "-.", ":", (0, (5, 1, 1, 1, 1, 1)), (0, (1, 1))]
ORDERED_MAP = "viridis"
ORDERED_RANGE = (0.0, 0.85)  # viridis' top end is a pale yellow that vanishes on white


def colors(n: int, ordered: bool) -> list[Any]:
    """n colours: in order along a sequential map (ordered values) or tab10's (categories)."""
    if not ordered or n == 1:
        return [f"C{i % 10}" for i in range(n)]
    cmap = matplotlib.colormaps[ORDERED_MAP]
    lo, hi = ORDERED_RANGE
    return [cmap(lo + (hi - lo) * i / (n - 1)) for i in range(n)]


def series(n: int, ordered: bool, linewidth: float = 1.2) -> list[dict[str, Any]]:
    """Line keywords for n series (color, marker, linestyle, linewidth, markersize, zorder):
    each distinct by colour and by marker and style; the first drawn widest, the last on top."""
    out = []
    for i, color in enumerate(colors(n, ordered)):
        shrink = min(i, 4) / 4  # 0 for the first, 1 from the fifth on
        out.append({"color": color, "marker": MARKERS[i % len(MARKERS)], "linestyle": LINESTYLES[i % len(LINESTYLES)],
                    "linewidth": linewidth * (1.5 - 0.7 * shrink), "markersize": 5.0 - 1.5 * shrink,
                    "zorder": 2 + i / max(n, 1)})
    return out


def cdf_markevery(points: int, i: int, n: int, per_curve: int = 4) -> list[int]:
    """Indices of a CDF of `points` sorted values at which series i of n puts its markers:
    per_curve quantiles, offset by series so that coinciding curves show each marker."""
    if points == 0:
        return []
    return sorted({min(points - 1, int(points * (j + (i + 0.5) / n) / per_curve)) for j in range(per_curve)})
