# pagesim.open: a folder the CLI wrote read into the objects pagesim.run returns; tidy
# tables (a row per point, per request, per iteration, with the point's keys); Parquet; the
# errors for folders that are not results; reading without the compiled module.
import os
import subprocess
import sys

import pandas
import pytest
import yaml

import pagesim
from conftest import FIG2, REPO, SMALL_SWEEP, run_cli


@pytest.fixture(scope="module")
def grid(tmp_path_factory):
    """The 2 x 2 grid (block size x scheduler) run by the CLI, and pagesim.run's result of it."""
    tmp = tmp_path_factory.mktemp("grid")
    (tmp / "grid.yaml").write_text(SMALL_SWEEP)
    cli = run_cli("run", tmp / "grid.yaml", "--out", tmp / "cli", "-q")
    assert cli.returncode == 0, cli.stderr
    cwd = os.getcwd()
    os.chdir(REPO)
    try:
        ran = pagesim.run(SMALL_SWEEP, out=tmp / "py")
    finally:
        os.chdir(cwd)
    return tmp / "cli", ran


def test_open_a_sweep_gives_what_run_gave(grid):
    folder, ran = grid
    opened = pagesim.open(folder)
    assert isinstance(opened, pagesim.SweepResult) and len(opened) == len(ran) == 4
    assert [p.label for p in opened] == [p.label for p in ran]
    assert [p.out.name for p in opened] == [p.out.name for p in ran]
    for a, b in zip(opened, ran):
        assert {k: v for k, v in a.summary.items() if "wall" not in k} == \
            {k: v for k, v in b.summary.items() if "wall" not in k}
        assert a.assignments == b.assignments  # a grid: every point sets every key
        assert a.requests.equals(b.requests) and a.iterations.equals(b.iterations)
    assert opened.keys == ["allocator.block_size", "scheduler.kind"]
    pandas.testing.assert_frame_equal(opened.table, ran.table)
    assert opened[opened[1].label] is opened[1]


def test_tidy_tables_carry_the_points_keys(grid):
    folder, _ = grid
    r = pagesim.open(folder)
    requests = r.requests
    assert list(requests.columns[:5]) == ["point", "label", "case", "allocator.block_size", "scheduler.kind"]
    assert list(requests.columns[5:]) == list(r[0].requests.columns)
    assert len(requests) == sum(len(p.requests) for p in r)
    for p in r:
        rows = requests[requests["point"] == p.out.name]
        assert len(rows) == len(p.requests)
        assert set(rows["label"]) == {p.label}
        assert set(rows["scheduler.kind"]) == {p.assignments["scheduler.kind"]}
    # One row per point / per request: a groupby over a swept key sees every value.
    assert set(requests.groupby("scheduler.kind").size().index) == {"vllm", "orca"}
    assert r.iterations.groupby("allocator.block_size").size().to_dict() == {
        bs: sum(len(p.iterations) for p in r if p.assignments["allocator.block_size"] == bs) for bs in (8, 32)}
    one = r[0].table
    assert len(one) == 1 and one.loc[0, "label"] == r[0].label
    assert one.loc[0, "throughput_rps"] == r.table.loc[0, "throughput_rps"]


def test_cases_get_their_effective_keys_and_case(tmp_path):
    cli = run_cli("run", FIG2, "--out", tmp_path / "fig2", "-q", "--set", "workload.duration_s=60",
                  "--set", "measure.window_start_s=0", "--set", "measure.window_end_s=60")
    assert cli.returncode == 0, cli.stderr
    r = pagesim.open(tmp_path / "fig2")
    assert [p.case for p in r] == ["orca-max", "orca-pow2", "orca-oracle", "vllm"]
    assert r["vllm"].assignments["scheduler.kind"] == "vllm"  # effective, though the case sets nothing
    by_scheduler = r.requests.groupby("scheduler.kind").size()
    assert set(by_scheduler.index) == {"orca", "vllm"}
    assert by_scheduler["vllm"] == len(r["vllm"].requests)


def test_labels_with_commas(tmp_path):
    # The fallback of NumPy record arrays failed on a quoted label: pandas reads it.
    config = yaml.safe_load(SMALL_SWEEP)
    config["workload"]["duration_s"] = 10
    config["sweep"] = {"cases": [{"label": "vllm, 16", "scheduler.kind": "vllm"},
                                 {"label": "orca, 16", "scheduler.kind": "orca"}]}
    path = tmp_path / "commas.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    cli = run_cli("run", path, "--out", tmp_path / "o", "-q")
    assert cli.returncode == 0, cli.stderr
    r = pagesim.open(tmp_path / "o")
    assert [p.label for p in r] == ["vllm, 16", "orca, 16"]
    assert list(r.table["case"]) == ["vllm, 16", "orca, 16"]
    assert set(r.requests["label"]) == {"vllm, 16", "orca, 16"}


