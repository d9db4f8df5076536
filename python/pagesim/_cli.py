"""The `pagesim` command of an installed package (pyproject.toml [project.scripts]): replaces
this process with the package's own pagesim executable, pagesim/bin/pagesim (the same program
as a build's build/pagesim, installed by `pip install .`), telling it where the package's
bundled data is (PAGESIM_DATA_DIR: traces, operator tables, experiment files; see
sim/config/input_path.h) and which Python its hand-offs (`pagesim plot`, `compare`,
`calibrate`, `run --ray`) use: this one (PAGESIM_PYTHON), unless the environment says
otherwise."""
import os
import sys

PACKAGE = os.path.dirname(os.path.abspath(__file__))


def executable() -> str:
    """The package's pagesim executable (it may not exist: a source checkout has none)."""
    return os.path.join(PACKAGE, "bin", "pagesim")


def main() -> None:
    exe = executable()
    if not os.access(exe, os.X_OK):
        sys.exit(f"pagesim: {exe} is missing: this pagesim package was not installed with `pip install .` "
                 "(in a source checkout, run the build's build/pagesim)")
    data = os.path.join(PACKAGE, "data")
    if os.path.isdir(data):
        os.environ.setdefault("PAGESIM_DATA_DIR", data)
    os.environ.setdefault("PAGESIM_PYTHON", sys.executable)
    os.environ.setdefault("PAGESIM_PYTHON_DIR", os.path.dirname(PACKAGE))
    sys.stdout.flush()
    os.execv(exe, [exe] + sys.argv[1:])


if __name__ == "__main__":
    main()
