"""pagesim.sweep: a sweep's points run by an executor — local threads or Ray tasks.

The steps are those of `pagesim run` (experiment.h), taken one by one so that the points can
run anywhere: every point is parsed and built first (a bad point fails before any runs);
the result folder is claimed (locked; another run's results refused, replaced or resumed:
the CLI's --overwrite / --resume); each point not kept runs through the same C++ function a
local sweep uses; its files land in out/<NN>-<label>/ as they finish (summary.json last, so
an interrupted sweep resumes); sweep.csv is written from the points' summary.json files.
A point's files depend only on the point, so the folder equals a local sweep's byte for
byte, whatever the executor (host timings in summary.json aside).

Executors:
  "threads"  points on `jobs` threads of this process (the GIL is released while they run).
  "ray"      one Ray task per point (pagesim._ray), on the Ray instance `address` names:
             None starts a local one unless ray.init() was already called; "auto" or
             "ray://host:10001" joins a running cluster. A task runs its point in a
             temporary folder on its node and returns the files' bytes, which the driver
             writes; the nodes need pagesim installed, and the experiment's relative paths
             (traces) resolve as on the driver (the file's folder, then the bundled data)
             when the driver's working directory exists on the node (a shared file
             system), else from the node's.
After point i fails, the points after it that have not started are cancelled (those before
it run), so the failure raised, once the running points are done, is always that of the
lowest-numbered failing point, whatever the executor; finished points stay for a resume.
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import sys
import time
import warnings
from pathlib import Path
from typing import Any, Callable, Optional, Union

from . import _core, _experiment
from ._experiment import Config, Overrides
from .result import RunResult, SweepResult
from .run import PagesimWarning, _out_folder, results_of

ProgressFn = Callable[[int, int, str], None]


class _StderrProgress:
    """A line per finished point on stderr: count, label, elapsed time and an ETA."""

    def __init__(self) -> None:
        self.start = time.monotonic()

    def __call__(self, done: int, total: int, label: str) -> None:
        elapsed = time.monotonic() - self.start
        eta = elapsed / done * (total - done) if done else 0.0
        print(f"pagesim: [{done}/{total}] {label or 'run'} done ({elapsed:.1f} s, ETA {eta:.0f} s)",
              file=sys.stderr, flush=True)


def _stderr_notice(text: str) -> None:
    print(f"pagesim: {text}", file=sys.stderr, flush=True)


def _progress_fn(progress: Union[bool, ProgressFn, None]) -> Optional[ProgressFn]:
    if progress is True:
        return _StderrProgress()
    if not progress:
        return None
    return progress


def _run_threads(experiment: Any, out: Path, todo: list[int], folders: list[str], jobs: Optional[int],
                 finished: Callable[[int, list[str]], None]) -> None:
    workers = max(1, min(jobs or os.cpu_count() or 1, len(todo) or 1))
    errors: dict[int, BaseException] = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
        futures = {pool.submit(experiment.run_point, i, str(out / folders[i])): i for i in todo}
        for future in concurrent.futures.as_completed(futures):
            i = futures[future]
            try:
                point_warnings = future.result()
            except concurrent.futures.CancelledError:
                continue
            except BaseException as e:  # noqa: BLE001 - re-raised below, lowest point first
                errors[i] = e
                for f, j in futures.items():
                    if j > i:
                        f.cancel()  # if not started
                continue
            finished(i, point_warnings)
    if errors:
        raise errors[min(errors)]


def _run_ray(source: _experiment.ExperimentSource, out: Path, todo: list[int], folders: list[str],
             address: Optional[str], finished: Callable[[int, list[str]], None],
             notice: Optional[Callable[[str], None]]) -> None:
    try:
        import ray
    except ImportError as e:
        raise ImportError(f"executor='ray' needs the ray package, which {sys.executable} does not have: pip install "
                          "ray (the project's .venv has it: bash .ci/venv)") from e

    from . import _ray

    if not ray.is_initialized():
        # A local instance without the dashboard; a running cluster keeps its own settings.
        local = {} if address else {"include_dashboard": False}
        start = time.monotonic()
        if notice:
            notice(f"connecting to the Ray cluster at {address}" if address else
                   "starting a local Ray instance (a few seconds; --jobs on threads needs none)")
        ray.init(address=address, log_to_driver=False, **local)
        if notice:
            cpus = int(ray.cluster_resources().get("CPU", 0))
            notice(f"Ray ready in {time.monotonic() - start:.1f} s ({cpus} CPUs); {len(todo)} point"
                   f"{'s' if len(todo) != 1 else ''} to run")
    remote = ray.remote(_ray.run_point)
    shared = ray.put(source)  # stored once, not once per task
    pending = {remote.remote(shared, i): i for i in todo}
    errors: dict[int, BaseException] = {}
    while pending:
        # Whatever finished within a second (at least one): a pass per batch, not per point.
        ready, _ = ray.wait(list(pending), num_returns=len(pending), timeout=1.0)
        if not ready:
            ready, _ = ray.wait(list(pending), num_returns=1)
        for ref in ready:
            i = pending.pop(ref)
            try:
                point_warnings, files = ray.get(ref)
            except ray.exceptions.TaskCancelledError:
                continue  # cancelled below, after another point failed
            except BaseException as e:  # noqa: BLE001 - re-raised below, lowest point first
                errors[i] = _ray.unwrap(e)
                for other, j in pending.items():
                    if j > i:
                        ray.cancel(other)
                continue
            _core.write_point_files(str(out / folders[i]), files)  # finished: kept for a resume
            finished(i, point_warnings)
    if errors:
        raise errors[min(errors)]


def sweep(config: Config, overrides: Overrides = None, out: Optional[Union[str, Path]] = None, *,
          executor: str = "threads", jobs: Optional[int] = None, address: Optional[str] = None,
          existing: str = "refuse", progress: Union[bool, ProgressFn, None] = True
          ) -> Union[RunResult, SweepResult]:
    """Runs an experiment's points on an executor and returns its results.

    config, overrides, out, existing: as for pagesim.run ("resume" keeps the points whose
        results are complete for the same config and runs the others).
    executor: "threads" (default; `jobs` threads, default the CPU count) or "ray" (one task
        per point on the Ray instance `address` names; None: a local one, or the instance
        ray.init() already connected to).
    progress: True prints a line per finished point with an ETA on stderr; a callable gets
        (points done, points in all, label); False is silent.

    The folder's files equal those `pagesim run` writes for the same config byte for byte
    (host timings in summary.json aside), whatever the executor.
    """
    return _sweep(config, overrides, out, executor=executor, jobs=jobs, address=address, existing=existing,
                  progress=progress)[0]


def _sweep(config: Config, overrides: Overrides, out: Optional[Union[str, Path]], *, executor: str,
           jobs: Optional[int], address: Optional[str], existing: str, progress: Union[bool, ProgressFn, None]
           ) -> tuple[Union[RunResult, SweepResult], str, str]:
    """sweep(), plus what `python -m pagesim sweep` prints as `pagesim run` does: the closing
    table, and the line saying which points a resume kept and which it ran."""
    if executor not in ("threads", "ray"):
        raise ValueError(f"executor: expected 'threads' or 'ray', found {executor!r}")
    experiment, source = _experiment.load(config, overrides)
    plan = experiment.plan()
    folder, keep_alive = _out_folder(out)
    report = _progress_fn(progress)
    claim = _core.ClaimedFolder(str(folder), existing)
    try:
        kept = claim.prepare(plan)
        folders = [f for f, _ in plan]
        todo = [i for i, k in enumerate(kept) if not k]
        point_warnings: list[list[str]] = [[] for _ in plan]
        for i, k in enumerate(kept):
            if k:  # resumed: its warnings are in its summary.json
                with open(folder / folders[i] / "summary.json", encoding="utf-8") as f:
                    point_warnings[i] = json.load(f).get("warnings", [])
        done = [len(plan) - len(todo)]

        def finished(i: int, w: list[str]) -> None:
            point_warnings[i] = w
            done[0] += 1
            if report:
                report(done[0], len(plan), experiment.label(i))

        if executor == "threads":
            _run_threads(experiment, folder, todo, folders, jobs, finished)
        else:
            _run_ray(source, folder, todo, folders, address, finished, _stderr_notice if progress is True else None)
        if experiment.swept:
            experiment.write_table(str(folder), plan)
        table, resume_note = experiment.results_table(str(folder), plan, kept)
        claim.finish()
    finally:
        claim.release()
    for i, ws in enumerate(point_warnings):
        for w in ws:
            label = experiment.label(i)
            warnings.warn(f"{label}: {w}" if label else w, PagesimWarning, stacklevel=3)
    return results_of(experiment, folder, point_warnings, keep_alive), table, resume_note
