"""pagesim: trace-driven simulator of KV-cache memory management for LLM serving, from Python.

    import pagesim
    r = pagesim.run("experiments/vllm_paper/fig2.yaml")     # a sweep: a SweepResult
    r.summary["vllm"]["memory_pct"]                            # each point's summary.json
    r.table                                                    # sweep.csv as a DataFrame
    r["vllm"].requests                                         # a point's requests.csv
    pagesim.run(cfg, overrides={"scheduler.kind": "orca"})    # one run: a RunResult
    pagesim.expand_sweep(cfg)                                  # the points, without running
    pagesim.sweep(cfg, executor="ray", out="out/big")         # points as Ray tasks

run() is `pagesim run` (the same C++ function; same files, byte for byte, and the same
file:line: key errors, raised as ConfigError &c.); sweep() runs a sweep's points on local
threads or on Ray into the same folder layout. Simulations release the GIL.
"""

import pkgutil

# In a source checkout the package's Python files are in python/pagesim and its compiled
# module in the build's python/pagesim (python/CMakeLists.txt): one package spread over
# every "pagesim" folder on sys.path. An installed package has both in one folder.
__path__ = pkgutil.extend_path(__path__, __name__)

try:
    from . import _core  # noqa: E402 - after __path__ is complete
except ModuleNotFoundError as e:  # pragma: no cover - a checkout without a build
    raise ImportError(
        "pagesim's compiled module pagesim._core was not found: build it (README command 2, bash .ci/test, "
        "builds build/python) and put build/python on PYTHONPATH (bash .ci/python and the project's .venv "
        "do), or pip install ."
    ) from e
from ._core import (
    ConfigError,
    CostModelError,
    ExistingResultsError,
    FolderBusyError,
    SimulationError,
    SweepPointFolderError,
    TraceError,
)
from .result import RunResult, SweepResult
from .run import PagesimWarning, expand_sweep, run
from .sweep import sweep

# The version and source commit of the build (sim/output/build_info.h), as summary.json
# records them and `pagesim --version` prints them.
__version__: str = _core.__version__
__commit__: str = _core.__commit__

__all__ = [
    "ConfigError",
    "CostModelError",
    "ExistingResultsError",
    "FolderBusyError",
    "PagesimWarning",
    "RunResult",
    "SimulationError",
    "SweepPointFolderError",
    "SweepResult",
    "TraceError",
    "expand_sweep",
    "run",
    "sweep",
]
