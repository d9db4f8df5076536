"""The results of a run, read from the folder it wrote.

A RunResult is one point's folder (summary.json, config.resolved.yaml, requests.csv,
iterations.csv); a SweepResult is a sweep's folder (one RunResult per point and sweep.csv).
Tables load on first use: pandas DataFrames when pandas can be imported, NumPy record
arrays otherwise. A result made for a temporary folder (out=None) keeps that folder alive;
it is removed when the result is garbage-collected.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator, Optional

import yaml


def load_table(path: Path) -> Any:
    """A CSV file as a pandas DataFrame, or a NumPy record array without pandas."""
    try:
        import pandas
    except ImportError:
        pandas = None
    if pandas is not None:
        return pandas.read_csv(path)
    import numpy

    return numpy.genfromtxt(path, delimiter=",", names=True, dtype=None, encoding="utf-8",
                            deletechars="", replace_space=" ")


class RunResult:
    """One run's results in `out` (a point of a sweep, or a run without sweep)."""

    def __init__(self, out: Path, label: str = "", assignments: Optional[dict[str, Any]] = None,
                 warnings: Optional[list[str]] = None, keep_alive: Any = None) -> None:
        self.out = Path(out)
        self.label = label  # "" without sweep
        self.assignments = dict(assignments or {})  # swept key path -> value
        self.warnings = list(warnings or [])  # as the CLI prints them
        self._keep_alive = keep_alive  # a TemporaryDirectory for out=None
        self._summary: Optional[dict[str, Any]] = None
        self._tables: dict[str, Any] = {}

    @property
    def summary(self) -> dict[str, Any]:
        """summary.json as a dict (host timings wall_s, *_per_wall_second included)."""
        if self._summary is None:
            with open(self.out / "summary.json", encoding="utf-8") as f:
                self._summary = json.load(f)
        return self._summary

    @property
    def memory_breakdown(self) -> dict[str, float]:
        """% of KV capacity per memory class, averaged over the measurement window's
        iterations (summary.json's memory_pct)."""
        return dict(self.summary["memory_pct"])

    @property
    def resolved_config(self) -> dict[str, Any]:
        """config.resolved.yaml: every setting the run used, as a dict."""
        return yaml.safe_load(self.resolved_config_text)

    @property
    def resolved_config_text(self) -> str:
        return (self.out / "config.resolved.yaml").read_text(encoding="utf-8")

    def _table(self, name: str) -> Any:
        if name not in self._tables:
            path = self.out / name
            self._tables[name] = load_table(path) if path.is_file() else None
        return self._tables[name]

    @property
    def requests(self) -> Any:
        """requests.csv (one row per request), or None when output.requests_csv is false."""
        return self._table("requests.csv")

    @property
    def iterations(self) -> Any:
        """iterations.csv (one row per sampled iteration), or None when output.iterations_stride is 0."""
        return self._table("iterations.csv")

    def __repr__(self) -> str:
        name = f" {self.label!r}" if self.label else ""
        return f"<pagesim.RunResult{name} in {str(self.out)!r}>"


class SweepResult:
    """A sweep's results in `out`: one RunResult per point, in point order, and sweep.csv."""

    def __init__(self, out: Path, points: list[RunResult], keep_alive: Any = None) -> None:
        self.out = Path(out)
        self.points = points
        self._keep_alive = keep_alive
        self._table: Any = None

    @property
    def summary(self) -> dict[str, dict[str, Any]]:
        """Each point's summary.json, by label, in point order."""
        return {p.label: p.summary for p in self.points}

    @property
    def table(self) -> Any:
        """sweep.csv: one row per point (swept keys, then the flattened summary)."""
        if self._table is None:
            self._table = load_table(self.out / "sweep.csv")
        return self._table

    @property
    def warnings(self) -> list[str]:
        return [f"{p.label}: {w}" for p in self.points for w in p.warnings]

    def __len__(self) -> int:
        return len(self.points)

    def __iter__(self) -> Iterator[RunResult]:
        return iter(self.points)

    def __getitem__(self, key: int | str) -> RunResult:
        """A point by index or by label."""
        if isinstance(key, str):
            for p in self.points:
                if p.label == key:
                    return p
            raise KeyError(f"no point labelled {key!r}; labels: {[p.label for p in self.points]}")
        return self.points[key]

    def __repr__(self) -> str:
        return f"<pagesim.SweepResult of {len(self.points)} points in {str(self.out)!r}>"
