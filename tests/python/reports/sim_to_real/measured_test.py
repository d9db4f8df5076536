"""sim_to_real: the measured-runs loader, the configs made from a run, the streamed messages per
token read from the measurements, and the report's error arithmetic."""

import copy
import json
from pathlib import Path

import pytest
import yaml

from pagesim.reports.sim_to_real import calibrate, measured, report, run_config

ROOT = Path(__file__).resolve().parents[4]
MEASURED = ROOT / "experiments" / "sim_to_real" / "measured" / "measured_runs.json"


def runs():
    return json.loads(MEASURED.read_text())["runs"]


def write(tmp_path, doc):
    p = tmp_path / "m.json"
    p.write_text(json.dumps(doc))
    return p


def test_the_bundled_file_loads_with_six_runs_and_ten_stages():
    loaded = measured.load(MEASURED)
    assert len(loaded) == 6
    assert sum(len(r["stages"]) for r in loaded.values()) == 10


@pytest.mark.parametrize("path,needle", [
    (("stages", 0, "latency_s", "time_to_first_token"), "latency_s: missing 'time_to_first_token'"),
    (("stages", 0, "latency_s", "request_latency", "p99"), "request_latency: missing 'p99'"),
    (("server", "tensor_parallel"), "server: missing 'tensor_parallel'"),
    (("stages", 1), None),
])
def test_a_missing_metric_or_key_is_named(tmp_path, path, needle):
    doc = {"runs": copy.deepcopy(runs()[:1])}
    node = doc["runs"][0]
    for k in path[:-1]:
        node = node[k]
    del node[path[-1]]
    if needle is None:  # removing the second stage leaves a valid run
        measured.load(write(tmp_path, doc))
        return
    with pytest.raises(measured.MeasuredRunsError) as e:
        measured.load(write(tmp_path, doc))
    assert "20260217-155451-llama-2-7b-tp1-codegen" in str(e.value) and needle in str(e.value)


def test_a_non_number_and_a_duplicate_run_are_refused(tmp_path):
    doc = {"runs": copy.deepcopy(runs()[:1])}
    doc["runs"][0]["stages"][0]["latency_s"]["request_latency"]["mean"] = "fast"
    with pytest.raises(measured.MeasuredRunsError, match="expected a number, found 'fast'"):
        measured.load(write(tmp_path, doc))
    doc = {"runs": copy.deepcopy(runs()[:1]) * 2}
    with pytest.raises(measured.MeasuredRunsError, match="appears twice"):
        measured.load(write(tmp_path, doc))


def test_the_config_of_a_run_comes_from_its_record_only():
    r = runs()[3]  # Mixtral TP 2
    cfg = run_config.experiment(r, "cal.yaml")
    assert cfg["model"] == "mixtral-8x7b" and cfg["tensor_parallel"] == 2 and cfg["gpu"] == "h100-sxm"
    assert cfg["scheduler"] == {"kind": "vllm-v1", "max_num_batched_tokens": 2048, "max_num_seqs": 128,
                                "async_steps": 1}
    assert cfg["workload"]["inference_perf"]["stages"] == [{"rate": 5.0, "duration_s": 600.0},
                                                          {"rate": 10.0, "duration_s": 600.0}]
    assert cfg["calibration"] == "cal.yaml"
    # The release its record names sizes its pool and picks its scheduler's behaviour.
    assert cfg["vllm_version"] == "0.15.1" and cfg["kv"] == {"slots": 0, "gpu_memory_utilization": 0.9}


def test_a_server_without_a_vllm_release_is_named():
    r = copy.deepcopy(runs()[0])
    r["server"]["engine"] = "vLLM (nightly)"
    with pytest.raises(measured.MeasuredRunsError, match=r"server.engine: expected the vLLM release"):
        run_config.experiment(r)


def test_unknown_models_and_gpus_are_named():
    r = copy.deepcopy(runs()[0])
    r["server"]["model"] = "acme/unknown-7b"
    with pytest.raises(measured.MeasuredRunsError, match="no pagesim preset for 'acme/unknown-7b'"):
        run_config.experiment(r)
    r = copy.deepcopy(runs()[0])
    r["hardware"] = "TPU v5e"
    with pytest.raises(measured.MeasuredRunsError, match="no pagesim GPU preset matches 'TPU v5e'"):
        run_config.experiment(r)


