"""pagesim: trace-driven simulator of KV-cache memory management for LLM serving, from Python.

    import pagesim
    r = pagesim.run("experiments/vllm_paper/fig2.yaml")     # a sweep: a SweepResult
    r.summary["vllm"]["memory_pct"]                            # each point's summary.json
    r.table                                                    # sweep.csv as a DataFrame
    r["vllm"].requests                                         # a point's requests.csv
    pagesim.run(cfg, overrides={"scheduler.kind": "orca"})    # one run: a RunResult
    pagesim.expand_sweep(cfg)                                  # the points, without running
    pagesim.sweep(cfg, executor="ray", out="out/big")         # points as Ray tasks
    r = pagesim.open("out/fig2")                               # a folder the CLI wrote: a SweepResult
    r.requests.groupby("case").e2e_s.median()                  # tidy: a row per request, with its point's keys
    r.to_parquet("out/fig2-parquet")                           # points, requests, iterations .parquet
    pagesim.compare("out/before", "out/after").table           # side by side, differences in % too

run() is `pagesim run` (the same C++ function; same files, byte for byte, and the same
file:line: key errors, raised as ConfigError &c.); sweep() runs a sweep's points on local
threads or on Ray into the same folder layout. Simulations release the GIL. open() and
compare() read folders only (they work without the compiled module); tables are pandas
DataFrames.
"""

import pkgutil as _pkgutil

# In a source checkout the package's Python files are in python/pagesim and its compiled
# module in the build's python/pagesim (python/CMakeLists.txt): one package spread over
# every "pagesim" folder on sys.path. An installed package has both in one folder.
__path__ = _pkgutil.extend_path(__path__, __name__)

# An installed package carries pagesim's bundled data (traces, operator tables, experiment
# files) in pagesim/data: the compiled module looks relative input paths up there
# (sim/config/input_path.h), as the installed `pagesim` command does (_cli.py).
import os as _os  # noqa: E402

for _folder in __path__:
    if _os.path.isfile(_os.path.join(_folder, "data", "PAGESIM_DATA")):
        _os.environ.setdefault("PAGESIM_DATA_DIR", _os.path.join(_folder, "data"))
        break

# The compiled module runs simulations (run, sweep, expand_sweep); reading results (open,
# compare) needs only the Python files, so that `pagesim plot` / `pagesim compare` and a
# notebook on a machine without the build still read a results folder.
try:
    from . import _core  # noqa: E402 - after __path__ is complete
except ImportError as e:  # pragma: no cover - a checkout without a build ("cannot import name _core")
    _core = None
    _missing_core = ImportError(
        "pagesim's compiled module pagesim._core was not found: build it (README command 2, bash .ci/test, "
        "builds build/python) and put build/python on PYTHONPATH (bash .ci/python and the project's .venv "
        "do), or pip install ."
    )
    _missing_core.__cause__ = e
from .compare import Comparison, compare
from .result import ResultsFolderError, RunResult, SweepResult
from .result import open_results as open  # noqa: A001 - pagesim.open(folder), as the issue names it

_NEEDS_CORE = ("ConfigError", "CostModelError", "ExistingResultsError", "FolderBusyError", "SimulationError",
               "SweepPointFolderError", "TraceError", "PagesimWarning", "expand_sweep", "run", "sweep",
               "__version__", "__commit__")

if _core is not None:
    from ._core import (
        ConfigError,
        CostModelError,
        ExistingResultsError,
        FolderBusyError,
        SimulationError,
        SweepPointFolderError,
        TraceError,
    )
    from .run import PagesimWarning, expand_sweep, run
    from .sweep import sweep

    # The version and source commit of the build (sim/output/build_info.h), as summary.json
    # records them and `pagesim --version` prints them.
    __version__: str = _core.__version__
    __commit__: str = _core.__commit__


def __getattr__(name: str) -> object:
    """Names of the compiled module's, without it: the ImportError saying how to build it."""
    if name in _NEEDS_CORE and _core is None:
        raise _missing_core
    raise AttributeError(f"module 'pagesim' has no attribute {name!r}")


__all__ = [
    "Comparison",
    "ConfigError",
    "CostModelError",
    "ExistingResultsError",
    "FolderBusyError",
    "PagesimWarning",
    "ResultsFolderError",
    "RunResult",
    "SimulationError",
    "SweepPointFolderError",
    "SweepResult",
    "TraceError",
    "compare",
    "expand_sweep",
    "open",
    "run",
    "sweep",
]
