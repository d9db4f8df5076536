# pagesim.run / expand_sweep: the CLI's run from Python — same files byte for byte, same
# errors as exceptions, results as tables — and the GIL released while a simulation runs.
import shutil
import sys
import threading
import time

import numpy
import pandas
import pytest
import yaml

import pagesim
from conftest import FIG2, SMALL_SWEEP, assert_same_files, run_cli


def test_fig2_run_equals_cli_byte_for_byte(repo_cwd, tmp_path):
    # The README's acceptance: the package's Fig. 2 (a sweep of four systems) is the CLI's.
    cli = run_cli("run", FIG2, "--out", tmp_path / "cli", "-q")
    assert cli.returncode == 0, cli.stderr
    r = pagesim.run(str(FIG2.relative_to(repo_cwd)), out=tmp_path / "py")
    assert isinstance(r, pagesim.SweepResult)
    assert [p.label for p in r] == ["orca-max", "orca-pow2", "orca-oracle", "vllm"]
    assert_same_files(tmp_path / "cli", tmp_path / "py")
    # The summary is summary.json: vLLM wastes less of the KV pool than Orca (Max).
    assert r.summary["vllm"]["memory_pct"]["token_states"] > r.summary["orca-max"]["memory_pct"]["token_states"]
    assert r["vllm"].memory_breakdown == r.summary["vllm"]["memory_pct"]
    assert list(r.table["label"]) == ["orca-max", "orca-pow2", "orca-oracle", "vllm"]


def test_single_run_results(repo_cwd, tmp_path):
    config = yaml.safe_load(SMALL_SWEEP)
    del config["sweep"]
    r = pagesim.run(config, overrides={"allocator.block_size": 32, "scheduler.max_num_seqs": 64})
    assert isinstance(r, pagesim.RunResult)
    assert r.out.is_dir()  # a temporary folder, alive while the result is
    assert r.resolved_config["allocator"]["block_size"] == 32
    assert r.resolved_config["scheduler"]["max_num_seqs"] == 64
    s = r.summary
    assert s["requests_arrived"] == len(r.requests) > 100
    assert s["iterations"] == len(r.iterations)
    assert set(r.memory_breakdown) == set(s["memory_pct"])
    assert abs(sum(r.memory_breakdown.values()) - 100.0) < 1e-6  # the classes cover the pool
    # Same run from a YAML string and from the CLI: same files.
    text = yaml.safe_dump(config, sort_keys=False)
    r2 = pagesim.run(text, overrides=["allocator.block_size=32", "scheduler.max_num_seqs=64"], out=tmp_path / "s")
    (tmp_path / "c.yaml").write_text(text)
    cli = run_cli("run", tmp_path / "c.yaml", "--out", tmp_path / "cli", "-q", "--set", "allocator.block_size=32",
                  "--set", "scheduler.max_num_seqs=64")
    assert cli.returncode == 0, cli.stderr
    assert_same_files(tmp_path / "cli", r2.out)


def test_tables_are_dataframes_and_need_pandas(repo_cwd, monkeypatch):
    # pandas is a dependency of the package (pyproject.toml): no second kind of table.
    config = yaml.safe_load(SMALL_SWEEP)
    del config["sweep"]
    r = pagesim.run(config)
    assert isinstance(r.requests, pandas.DataFrame) and len(r.requests) == r.summary["requests_arrived"]
    assert len(r.iterations) == r.summary["iterations"]
    r2 = pagesim.run(config)
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas fails
    with pytest.raises(ImportError, match="needs pandas"):
        r2.requests


def test_config_errors_are_the_clis(repo_cwd, tmp_path):
    bad = SMALL_SWEEP.replace("max_num_seqs: 256", "max_num_seqs: 256, max_num_sequences: 3")
    path = tmp_path / "bad.yaml"
    path.write_text(bad)
    cli = run_cli("run", path, "--out", tmp_path / "o", "-q")
    assert cli.returncode == 1
    with pytest.raises(pagesim.ConfigError) as e:
        pagesim.run(str(path), out=tmp_path / "p")
    assert cli.stderr.strip() == f"pagesim: error: {e.value}"
    assert f"{path}:13" in str(e.value) and "scheduler.max_num_sequences" in str(e.value)
    assert isinstance(e.value, ValueError)
    assert not (tmp_path / "p").exists()  # nothing written
    # A YAML string is named "<string>", with its line; a missing file as the CLI names it.
    with pytest.raises(pagesim.ConfigError, match=r"^<string>:13: scheduler\.max_num_sequences"):
        pagesim.run(bad)
    with pytest.raises(pagesim.ConfigError, match="no/such.yaml.*cannot open the file"):
        pagesim.run("no/such.yaml")
    # A bad point of a sweep fails before any point runs, named with its values.
    with pytest.raises(pagesim.ConfigError, match=r"allocator\.block_size"):
        pagesim.run(SMALL_SWEEP, overrides={"sweep.allocator.block_size": [16, -1]}, out=tmp_path / "q")
    assert not (tmp_path / "q").exists()


