# pagesim.sweep on local threads: the same folder as `pagesim run` of the sweep, byte for
# byte; --resume semantics (complete points kept, the rest run); progress per point.
import os

import pytest

import pagesim
from conftest import SMALL_SWEEP, assert_same_files, run_cli


def test_threads_sweep_equals_cli_sweep(repo_cwd, small_sweep_file, tmp_path):
    cli = run_cli("run", small_sweep_file, "--out", tmp_path / "cli", "-q")
    assert cli.returncode == 0, cli.stderr
    seen = []
    r = pagesim.sweep(str(small_sweep_file), out=tmp_path / "py", jobs=2,
                      progress=lambda done, total, label: seen.append((done, total)))
    assert_same_files(tmp_path / "cli", tmp_path / "py")
    assert sorted(seen) == [(1, 4), (2, 4), (3, 4), (4, 4)]
    assert len(r) == 4 and list(r.table["point"]) == [p.out.name for p in r]


def test_resume_keeps_complete_points_and_runs_the_rest(repo_cwd, small_sweep_file, tmp_path):
    out = tmp_path / "o"
    pagesim.sweep(str(small_sweep_file), out=out, progress=False)
    reference = tmp_path / "ref"
    os.rename(out, reference)
    pagesim.sweep(str(small_sweep_file), out=out, progress=False)
    points = sorted(p for p in out.iterdir() if p.is_dir())
    # An interrupted sweep: point 1 lost its summary.json (written last), sweep.csv not written.
    (points[1] / "summary.json").unlink()
    (out / "sweep.csv").unlink()
    kept_mtime = (points[0] / "requests.csv").stat().st_mtime_ns
    with pytest.raises(pagesim.ExistingResultsError, match="--resume"):
        pagesim.sweep(str(small_sweep_file), out=out, progress=False)
    seen = []
    pagesim.sweep(str(small_sweep_file), out=out, existing="resume",
                  progress=lambda done, total, label: seen.append((done, label)))
    assert seen == [(4, pagesim.expand_sweep(str(small_sweep_file))[1]["label"])]  # one ran, three were kept
    assert (points[0] / "requests.csv").stat().st_mtime_ns == kept_mtime
    assert_same_files(reference, out)


def test_a_bad_point_fails_before_any_runs(repo_cwd, tmp_path):
    # Point 1 asks for a lengths file that does not exist: an error naming it, nothing written.
    bad = SMALL_SWEEP.replace("  scheduler.kind: [vllm, orca]\n", "") + "  workload.lengths.path: [traces/data/sharegpt_opt_lengths.csv, no/such.csv]\n"
    with pytest.raises((pagesim.ConfigError, pagesim.TraceError), match="no/such.csv"):
        pagesim.sweep(bad, out=tmp_path / "o", progress=False)
    assert not (tmp_path / "o").exists()
