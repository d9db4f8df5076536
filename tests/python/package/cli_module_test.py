# `python -m pagesim sweep` (what `pagesim run --ray` execs) prints what `pagesim run` prints:
# the closing table with its note, and under --resume the line naming the points kept and
# run; the version and commit of the build are the CLI's and summary.json's.
import json
import re
import subprocess
import sys
import tomllib

import pagesim
from conftest import REPO, run_cli


def python_m_pagesim(*args, cwd):
    return subprocess.run([sys.executable, "-m", "pagesim", *map(str, args)], cwd=cwd, capture_output=True, text=True)


def test_module_prints_the_clis_table_and_resume_note(small_sweep_file, tmp_path):
    cli = run_cli("run", small_sweep_file, "--out", tmp_path / "cli", "-q", cwd=tmp_path)
    assert cli.returncode == 0, cli.stderr
    py = python_m_pagesim("sweep", small_sweep_file, "--out", tmp_path / "py", "--quiet", cwd=tmp_path)
    assert py.returncode == 0, py.stderr
    table = cli.stdout[:cli.stdout.index("results in")]  # the CLI's table and note, without the wall time
    assert py.stdout.startswith(table), py.stdout
    assert "4 points (threads); results in" in py.stdout
    # A resume after point 2 lost its summary.json: both say which points were kept and which ran.
    point = sorted(p for p in (tmp_path / "py").iterdir() if p.is_dir())[2]
    (point / "summary.json").unlink()
    (tmp_path / "cli" / point.name / "summary.json").unlink()
    py = python_m_pagesim("sweep", small_sweep_file, "--out", tmp_path / "py", "--quiet", "--resume", cwd=tmp_path)
    cli = run_cli("run", small_sweep_file, "--out", tmp_path / "cli", "-q", "--resume", cwd=tmp_path)
    assert py.returncode == 0 and cli.returncode == 0, py.stderr + cli.stderr
    note = f"pagesim: --resume kept 3 of 4 points (complete for this config): "
    assert note in py.stderr and f"; ran 1: {point.name}\n" in py.stderr, py.stderr
    assert py.stderr.endswith(cli.stderr), (py.stderr, cli.stderr)
    assert py.stdout.startswith(table)


def test_version_and_commit_are_recorded(tmp_path):
    with open(REPO / "pyproject.toml", "rb") as f:
        assert pagesim.__version__ == tomllib.load(f)["project"]["version"]
    assert re.fullmatch(r"[0-9a-f]{40}(-dirty)?|unknown", pagesim.__commit__), pagesim.__commit__
    version = run_cli("--version", cwd=tmp_path)
    assert version.returncode == 0, version.stderr
    assert version.stdout == f"pagesim {pagesim.__version__} (commit {pagesim.__commit__})\n"
    r = pagesim.run({"name": "v", "workload": {"arrival": {"kind": "poisson", "rate": 5}, "max_requests": 10}},
                    out=tmp_path / "o")
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert list(summary)[:2] == ["pagesim_version", "pagesim_commit"]
    assert (summary["pagesim_version"], summary["pagesim_commit"]) == (pagesim.__version__, pagesim.__commit__)
    assert r.summary["pagesim_commit"] == pagesim.__commit__


def test_sweep_table_groups_every_case_by_a_key_some_cases_leave_out(tmp_path):
    # Fig. 2's vLLM case sets no scheduler.kind: its row still says vllm, so a groupby keeps it.
    r = pagesim.run(REPO / "experiments" / "vllm_paper" / "fig2.yaml", out=tmp_path / "fig2",
                    overrides={"workload.duration_s": 20, "measure.window_start_s": 0, "measure.window_end_s": 20})
    table = r.table
    assert list(table["case"]) == ["orca-max", "orca-pow2", "orca-oracle", "vllm"]
    assert list(table["scheduler.kind"]) == ["orca", "orca", "orca", "vllm"]
    assert list(table["allocator.kind"]) == ["contiguous", "contiguous", "contiguous", "paged"]
    if hasattr(table, "groupby"):  # pandas
        assert sorted(table.groupby("scheduler.kind").size().items()) == [("orca", 3), ("vllm", 1)]