def test_existing_results_are_refused_then_replaced(repo_cwd, tmp_path):
    config = yaml.safe_load(SMALL_SWEEP)
    del config["sweep"]
    pagesim.run(config, out=tmp_path / "o")
    with pytest.raises(pagesim.ExistingResultsError, match="--overwrite"):
        pagesim.run(config, out=tmp_path / "o")
    r = pagesim.run(config, overrides={"seed": 4}, out=tmp_path / "o", existing="overwrite")
    assert r.resolved_config["seed"] == 4


def test_point_folder_of_a_sweep_is_refused(repo_cwd, tmp_path):
    """A point folder of a finished sweep belongs to it: a run into it is refused whatever
    `existing` says, and the point is untouched (issue 24, item 7)."""
    r = pagesim.run(SMALL_SWEEP, overrides={"sweep.allocator.block_size": [8]}, out=tmp_path / "s")
    folder = r.points[0].out
    before = (folder / "summary.json").read_bytes()
    config = yaml.safe_load(SMALL_SWEEP)
    del config["sweep"]
    for existing in ("refuse", "overwrite", "resume"):
        with pytest.raises(pagesim.SweepPointFolderError, match="is a point folder of the sweep in") as e:
            pagesim.run(config, out=folder, existing=existing)
        assert isinstance(e.value, FileExistsError)
    assert (folder / "summary.json").read_bytes() == before


def test_expand_sweep():
    points = pagesim.expand_sweep(SMALL_SWEEP)
    assert points == [
        {"label": "allocator.block_size=8,scheduler.kind=vllm", "folder": "00-allocator.block_size=8_scheduler.kind=vllm",
         "allocator.block_size": 8, "scheduler.kind": "vllm"},
        {"label": "allocator.block_size=8,scheduler.kind=orca", "folder": "01-allocator.block_size=8_scheduler.kind=orca",
         "allocator.block_size": 8, "scheduler.kind": "orca"},
        {"label": "allocator.block_size=32,scheduler.kind=vllm",
         "folder": "02-allocator.block_size=32_scheduler.kind=vllm", "allocator.block_size": 32, "scheduler.kind": "vllm"},
        {"label": "allocator.block_size=32,scheduler.kind=orca",
         "folder": "03-allocator.block_size=32_scheduler.kind=orca", "allocator.block_size": 32, "scheduler.kind": "orca"},
    ]
    fig2 = pagesim.expand_sweep(FIG2)
    assert [p["label"] for p in fig2] == ["orca-max", "orca-pow2", "orca-oracle", "vllm"]
    assert fig2[0]["allocator.reservation"] == "max"
    assert pagesim.expand_sweep({"name": "x"}) == [{"label": "", "folder": ""}]


def test_gil_is_released_and_threads_run_points_in_parallel(repo_cwd, tmp_path):
    config = yaml.safe_load(SMALL_SWEEP)
    del config["sweep"]
    # Long enough to tell a stall from a run on any machine: the simulator keeps getting
    # faster, so the simulated hour doubles until one run alone takes 0.4 s of wall time.
    duration = 3000
    while True:
        config["workload"]["duration_s"] = duration
        shutil.rmtree(tmp_path / "alone", ignore_errors=True)
        began = time.monotonic()
        alone = pagesim.run(config, out=tmp_path / "alone")
        if time.monotonic() - began >= 0.4 or duration >= 3000 * 64:
            break
        duration *= 2
    # Two points from two threads; meanwhile this thread keeps ticking, which it could not
    # if a simulation held the GIL.
    results = {}

    def work(name):
        results[name] = pagesim.run(config, out=tmp_path / name)

    threads = [threading.Thread(target=work, args=(n,)) for n in ("a", "b")]
    ticks = []
    start = time.monotonic()
    for t in threads:
        t.start()
    while any(t.is_alive() for t in threads):
        ticks.append(time.monotonic())
        time.sleep(0.005)
    for t in threads:
        t.join()
    took = time.monotonic() - start
    gaps = numpy.diff([start, *ticks])
    assert took > 0.2, "the runs were too short to tell"
    assert gaps.max() < took / 2, f"a simulation held the GIL: this thread stalled {gaps.max():.2f} s of {took:.2f} s"
    assert_same_files(tmp_path / "alone", results["a"].out)
    assert_same_files(tmp_path / "alone", results["b"].out)
    assert alone.summary["requests_finished"] == results["a"].summary["requests_finished"]
