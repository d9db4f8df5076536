"""pagesim.reports.sim_to_real end to end with the pagesim executable: a measured run's config, its simulated
client metrics, `pagesim calibrate` (a fit, its file, refusals that write nothing) and the
report, on one measured run shortened to two 40-second stages."""

import copy
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from pagesim_binary import REPO, pagesim_binary, run_pagesim  # noqa: E402

from pagesim.reports.sim_to_real import report  # noqa: E402

MEASURED = Path(REPO) / "experiments" / "sim_to_real" / "measured" / "measured_runs.json"
RUN = "20260217-155451-llama-2-7b-tp1-codegen"


@pytest.fixture()
def short(tmp_path):
    """A measured-runs file of RUN with 40 s stages, and its configs under tmp/runs."""
    run = copy.deepcopy(next(r for r in json.loads(MEASURED.read_text())["runs"] if r["run"] == RUN))
    for st in run["stages"]:
        st["duration_s"] = 40
    measured = tmp_path / "measured.json"
    measured.write_text(json.dumps({"runs": [run]}))
    env = dict(os.environ, PYTHONPATH=os.path.join(REPO, "python"))
    subprocess.run([sys.executable, "-m", "pagesim.reports.sim_to_real", "config", str(measured), "--out", str(tmp_path / "runs"),
                    "--calibration", str(tmp_path / "cal.yaml")], check=True, env=env, cwd=REPO, capture_output=True)
    return measured, tmp_path


def test_a_config_runs_and_streams_two_messages_per_token(short):
    measured, tmp = short
    config = tmp / "runs" / f"{RUN}.yaml"
    run_pagesim("run", str(config), "--out", str(tmp / "out"), "-q", "--set", "calibration=none",
                "--set", "client.stream_events_per_token=2")
    stages = json.loads((tmp / "out" / "client_metrics.json").read_text())["stages"]
    assert [s["requests_ok"] for s in stages] == [200, 400]
    lat = stages[0]["latency_s"]
    gaps = (lat["request_latency"]["mean"] - lat["time_to_first_token"]["mean"]) / lat["time_per_output_token"]["mean"]
    assert gaps == pytest.approx(2 * 247 + 1, rel=1e-6)
    assert lat["inter_token_latency"]["median"] == 0.0  # a token's two messages arrive together


def test_calibrate_fits_writes_and_the_experiment_takes_it(short):
    measured, tmp = short
    p = run_pagesim("calibrate", "--measured", str(measured), "--configs", str(tmp / "runs"),
                    "--out", str(tmp / "cal.yaml"), "-j", "1")
    assert "residuals (% of measured)" in p.stdout and f"{RUN} stage 1" in p.stdout
    cal = yaml.safe_load((tmp / "cal.yaml").read_text())
    # gpu_scale is fitted only when --fit names it: by default the tables stand as measured.
    assert set(cal["values"]) == {"cost.host.step_s", "cost.host.per_seq_s", "client.latency_s",
                                  "client.stream_events_per_token"}
    assert cal["fit"]["fitted"] == ["cost.host.step_s", "cost.host.per_seq_s", "client.latency_s"]
    assert cal["values"]["client.stream_events_per_token"] == 2
    assert cal["fit"]["runs"] == [RUN] and cal["fit"]["command"].startswith("pagesim calibrate")
    # The fitted E2E and TPOT means are close on the run they were fitted to.
    for stage, metrics in cal["fit"]["residuals_pct"][RUN].items():
        assert abs(metrics["request_latency"]) < 5 and abs(metrics["time_per_output_token"]) < 5, stage
    run_pagesim("run", str(tmp / "runs" / f"{RUN}.yaml"), "--out", str(tmp / "cal_out"), "-q")
    resolved = yaml.safe_load((tmp / "cal_out" / "config.resolved.yaml").read_text())
    assert resolved["calibration"] == str(tmp / "cal.yaml")
    assert resolved["cost"]["host"]["step_s"] == cal["values"]["cost.host.step_s"]
    assert resolved["client"]["latency_s"] == cal["values"]["client.latency_s"]
    # The report reads the variants it finds.
    (tmp / "res" / "calibrated-in").mkdir(parents=True)
    os.symlink(tmp / "cal_out", tmp / "res" / "calibrated-in" / RUN)
    text = report.render(measured, tmp / "res", tmp / "cal.yaml", "test")
    assert "| operators, calibrated (in sample) |" in text and "`client.latency_s`" in text


@pytest.mark.parametrize("args,message", [
    (["--runs", "no-such-run"], "--runs: 'no-such-run' is not a run of"),
    (["--exclude", RUN], "no run left to fit on"),
    (["--fit", "cost.host.step_s,cost.speed"], "--fit: 'cost.speed' is not a coefficient pagesim calibrate fits"),
    (["--fit", "cost.host.step_s", "--set", "cost.host.step_s=0"], "--set cost.host.step_s: that coefficient is fitted"),
])
def test_calibrate_refuses_and_writes_nothing(short, args, message):
    measured, tmp = short
    p = subprocess.run([pagesim_binary(), "calibrate", "--measured", str(measured), "--configs", str(tmp / "runs"),
                        "--out", str(tmp / "cal.yaml"), *args], capture_output=True, text=True, cwd=REPO)
    assert p.returncode == 1 and message in p.stderr, p.stderr
    assert not (tmp / "cal.yaml").exists()


def test_calibrate_names_a_missing_config_and_a_bad_measured_file(short, tmp_path):
    measured, tmp = short
    (tmp / "runs" / f"{RUN}.yaml").unlink()
    p = subprocess.run([pagesim_binary(), "calibrate", "--measured", str(measured), "--configs", str(tmp / "runs"),
                        "--out", str(tmp / "cal.yaml")], capture_output=True, text=True, cwd=REPO)
    assert p.returncode == 1 and f"no config for measured run '{RUN}'" in p.stderr
    bad = tmp_path / "bad.json"
    bad.write_text('{"runs": [')
    p = subprocess.run([pagesim_binary(), "calibrate", "--measured", str(bad), "--configs", str(tmp / "runs"),
                        "--out", str(tmp / "cal.yaml")], capture_output=True, text=True, cwd=REPO)
    assert p.returncode == 1 and "bad.json:1: not JSON" in p.stderr
    assert not (tmp / "cal.yaml").exists()
