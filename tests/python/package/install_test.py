"""`pip install .` ships the package whole (issue #27 item 10): pyproject builds the module and
the executable and installs CMake's python_package component; that component, installed from
this build (`cmake --install build --component python_package`, what scikit-build-core does into
the wheel) next to python/pagesim's files (the wheel's packages), is a package in which
`import pagesim` works, the `pagesim` console script runs the bundled executable, and relative
paths of an experiment copied anywhere are found in the package's own bundled data. (The real
`pip install .` takes ~10 minutes; README "Installing the Python package" says how it was run.)"""
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
BUILD = REPO / "build"


def pyproject():
    with open(REPO / "pyproject.toml", "rb") as f:
        return tomllib.load(f)


def test_pyproject_ships_the_cli_the_data_and_the_reports():
    p = pyproject()
    assert p["project"]["scripts"]["pagesim"] == "pagesim._cli:main"
    sk = p["tool"]["scikit-build"]
    assert set(sk["build"]["targets"]) == {"pagesim_python", "pagesim"}
    assert sk["install"]["components"] == ["python_package"]
    assert sk["build"]["verbose"] is True  # progress lines under pip -v
    assert sk["wheel"]["packages"] == ["python/pagesim"]  # reports and plots are subpackages
    for sub in ("reports", "plots"):
        assert (REPO / "python" / "pagesim" / sub / "__init__.py").is_file()


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """The package as `pip install .` lays it out, from this build."""
    if not any(BUILD.glob("python/pagesim/_core*.so")) or not (BUILD / "pagesim").is_file():
        pytest.skip("no build with the compiled module and the pagesim executable in build/ (README command 2)")
    site = tmp_path_factory.mktemp("site-packages")
    p = subprocess.run(["cmake", "--install", str(BUILD), "--prefix", str(site), "--component", "python_package"],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stdout + p.stderr
    shutil.copytree(REPO / "python" / "pagesim", site / "pagesim", dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns("__pycache__"))
    return site


def test_installed_layout(installed):
    pkg = installed / "pagesim"
    assert os.access(pkg / "bin" / "pagesim", os.X_OK)
    assert list(pkg.glob("_core*.so"))
    data = pkg / "data"
    assert (data / "PAGESIM_DATA").is_file()
    assert (data / "traces" / "data" / "sharegpt_opt_lengths.csv").is_file()
    assert (data / "sim" / "cost" / "operator_tables").is_dir()
    assert (data / "experiments" / "vllm_paper" / "fig2.yaml").is_file()
    assert (pkg / "reports" / "vllm_paper" / "__main__.py").is_file()
    assert (pkg / "plots" / "memory.py").is_file()


def python_in(installed, code, cwd, *args):
    """Runs `code` with a Python that sees the installed package and not the checkout's."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PAGESIM_DATA_DIR", "PAGESIM_PYTHON_DIR")}
    env["PYTHONPATH"] = str(installed)
    return subprocess.run([sys.executable, "-c", code, *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=300)


def test_import_and_the_console_script(installed, tmp_path):
    p = python_in(installed, "import pagesim, os; print(pagesim.__file__); print(pagesim.run); "
                             "print(os.environ['PAGESIM_DATA_DIR'])", tmp_path)
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines()[0].startswith(str(installed))
    assert p.stdout.splitlines()[2] == str(installed / "pagesim" / "data")
    script = "import sys; from pagesim._cli import main; sys.argv[0] = 'pagesim'; main()"
    p = python_in(installed, script, tmp_path, "--help")
    assert p.returncode == 0 and "pagesim" in p.stdout and "schema" in p.stdout, p.stderr
    # Help names the command, not the executable the console script runs (issue 41).
    assert "Usage: pagesim [OPTIONS] SUBCOMMAND" in p.stdout and str(installed) not in p.stdout, p.stdout


def test_a_copied_experiment_finds_the_packages_data(installed, tmp_path):
    # A lengths file that only the installed package holds: found there, not in the checkout.
    data = installed / "pagesim" / "data" / "traces" / "data"
    shutil.copy(data / "sharegpt_opt_lengths.csv", data / "only_in_the_package.csv")
    shutil.copy(REPO / "experiments" / "vllm_paper" / "fig2.yaml", tmp_path / "fig2.yaml")
    script = "import sys; from pagesim._cli import main; sys.argv[0] = 'pagesim'; main()"
    p = python_in(installed, script, tmp_path, "run", "fig2.yaml", "--out", "out", "-q",
                  "--set", "sweep={}", "--set", "workload.lengths.path=only_in_the_package.csv",
                  "--set", "workload.duration_s=30", "--set", "measure.window_start_s=0",
                  "--set", "measure.window_end_s=30")
    assert p.returncode == 0, p.stdout + p.stderr
    resolved = next((tmp_path / "out").glob("**/config.resolved.yaml")).read_text()
    assert "path: traces/data/only_in_the_package.csv" in resolved  # portable: relative to the data
    # Without the package's data the checkout's bundled data does not have it.
    p = subprocess.run([str(BUILD / "pagesim"), "run", "fig2.yaml", "--out", "out2", "-q", "--set", "sweep={}",
                        "--set", "workload.lengths.path=only_in_the_package.csv"], cwd=tmp_path,
                       capture_output=True, text=True, env={k: v for k, v in os.environ.items()
                                                            if k != "PAGESIM_DATA_DIR"})
    assert p.returncode != 0 and "workload.lengths.path" in p.stderr


def test_matplotlib_is_a_dependency_and_plot_an_alias():
    """Plotting is a core use (issue #41 item 1): a plain `pip install .` installs matplotlib."""
    p = pyproject()["project"]
    assert "matplotlib" in p["dependencies"]
    assert p["optional-dependencies"]["plot"] == ["matplotlib"]  # `pip install .[plot]` still resolves


def test_plot_without_matplotlib_says_what_to_pip_install(monkeypatch, capsys):
    from pagesim import _cli

    monkeypatch.setattr(_cli, "executable", lambda: "/bin/true")  # the check runs before the exec
    for name in ("PAGESIM_PYTHON", "PAGESIM_PYTHON_DIR", "PAGESIM_DATA_DIR"):  # main sets them: restored after
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # find_spec: not importable
    monkeypatch.setattr(sys, "argv", ["pagesim", "plot", "out/fig2"])
    with pytest.raises(SystemExit) as e:
        _cli.main()
    assert str(e.value) == (f"pagesim: error: pagesim plot needs matplotlib, which this Python ({sys.executable}) "
                            f"cannot import: run `{sys.executable} -m pip install matplotlib`")
    # compare names pip's package for a module of another name (yaml: pyyaml).
    monkeypatch.setitem(sys.modules, "yaml", None)
    assert _cli.missing_modules_message(["compare", "a", "b"]).endswith("-m pip install matplotlib pyyaml`")
    assert _cli.missing_modules_message(["run", "x.yaml"]) == ""
    # A Python the user chose is theirs: pagesim reports on it (sim/cli/python_handoff.h).
    monkeypatch.setenv("PAGESIM_PYTHON", "/usr/bin/python3")
    monkeypatch.setattr(_cli.os, "execv", lambda exe, args: (_ for _ in ()).throw(SystemExit("exec " + exe)))
    with pytest.raises(SystemExit) as e:
        _cli.main()
    assert str(e.value) == "exec /bin/true"
