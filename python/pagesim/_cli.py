"""The `pagesim` command of an installed package (pyproject.toml [project.scripts]): replaces
this process with the package's own pagesim executable, pagesim/bin/pagesim (the same program
as a build's build/pagesim, installed by `pip install .`), telling it where the package's
bundled data is (PAGESIM_DATA_DIR: traces, operator tables, experiment files; see
sim/config/input_path.h) and which Python its hand-offs (`pagesim plot`, `compare`,
`calibrate`, `run --ray`) use: this one (PAGESIM_PYTHON), unless the environment says
otherwise."""
import importlib.util
import os
import sys

PACKAGE = os.path.dirname(os.path.abspath(__file__))
# The modules a hand-off to this Python imports (sim/cli/main.cpp's PythonHandoff.needs): checked
# here because only here is it known which pip installs into this Python.
NEEDS = {"plot": ["matplotlib"], "compare": ["pandas", "matplotlib", "yaml"]}
PIP_NAMES = {"yaml": "pyyaml"}


def executable() -> str:
    """The package's pagesim executable (it may not exist: a source checkout has none)."""
    return os.path.join(PACKAGE, "bin", "pagesim")


def missing_modules_message(args: list) -> str:
    """The error for a subcommand in args that hands over to this Python when it lacks a module
    it needs, naming the `pip install` that fixes it; "" when nothing is missing."""
    command = next((a for a in args if not a.startswith("-")), "")
    missing = [m for m in NEEDS.get(command, []) if importlib.util.find_spec(m) is None]
    if not missing:
        return ""
    names = " ".join(PIP_NAMES.get(m, m) for m in missing)
    return (f"pagesim: error: pagesim {command} needs {', '.join(missing)}, which this Python ({sys.executable}) "
            f"cannot import: run `{sys.executable} -m pip install {names}`")


def main() -> None:
    exe = executable()
    if not os.access(exe, os.X_OK):
        sys.exit(f"pagesim: {exe} is missing: this pagesim package was not installed with `pip install .` "
                 "(in a source checkout, run the build's build/pagesim)")
    data = os.path.join(PACKAGE, "data")
    if os.path.isdir(data):
        os.environ.setdefault("PAGESIM_DATA_DIR", data)
    if "PAGESIM_PYTHON" not in os.environ:  # else that Python is the user's choice, reported by pagesim
        message = missing_modules_message(sys.argv[1:])
        if message:
            sys.exit(message)
    os.environ.setdefault("PAGESIM_PYTHON", sys.executable)
    os.environ.setdefault("PAGESIM_PYTHON_DIR", os.path.dirname(PACKAGE))
    sys.stdout.flush()
    os.execv(exe, [exe] + sys.argv[1:])


if __name__ == "__main__":
    main()
