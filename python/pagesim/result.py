"""The results of a run, read from the folder it wrote.

A RunResult is one point's folder (summary.json, config.resolved.yaml, requests.csv,
iterations.csv); a SweepResult is a sweep's folder (one RunResult per point and sweep.csv).
pagesim.run and pagesim.sweep return them for the folder they wrote; open(folder) makes the
same objects for any folder `pagesim run` wrote, without running anything.

Tables are pandas DataFrames, loaded on first use, and tidy: one row per point (`table`),
per request or per iteration (`requests`, `iterations`); a sweep's per-request and
per-iteration tables carry each row's point, label, case and swept keys' effective values
(sweep.csv's) as their first columns, so `groupby("scheduler.kind")` works on them.
to_parquet() writes them as Parquet files (with pyarrow).

A result made for a temporary folder (out=None) keeps that folder alive; it is removed when
the result is garbage-collected. Results read files only; nothing here needs the compiled
module.
"""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator, Optional, Union

import yaml

if TYPE_CHECKING:  # pandas is imported on first use: `import pagesim` stays fast
    import pandas

# sweep.csv's columns before the swept keys: the point's folder, its label and its case.
POINT_COLUMNS = ("point", "label", "case")
# summary.json's host timings: they differ between two runs of the same config.
HOST_TIMINGS = ("wall_s", "sim_seconds_per_wall_second", "iterations_per_wall_second")


class ResultsFolderError(ValueError):
    """A folder that is not (or no longer) a complete results folder of `pagesim run`: the
    message names the file and what was expected."""


def load_table(path: Union[str, Path]) -> "pandas.DataFrame":
    """A CSV file pagesim wrote as a DataFrame. The point, label and case columns stay
    strings ("" where empty), whatever their text looks like."""
    try:
        import pandas
    except ImportError as e:
        raise ImportError("pagesim's tables are pandas DataFrames: reading one needs pandas, a dependency of "
                          "the package (pip install pandas)") from e

    with open(path, encoding="utf-8", newline="") as f:
        names = set(next(csv.reader(f), []))
    text_columns = [c for c in POINT_COLUMNS if c in names]
    # round_trip: the floats pagesim wrote (shortest round-trip text), not their nearest neighbours.
    table = pandas.read_csv(path, dtype={c: str for c in text_columns}, float_precision="round_trip")
    for c in text_columns:
        table[c] = table[c].fillna("")
    return table


