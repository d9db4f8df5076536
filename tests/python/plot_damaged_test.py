"""`pagesim plot` on a damaged or partial results folder (issue 24 item 13): one line naming
the file and what is wrong, a non-zero exit, never a Python traceback."""
import os
import subprocess
import sys

import pytest

from pagesim_binary import REPO

CLASSES = ["token_states", "reserved", "over_reserved", "rounding", "free"]
ITERATIONS_HEADER = ["iteration", "start_s"] + CLASSES


def plot_cli(folder):
    """Runs `python -m pagesim.plot folder --format png` as `pagesim plot` does."""
    env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "python"))
    return subprocess.run([sys.executable, "-m", "pagesim.plot", str(folder), "--format", "png"],
                          capture_output=True, text=True, env=env, timeout=120)


def expect_one_line_error(folder, *says):
    p = plot_cli(folder)
    assert p.returncode != 0, p.stdout
    assert "Traceback" not in p.stderr, p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1, p.stderr
    assert lines[0].startswith("pagesim plot: error: "), p.stderr
    for s in says:
        assert s in lines[0], p.stderr
    assert not [f for f in os.listdir(folder) if f.endswith(".png") or ".tmp" in f] if os.path.isdir(folder) else True


def write_run(folder, summary='{"name": "r"}', iterations=None):
    folder.mkdir(exist_ok=True)
    (folder / "summary.json").write_text(summary)
    rows = iterations if iterations is not None else [ITERATIONS_HEADER, ["0", "0.0", "10", "0", "0", "0", "90"]]
    (folder / "iterations.csv").write_text("".join(",".join(r) + "\n" for r in rows))


def test_truncated_summary_json(tmp_path):
    write_run(tmp_path, summary='{"name": "r", "memory_pct": {"tok')
    expect_one_line_error(tmp_path, str(tmp_path / "summary.json"), "not valid JSON")


def test_summary_json_not_an_object(tmp_path):
    write_run(tmp_path, summary="[1, 2]")
    expect_one_line_error(tmp_path, str(tmp_path / "summary.json"), "expected a JSON object")


def test_missing_column_in_iterations_csv(tmp_path):
    header = [c for c in ITERATIONS_HEADER if c != "rounding"]
    write_run(tmp_path, iterations=[header, ["0", "0.0", "10", "0", "0", "90"]])
    expect_one_line_error(tmp_path, str(tmp_path / "iterations.csv"), "no column 'rounding'")


def test_empty_iterations_csv(tmp_path):
    write_run(tmp_path, iterations=[])
    expect_one_line_error(tmp_path, str(tmp_path / "iterations.csv"), "no header")


def test_truncated_row_in_iterations_csv(tmp_path):
    write_run(tmp_path, iterations=[ITERATIONS_HEADER, ["0", "0.0", "10", "0", "0", "0", "90"], ["1", "0.5", "1"]])
    expect_one_line_error(tmp_path, str(tmp_path / "iterations.csv"), "line 3", "not a number")


@pytest.mark.parametrize("column, value", [("start_s", "inf"), ("token_states", "nan"), ("free", "-inf")])
def test_non_finite_value_in_iterations_csv(tmp_path, column, value):
    row = ["1", "0.5", "10", "0", "0", "0", "90"]
    row[ITERATIONS_HEADER.index(column)] = value
    write_run(tmp_path, iterations=[ITERATIONS_HEADER, ["0", "0.0", "10", "0", "0", "0", "90"], row])
    expect_one_line_error(tmp_path, f"{tmp_path / 'iterations.csv'}: line 3: column '{column}': found '{value}', "
                          "expected a finite number")


def test_non_finite_value_in_a_cluster_runs_iterations_csv(tmp_path):
    header = ITERATIONS_HEADER + ["replica", "waiting"]
    write_run(tmp_path, iterations=[header, ["0", "0.0", "10", "0", "0", "0", "90", "0", "0"],
                                    ["0", "0.0", "10", "0", "0", "0", "90", "1", "nan"]])
    expect_one_line_error(tmp_path, f"{tmp_path / 'iterations.csv'}: line 3: column 'waiting': found 'nan'")


def test_empty_folder(tmp_path):
    expect_one_line_error(tmp_path, str(tmp_path), "not a results folder")


def test_missing_folder(tmp_path):
    expect_one_line_error(tmp_path / "nope", str(tmp_path / "nope"), "not a results folder")


def test_sweep_csv_without_its_columns(tmp_path):
    (tmp_path / "sweep.csv").write_text("a,b\n1,2\n")
    expect_one_line_error(tmp_path, str(tmp_path / "sweep.csv"), "no column 'point'")


def test_damaged_summary_of_a_sweep_point(tmp_path):
    (tmp_path / "sweep.csv").write_text("point,label,kv.slots,throughput_rps,normalized_latency_s_per_token,"
                                        "memory_pct.token_states\n00-a,a,1,1,1,1\n01-b,b,2,2,2,2\n")
    (tmp_path / "00-a").mkdir()
    (tmp_path / "00-a" / "summary.json").write_text('{"throughput')
    expect_one_line_error(tmp_path, str(tmp_path / "00-a" / "summary.json"), "not valid JSON")


def test_an_intact_run_still_plots(tmp_path):
    write_run(tmp_path)
    p = plot_cli(tmp_path)
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "memory_over_time.png").stat().st_size > 1000


if __name__ == "__main__":
    sys.exit(pytest.main([__file__]))
