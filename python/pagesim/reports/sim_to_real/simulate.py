"""Runs a sim-to-real experiment with `pagesim run` and reads its per-stage client metrics.

Each call runs one experiment in a fresh temporary folder (removed afterwards) with the
given --set overrides, so concurrent calls never share files. client_metrics.json is the
file pagesim writes for a `client:` section (sim/metrics/client_stream_metrics.h): per stage,
inference-perf's five latency distributions in seconds, in measured_runs.json's schema.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Iterable, Sequence

import yaml


TIMEOUT_S = 1800  # one simulation; the sim-to-real runs take about a second each


class SimulationFailed(RuntimeError):
    """`pagesim run` exited non-zero; carries its message."""


def pagesim_binary() -> str:
    """$PAGESIM, as the experiments' run_all.sh scripts set it (experiments/pagesim_binary.sh)."""
    binary = os.environ.get("PAGESIM")
    if not binary:
        raise SimulationFailed("PAGESIM is not set: point it at a built pagesim binary "
                               "(experiments/pagesim_binary.sh builds one)")
    return binary


def without_calibration(config: Path, folder: Path) -> Path:
    """A copy of `config` in `folder` without its calibration key (what calibrate fits)."""
    doc = yaml.safe_load(config.read_text())
    doc.pop("calibration", None)
    path = folder / config.name
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def run(config: Path, overrides: Sequence[str] = (), *, drop_calibration: bool = False) -> list[dict[str, Any]]:
    """The stages of client_metrics.json of `config` run with `overrides` ("key=value")."""
    with tempfile.TemporaryDirectory(prefix="sim2real-") as tmp:
        folder = Path(tmp)
        path = without_calibration(config, folder) if drop_calibration else config
        cmd = [pagesim_binary(), "run", str(path), "--out", str(folder / "out"), "-q"]
        for o in overrides:
            cmd += ["--set", o]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            raise SimulationFailed(f"{' '.join(cmd)}: no result in {TIMEOUT_S} s") from None
        if proc.returncode != 0:
            raise SimulationFailed(f"{' '.join(cmd)}\n{proc.stderr.strip()}")
        doc = json.loads((folder / "out" / "client_metrics.json").read_text())
        return doc["stages"]


def run_many(jobs: Iterable[tuple[Path, Sequence[str], bool]], workers: int = 2) -> list[list[dict[str, Any]]]:
    """run() of each (config, overrides, drop_calibration), `workers` at a time, in order."""
    jobs = list(jobs)
    pool = ThreadPoolExecutor(max_workers=max(1, workers))
    try:
        futures = [pool.submit(run, c, o, drop_calibration=d) for c, o, d in jobs]
        return [f.result() for f in futures]
    finally:  # on a failure, the jobs not started yet are dropped
        pool.shutdown(wait=True, cancel_futures=True)
