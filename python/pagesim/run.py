"""pagesim.run and pagesim.expand_sweep: `pagesim run` from Python.

run() calls the very function the CLI's `pagesim run` calls (sim/experiment/experiment.h:
run_experiment_sweep), so the files it writes equal the CLI's byte for byte (host timings
in summary.json aside) and its errors are the CLI's messages, raised as ConfigError &c.
The GIL is released while the simulation runs.
"""

from __future__ import annotations

import tempfile
import warnings
from pathlib import Path
from typing import Any, Optional, Union

import yaml

from . import _experiment
from ._experiment import Config, Overrides
from .result import RunResult, SweepResult


class PagesimWarning(UserWarning):
    """A setting that runs but deserves a look (summary.json's "warnings")."""


def _out_folder(out: Optional[Union[str, Path]]) -> tuple[Path, Any]:
    """The result folder, and what keeps a temporary one alive (None for the caller's)."""
    if out is not None:
        return Path(out), None
    tmp = tempfile.TemporaryDirectory(prefix="pagesim-")
    return Path(tmp.name) / "out", tmp


def _assignments(experiment: Any, index: int) -> dict[str, Any]:
    return {key: yaml.safe_load(text) for key, text in experiment.assignments(index)}


def results_of(experiment: Any, out: Path, point_warnings: list[list[str]], keep_alive: Any = None
               ) -> Union[RunResult, SweepResult]:
    """The result object for an experiment whose files are complete in `out`."""
    if not experiment.swept:
        return RunResult(out, warnings=point_warnings[0], keep_alive=keep_alive)
    points = [RunResult(out / experiment.folder(i), experiment.label(i), _assignments(experiment, i),
                        point_warnings[i], keep_alive) for i in range(len(experiment))]
    result = SweepResult(out, points, keep_alive=keep_alive)
    if "case" in result.table.columns:
        for p, case in zip(points, result.table["case"]):
            p.case = case
    return result


def run(config: Config, overrides: Overrides = None, out: Optional[Union[str, Path]] = None, *,
        jobs: int = 1, existing: str = "refuse") -> Union[RunResult, SweepResult]:
    """Runs an experiment as `pagesim run` does and returns its results.

    config: a YAML file's path, a YAML string, or a dict of settings. Relative paths in it
        (a trace's) resolve as the CLI's do: against the file's folder (the working
        directory for a string or dict), then pagesim's bundled data.
    overrides: {"key.path": value} (or ["key.path=value", ...]), applied in order like --set.
    out: the result folder; None writes into a temporary folder that lives as long as the
        returned result.
    jobs: sweep points run at once (-j), each on its own thread.
    existing: what to do with results of another run in `out`: "refuse" (ExistingResultsError),
        "overwrite", or "resume" (keep the points complete for the same config).

    Returns a RunResult for an experiment without sweep; for a sweep, a SweepResult (one
    RunResult per point, and sweep.csv as `table`). Raises ConfigError (file:line: key:
    message), TraceError, ExistingResultsError, FolderBusyError, SweepPointFolderError (`out` is a
    point folder of a sweep) as the CLI reports them.
    Warnings (summary.json's "warnings") are also issued as PagesimWarning.
    """
    experiment, _ = _experiment.load(config, overrides)
    folder, keep_alive = _out_folder(out)
    info = experiment.run(str(folder), jobs, existing)
    for label, _, point_warnings in info:
        for w in point_warnings:
            warnings.warn(f"{label}: {w}" if label else w, PagesimWarning, stacklevel=2)
    return results_of(experiment, folder, [w for _, _, w in info], keep_alive)


def expand_sweep(config: Config, overrides: Overrides = None) -> list[dict[str, Any]]:
    """The points of an experiment's sweep, in the order they run: for each, {"label": ...,
    "folder": ..., and each swept key path: its value}. One point {"label": "", "folder": ""}
    without sweep. Reads the sweep section only (no point is built: pagesim.run / sweep check
    them before running any)."""
    experiment, _ = _experiment.load(config, overrides)
    return [{"label": experiment.label(i), "folder": experiment.folder(i), **_assignments(experiment, i)}
            for i in range(len(experiment))]