def test_the_configs_written_are_deterministic(tmp_path):
    a = run_config.write(runs()[0], "m.json", tmp_path / "a", "cal.yaml").read_text()
    b = run_config.write(runs()[0], "m.json", tmp_path / "b", "cal.yaml").read_text()
    assert a == b and yaml.safe_load(a)["name"] == runs()[0]["run"]


def test_the_measurements_show_two_messages_per_token():
    assert calibrate.stream_events_per_token(runs()) == 2


def test_a_run_whose_stream_differs_is_refused():
    odd = copy.deepcopy(runs()[0])
    for st in odd["stages"]:
        st["latency_s"]["time_per_output_token"]["mean"] *= 2  # one message per token
    with pytest.raises(calibrate.CalibrationError, match="streamed messages per token"):
        calibrate.stream_events_per_token(runs() + [odd])


def test_latency_is_the_least_squares_shift():
    pairs = [("r", 0, "time_to_first_token", 0.010, 0.020), ("r", 0, "request_latency", 1.0, 1.010),
             ("r", 0, "time_per_output_token", 0.004, 0.004)]
    lat = calibrate.Problem.latency(pairs)
    # Weighted by 1/measured²: the TTFT's 10 ms gap dominates the E2E's.
    assert 0.0099 < lat <= 0.0100
    assert calibrate.Problem.latency([("r", 0, "time_to_first_token", 0.03, 0.02)]) == 0.0


def test_report_medians_over_stages(tmp_path):
    doc = runs()[:1]
    for variant, scale in (("operators", 1.1), ("calibrated-loo", 0.98), ("calibrated-lomo", 0.97)):
        for r in doc:
            stages = copy.deepcopy(r["stages"])
            for st in stages:
                for m in st["latency_s"].values():
                    for k in m:
                        m[k] *= scale
            out = tmp_path / "res" / variant / r["run"]
            out.mkdir(parents=True)
            (out / "client_metrics.json").write_text(json.dumps({"stages": stages}))
    mfile = write(tmp_path, {"runs": doc})
    text = report.render(mfile, tmp_path / "res", tmp_path / "none.yaml", "test")
    assert "| operators, uncalibrated | 10.0% |" in text
    assert "| operators, calibrated (leave one run out) | 2.0% |" in text
    assert "Leave one model out, the means: E2E 3.0%, TTFT 3.0%, TPOT 3.0%, ITL 3.0%" in text
    # One run: its model's row of the both-ways table, and its signed error.
    assert "| meta-llama/Llama-2-7b-hf | 1 | -3.0% | -3.0% | -3.0% | -3.0% |" in text


def test_report_lists_each_operator_check_with_its_median_and_range(tmp_path):
    (tmp_path / "m-h200-operators.csv").write_text(
        "# device: NVIDIA H200 (sm_90, 132 SMs)\n"
        "operator,batch,length,measured_us,published_us,ratio,published_extrapolated\n"
        "gemm_layer,1,0,10,10,1.000,no\n"
        "gemm_layer,16,0,12,10,1.200,no\n"
        "gemm_layer,64,0,11,10,1.100,no\n"
        "generation_attention,8,512,30,20,1.500,yes\n")
    lines = report.operator_check_lines(tmp_path)
    rows = [line for line in lines if line.startswith("| `")]
    assert len(rows) == 2
    assert "| NVIDIA H200 | gemm_layer | 3 | 1.10 | 1.00–1.20 |" in rows[0]
    assert "| generation_attention | 1 | 1.50 | 1.50–1.50 |" in rows[1]
    assert report.operator_check_lines(tmp_path / "missing") == []


def test_the_committed_report_shows_the_committed_operator_checks(monkeypatch):
    # A GPU run that re-measures experiments/profiles/*-operators.csv must regenerate
    # REPORT.md too (experiments/sim_to_real/run_all.sh); its section once lagged a run behind.
    monkeypatch.chdir(ROOT)
    section = "\n".join(report.operator_check_lines(Path("experiments/profiles")))
    assert section, "no operator checks under experiments/profiles"
    text = (ROOT / "experiments" / "sim_to_real" / "REPORT.md").read_text()
    assert section in text, ("experiments/sim_to_real/REPORT.md's operator section is not what "
                             "experiments/profiles/*-operators.csv give: run experiments/sim_to_real/run_all.sh")