def flatten(summary: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """summary.json's nested keys as sweep.csv names them ("memory_pct.token_states");
    lists (warnings) are left out."""
    out: dict[str, Any] = {}
    for key, value in summary.items():
        if isinstance(value, dict):
            out.update(flatten(value, f"{prefix}{key}."))
        elif not isinstance(value, list):
            out[f"{prefix}{key}"] = value
    return out


class RunResult:
    """One run's results in `out` (a point of a sweep, or a run without sweep).

    label: the point's label ("" without sweep). assignments: the swept keys' values of the
    point ({key path: value}): those the point set, for a result pagesim.run / sweep made;
    every swept key's effective value (sweep.csv's), for one open() read. warnings: as the
    CLI prints them.
    """

    def __init__(self, out: Union[str, Path], label: str = "", assignments: Optional[dict[str, Any]] = None,
                 warnings: Optional[list[str]] = None, keep_alive: Any = None, case: str = "") -> None:
        self.out = Path(out)
        self.label = label
        self.case = case  # the sweep case the point comes from ("" when none)
        self.assignments = dict(assignments or {})
        self.warnings = list(warnings or [])
        self._keep_alive = keep_alive  # a TemporaryDirectory for out=None
        self._summary: Optional[dict[str, Any]] = None
        self._tables: dict[str, Any] = {}

    @property
    def summary(self) -> dict[str, Any]:
        """summary.json as a dict (host timings wall_s, *_per_wall_second included)."""
        if self._summary is None:
            path = self.out / "summary.json"
            try:
                with open(path, encoding="utf-8") as f:
                    self._summary = json.load(f)
            except FileNotFoundError:
                raise ResultsFolderError(f"{path}: no such file: the point did not finish (pagesim run --resume "
                                         "runs it)") from None
            except json.JSONDecodeError as e:
                raise ResultsFolderError(f"{path}: line {e.lineno}: not valid JSON ({e.msg}): a damaged file") from None
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
        """config.resolved.yaml's text."""
        return (self.out / "config.resolved.yaml").read_text(encoding="utf-8")

    @property
    def table(self) -> "pandas.DataFrame":
        """One row: the point's label and case, its swept keys, then its flattened summary
        (sweep.csv's columns for this point; host timings included)."""
        import pandas

        row: dict[str, Any] = {"label": self.label, "case": self.case, **self.assignments}
        row.update(flatten(self.summary))
        return pandas.DataFrame([row])

    def _table(self, name: str) -> Optional["pandas.DataFrame"]:
        if name not in self._tables:
            path = self.out / name
            self._tables[name] = load_table(path) if path.is_file() else None
        return self._tables[name]

    @property
    def requests(self) -> Optional["pandas.DataFrame"]:
        """requests.csv (one row per request), or None when output.requests_csv is false."""
        return self._table("requests.csv")

    @property
    def iterations(self) -> Optional["pandas.DataFrame"]:
        """iterations.csv (one row per sampled iteration), or None when output.iterations_stride is 0."""
        return self._table("iterations.csv")

    def to_parquet(self, folder: Union[str, Path]) -> list[Path]:
        """Writes `table`, `requests` and `iterations` (those there are) as
        folder/{points,requests,iterations}.parquet; returns the files written. Needs pyarrow."""
        return _write_parquet(folder, {"points": self.table, "requests": self.requests,
                                       "iterations": self.iterations})

    def __repr__(self) -> str:
        name = f" {self.label!r}" if self.label else ""
        return f"<pagesim.RunResult{name} in {str(self.out)!r}>"


class SweepResult:
    """A sweep's results in `out`: one RunResult per point, in point order, and sweep.csv.

    Indexing takes a point's label or position: result["vllm"], result[0].
    """

    def __init__(self, out: Union[str, Path], points: list[RunResult], keep_alive: Any = None) -> None:
        self.out = Path(out)
        self.points = points
        self._keep_alive = keep_alive
        self._table: Optional["pandas.DataFrame"] = None
        self._tidy: dict[str, Optional["pandas.DataFrame"]] = {}

    @property
    def summary(self) -> dict[str, dict[str, Any]]:
        """Each point's summary.json, by label, in point order."""
        return {p.label: p.summary for p in self.points}

    @property
    def table(self) -> "pandas.DataFrame":
        """sweep.csv: one row per point (point folder, label, case, every swept key's
        effective value, then the flattened summary without host timings)."""
        if self._table is None:
            self._table = load_table(self.out / "sweep.csv")
        return self._table

    @property
    def keys(self) -> list[str]:
        """The swept keys: sweep.csv's columns between the case and the summary's."""
        columns = list(self.table.columns)
        first = max(columns.index(c) for c in POINT_COLUMNS if c in columns) + 1
        results = set(flatten(self.points[0].summary)) if self.points else set()
        keys = []
        for c in columns[first:]:
            if c in results:
                break
            keys.append(c)
        return keys

    def _tidy_table(self, name: str) -> Optional["pandas.DataFrame"]:
        """The points' `name` CSV files stacked, each row led by its point's sweep.csv
        columns (point, label, case, swept keys); None when no point wrote one."""
        if name not in self._tidy:
            import pandas

            # Every sweep's tidy tables lead with point, label and case ("" for a grid, whose
            # sweep.csv has no case column), then its swept keys.
            points = self.table.assign(case=self.table["case"] if "case" in self.table.columns else "")
            lead = list(POINT_COLUMNS) + self.keys
            parts = []
            for point, row in zip(self.points, points[lead].itertuples(index=False)):
                part = point._table(name)
                if part is None:
                    continue
                part = part.copy()
                for i, column in enumerate(lead):
                    part.insert(i, column, row[i])
                parts.append(part)
            self._tidy[name] = pandas.concat(parts, ignore_index=True) if parts else None
        return self._tidy[name]

    @property
    def requests(self) -> Optional["pandas.DataFrame"]:
        """Every point's requests.csv in one table, one row per request, led by its point's
        point, label, case ("" without cases) and swept keys; None when no point wrote
        requests.csv."""
        return self._tidy_table("requests.csv")

    @property
    def iterations(self) -> Optional["pandas.DataFrame"]:
        """Every point's iterations.csv in one table, one row per sampled iteration, led by
        its point's point, label, case and swept keys; None when no point wrote one."""
        return self._tidy_table("iterations.csv")

    def to_parquet(self, folder: Union[str, Path]) -> list[Path]:
        """Writes `table` (one row per point), `requests` and `iterations` (those there are)
        as folder/{points,requests,iterations}.parquet; returns the files written. Needs pyarrow."""
        return _write_parquet(folder, {"points": self.table, "requests": self.requests,
                                       "iterations": self.iterations})

    @property
    def warnings(self) -> list[str]:
        """Every point's warnings, each led by its point's label."""
        return [f"{p.label}: {w}" for p in self.points for w in p.warnings]

    def __len__(self) -> int:
        return len(self.points)

    def __iter__(self) -> Iterator[RunResult]:
        return iter(self.points)

    def __getitem__(self, key: Union[int, str]) -> RunResult:
        if isinstance(key, int):
            return self.points[key]
        for p in self.points:
            if p.label == key:
                return p
        raise KeyError(f"no point labelled {key!r} (labels: {', '.join(p.label for p in self.points)})")

    def __repr__(self) -> str:
        return f"<pagesim.SweepResult of {len(self.points)} points in {str(self.out)!r}>"


def _write_parquet(folder: Union[str, Path], tables: dict[str, Optional["pandas.DataFrame"]]) -> list[Path]:
    try:
        import pyarrow  # noqa: F401 - pandas' Parquet engine
    except ImportError as e:
        raise ImportError("to_parquet needs the pyarrow package: pip install pyarrow (or pip install "
                          "'pagesim[parquet]')") from e
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, table in tables.items():
        if table is None:
            continue
        path = folder / f"{name}.parquet"
        table.to_parquet(path, index=False)
        written.append(path)
    return written


def open_results(folder: Union[str, "os.PathLike[str]"]) -> Union[RunResult, SweepResult]:
    """The results in `folder`, a folder `pagesim run` (or pagesim.run / sweep) wrote: a
    SweepResult when it holds sweep.csv (its points from sweep.csv's rows, their swept keys'
    effective values as assignments), else a RunResult when it holds summary.json.

    Also pagesim.open. Raises ResultsFolderError naming the file when the folder is neither,
    or sweep.csv lacks its point / label columns or names a point folder that is missing.
    """
    out = Path(folder)
    sweep_csv = out / "sweep.csv"
    if sweep_csv.is_file():
        try:
            table = load_table(sweep_csv)
        except Exception as e:  # pandas' parser errors have no common base class
            raise ResultsFolderError(f"{sweep_csv}: not a CSV file pagesim wrote ({e})") from None
        for column in ("point", "label"):
            if column not in table.columns:
                raise ResultsFolderError(f"{sweep_csv}: no column '{column}' (expected point, label, case, the swept "
                                         "keys, then the summary): a damaged file, or not pagesim's")
        points = []
        for row in table.to_dict("records"):
            folder_i = out / row["point"]
            status = row.get("status", "ok")
            if status != "ok":
                raise ResultsFolderError(f"{sweep_csv}: point {row['point']!r} has status {status!r}: the sweep stopped "
                                         "part-way (its status column says which points finished); run the rest "
                                         "with pagesim run ... --resume, as pagesim run printed")
            if not (folder_i / "summary.json").is_file():
                raise ResultsFolderError(f"{sweep_csv}: point {row['point']!r}: {folder_i / 'summary.json'} is "
                                         "missing (a partial or moved folder)")
            points.append(RunResult(folder_i, row["label"], case=row.get("case", "")))
        result = SweepResult(out, points)
        result._table = table
        for p, row in zip(points, table[result.keys].to_dict("records")):
            p.assignments = row
            p.warnings = list(p.summary.get("warnings", []))
        return result
    if (out / "summary.json").is_file():
        r = RunResult(out)
        r.warnings = list(r.summary.get("warnings", []))
        return r
    if not out.is_dir():
        raise ResultsFolderError(f"{out}: no such folder")
    raise ResultsFolderError(f"{out}: neither sweep.csv nor summary.json: not a results folder of pagesim run "
                             "(a sweep's point folder holds summary.json; the sweep's folder sweep.csv)")