def test_open_a_single_run(tmp_path):
    config = yaml.safe_load(SMALL_SWEEP)
    del config["sweep"]
    config["workload"]["duration_s"] = 10
    path = tmp_path / "one.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    assert run_cli("run", path, "--out", tmp_path / "o", "-q").returncode == 0
    r = pagesim.open(str(tmp_path / "o"))
    assert isinstance(r, pagesim.RunResult) and r.label == "" and r.warnings == []
    assert r.summary["requests_arrived"] == len(r.requests)
    assert r.table.loc[0, "memory_pct.token_states"] == r.memory_breakdown["token_states"]


def test_parquet_round_trip(grid, tmp_path):
    pytest.importorskip("pyarrow")
    r = pagesim.open(grid[0])
    files = r.to_parquet(tmp_path / "pq")
    assert [f.name for f in files] == ["points.parquet", "requests.parquet", "iterations.parquet"]
    pandas.testing.assert_frame_equal(pandas.read_parquet(files[0]), r.table)
    pandas.testing.assert_frame_equal(pandas.read_parquet(files[1]), r.requests)
    assert len(pandas.read_parquet(files[2])) == len(r.iterations)
    one = r[1].to_parquet(tmp_path / "one")
    assert pandas.read_parquet(one[0]).loc[0, "label"] == r[1].label


def test_folders_that_are_not_results(grid, tmp_path):
    with pytest.raises(pagesim.ResultsFolderError, match="no such folder"):
        pagesim.open(tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(pagesim.ResultsFolderError, match="neither sweep.csv nor summary.json"):
        pagesim.open(tmp_path / "empty")
    # A point folder of the sweep lost its summary.json (an interrupted or moved folder).
    import shutil

    broken = tmp_path / "broken"
    shutil.copytree(grid[0], broken)
    first = sorted(p for p in broken.iterdir() if p.is_dir())[0]
    (first / "summary.json").unlink()
    with pytest.raises(pagesim.ResultsFolderError, match=f"point '{first.name}'.*summary.json is missing"):
        pagesim.open(broken)
    # A sweep a failing point stopped (issue 41): sweep.csv's status column names the points.
    stopped = tmp_path / "stopped"
    shutil.copytree(grid[0], stopped)
    lines = (stopped / "sweep.csv").read_text().splitlines()
    lines = [lines[0] + ",status"] + [line + (",ok" if i == 0 else ",not run") for i, line in enumerate(lines[1:])]
    (stopped / "sweep.csv").write_text("\n".join(lines) + "\n")
    with pytest.raises(pagesim.ResultsFolderError, match="has status 'not run': the sweep stopped part-way"):
        pagesim.open(stopped)


def test_open_works_without_the_compiled_module(grid):
    # The source tree's package alone (no build on the path): open and compare read folders,
    # run says how to build the module.
    code = ("import glob, os, sys\n"
            # no build's package (a .pth of the venv may add one): the source tree's files only
            "sys.path = [p for p in sys.path if not glob.glob(os.path.join(p, 'pagesim', '_core*.so'))]\n"
            "import pagesim; r = pagesim.open(%r); print(len(r), len(r.requests));"
            "c = pagesim.compare(r, r, names=['a', 'b']); print(len(c.long))\n"
            "try:\n    pagesim.run\nexcept ImportError as e:\n    print('ImportError', 'pagesim._core' in str(e))"
            % str(grid[0]))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(REPO / "python")
    p = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, cwd="/")
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert lines[0].startswith("4 ") and lines[2] == "ImportError True"


def test_the_package_shows_only_its_own_names():
    # Issue 41: dir(pagesim) lists the API and its submodules, not the modules it imports itself.
    import types

    modules = {n for n in dir(pagesim) if not n.startswith("_") and isinstance(getattr(pagesim, n), types.ModuleType)}
    foreign = {n for n in modules if not getattr(pagesim, n).__name__.startswith("pagesim.")}
    assert foreign == set(), foreign
    assert "pkgutil" not in dir(pagesim)
