"""The Ray task of pagesim.sweep(executor="ray"): one sweep point, run on a Ray worker.

The task gets the experiment's source (YAML text, file name, overrides, the driver's working
directory) and a point index, rebuilds the experiment (so errors name the same file and
lines as on the driver), runs the point with the C++ function a local sweep uses into a
temporary folder on its node, and returns the point's warnings and files ({name: bytes}),
which the driver writes into the result folder. Ray is imported by the driver only.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from ._experiment import ExperimentSource


def run_point(source: ExperimentSource, index: int) -> tuple[list[str], dict[str, bytes]]:
    """Runs point `index` of `source`; returns (its warnings, its files' bytes by name)."""
    if os.path.isdir(source.cwd):
        os.chdir(source.cwd)  # the experiment's relative paths name the driver's files
    experiment = source.load()
    with tempfile.TemporaryDirectory(prefix="pagesim-ray-") as tmp:
        folder = Path(tmp) / "point"
        warnings = experiment.run_point(index, str(folder))
        files = {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}
    return warnings, files


def unwrap(error: BaseException) -> BaseException:
    """The exception a task raised, out of Ray's RayTaskError wrapper."""
    cause = getattr(error, "cause", None)
    return cause if isinstance(cause, BaseException) else error
