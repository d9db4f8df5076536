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


def legend_above(fig: Any, handles: list[Any], names: list[str], fontsize: float = 7) -> None:
    """One legend for the whole figure, above its axes (call after tight_layout; saving with
    bbox_inches="tight" keeps it in the picture)."""
    if handles:
        fig.legend(handles, names, loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=min(len(names), 4),
                   fontsize=fontsize, frameon=False)


def draw_cdf(ax: Any, values: Sequence[float], **style: Any) -> bool:
    """Draws the empirical CDF of the non-negative, non-NaN `values` as a step line; returns
    whether there was anything to draw."""
    xs = sorted(v for v in values if v == v and v >= 0)
    if not xs:
        return False
    n = len(xs)
    ax.step(xs, [(i + 1) / n for i in range(n)], where="post", **style)
    return True


def log_x_if_wide(ax: Any, values: Sequence[float]) -> None:
    """A log x axis when the positive `values` span more than two decades (latency tails)."""
    positive = [v for v in values if v == v and v > 0]
    if positive and max(positive) / min(positive) > 100:
        ax.set_xscale("log")
