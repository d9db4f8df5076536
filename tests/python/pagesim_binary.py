"""The pagesim executable for tests that run it: $PAGESIM_BINARY (ctest sets it to the one
it built), else <repo>/build/pagesim. Tests skip, saying how to get one, when there is none:
`.ci/run` runs pytest before the build, and ctest runs these files again with the binary."""
import os
import subprocess

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir))


def pagesim_binary():
    path = os.environ.get("PAGESIM_BINARY") or os.path.join(REPO, "build", "pagesim")
    if not os.access(path, os.X_OK):
        pytest.skip(f"no pagesim executable at {path}: build it (cmake --build build --target pagesim) or set "
                    "PAGESIM_BINARY; ctest runs this test with the binary it built")
    return path


def run_pagesim(*args, cwd=REPO):
    """Runs pagesim with `args`; returns the completed process (fails the test on a non-zero exit)."""
    p = subprocess.run([pagesim_binary(), *args], cwd=cwd, capture_output=True, text=True)
    assert p.returncode == 0, f"pagesim {' '.join(args)} exited {p.returncode}:\n{p.stdout}\n{p.stderr}"
    return p
