"""Reading results folders: the fixture folder under fixtures/results (two small experiments,
`calib` and `sharing`) and malformed copies made in a temporary folder."""
import os
import shutil

import pytest

from pagesim.reports import load
from pagesim.reports.load import CostModel, Protocol, Results, ResultsError

FIXTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "results")


@pytest.fixture
def res():
    return Results(FIXTURE)


@pytest.fixture
def copy(tmp_path):
    """A writable copy of the fixture folder."""
    root = tmp_path / "results"
    shutil.copytree(FIXTURE, root)
    return root


def row(res, experiment, point):
    return next(r for r in res.sweep(experiment) if r["point"] == point)


def test_experiments_are_the_sorted_folders(res):
    assert res.experiments() == ["calib", "sharing"]
    assert res.has("calib") and not res.has("fig2")


def test_sweep_rows_in_file_order_as_text(res):
    rows = res.sweep("calib")
    assert [r["label"] for r in rows] == ["default,seed=0", "tuned,seed=0"]
    assert rows[0]["throughput_rps"] == "1.25"


def test_number_and_its_errors(res):
    default, tuned = res.sweep("calib")
    assert load.number(default, "throughput_rps") == 1.25
    with pytest.raises(ResultsError, match=r"row 01-tuned, column 'preemptions': 'n/a' is not a number"):
        load.number(tuned, "preemptions")
    with pytest.raises(ResultsError, match=r"row 00-default: no column 'mean_batched_requests'"):
        load.number(default, "mean_batched_requests")


def test_memory_pct_reads_the_five_classes(res):
    assert load.memory_pct(res.sweep("calib")[0]) == {
        "token_states": 90.5, "reserved": 0.0, "over_reserved": 0.0, "rounding": 2.5, "free": 7.0}


def test_case_is_the_label_before_the_sweep_axes():
    assert load.case("vllm,workload.arrival.rate=0.5") == "vllm"
    assert load.case("orca-max,seed=3") == "orca-max"
    assert load.case("beam-2") == "beam-2"


def test_protocol_comes_from_the_first_run(res):
    assert res.protocol("calib") == Protocol(duration_s=900.0, window_start_s=300.0, window_end_s=900.0,
                                             rng="artifact")
    assert res.protocol("sharing") == Protocol(600.0, 120.0, 600.0, "artifact")


def test_offered_rate_reads_the_arrival_rate(res):
    assert res.offered_rate("calib", row(res, "calib", "00-default")) == 4.0
    assert res.offered_rate("calib", row(res, "calib", "01-tuned")) == 0.5


def test_cost_model_takes_kept_preset_values_from_the_description(res):
    # 00-default keeps every preset value (-1 in the config): all three come from summary.json.
    assert res.cost_model("calib", row(res, "calib", "00-default")) == CostModel(
        kind="roofline", model="opt-13b", gpu="a100-40gb", tensor_parallel=1,
        compute_efficiency=0.7, memory_efficiency=0.8, iteration_overhead_s=0.001)


def test_cost_model_takes_set_values_from_the_config(res):
    tuned = res.cost_model("calib", row(res, "calib", "01-tuned"))
    # The config's 17-digit 0.018599999999999998 is the double the description prints as 0.0186.
    assert tuned.iteration_overhead_s == 0.0186
    assert (tuned.compute_efficiency, tuned.memory_efficiency) == (0.7, 0.5)
    assert tuned != res.cost_model("calib", row(res, "calib", "00-default"))


def test_cost_model_names_a_description_without_the_kept_value(copy):
    summary = copy / "calib" / "00-default" / "summary.json"
    summary.write_text('{"cost_model": "roofline(model=opt-13b, compute_efficiency=0.7)"}')
    res = Results(str(copy))
    with pytest.raises(ResultsError, match=r"calib/00-default/summary.json, cost_model: memory_efficiency=''"):
        res.cost_model("calib", row(res, "calib", "00-default"))


def test_cost_model_names_a_missing_config_key(copy):
    cfg = copy / "calib" / "01-tuned" / "config.resolved.yaml"
    cfg.write_text(cfg.read_text().replace("  kind: roofline\n", ""))
    res = Results(str(copy))
    with pytest.raises(ResultsError, match=r"01-tuned/config.resolved.yaml: no key 'cost.kind'"):
        res.cost_model("calib", row(res, "calib", "01-tuned"))


def test_a_non_number_config_value_is_named(copy):
    cfg = copy / "calib" / "00-default" / "config.resolved.yaml"
    cfg.write_text(cfg.read_text().replace("rate: 4", "rate: fast"))
    res = Results(str(copy))
    with pytest.raises(ResultsError, match=r"key 'workload.arrival.rate': 'fast' is not a number"):
        res.offered_rate("calib", row(res, "calib", "00-default"))


def test_sharing_kind_from_the_sampling_classes(res):
    assert res.sharing("sharing", row(res, "sharing", "00-parallel-2")) == ("parallel", 2)
    assert res.sharing("sharing", row(res, "sharing", "01-beam-4-scores-0.5")) == ("beam", 4)
    assert res.sharing("sharing", row(res, "sharing", "02-beam-2-neutral")) == ("beam", 2)


def test_sharing_without_n_or_beam_width_is_an_error(res):
    with pytest.raises(ResultsError, match=r"03-greedy/config.resolved.yaml, key 'workload.sampling': no class"):
        res.sharing("sharing", row(res, "sharing", "03-greedy"))


def test_beam_model(res):
    assert res.beam_model("sharing", row(res, "sharing", "01-beam-4-scores-0.5")) == ("scores", 0.5)
    assert res.beam_model("sharing", row(res, "sharing", "02-beam-2-neutral")) == ("neutral", None)


def test_missing_files_are_named(copy):
    res = Results(str(copy))
    with pytest.raises(ResultsError, match=r"fig2/sweep.csv: No such file"):
        res.sweep("fig2")
    (copy / "calib" / "01-tuned" / "summary.json").unlink()
    with pytest.raises(ResultsError, match=r"01-tuned/summary.json: No such file"):
        res.summary("calib", row(res, "calib", "01-tuned"))
    with pytest.raises(ResultsError, match=r"fig2: No such file"):
        res.protocol("fig2")


def test_malformed_files_are_named(copy):
    (copy / "calib" / "00-default" / "summary.json").write_text('{"cost_model": ')
    (copy / "sharing" / "00-parallel-2" / "config.resolved.yaml").write_text("- a list\n")
    res = Results(str(copy))
    with pytest.raises(ResultsError, match=r"00-default/summary.json:1: Expecting value"):
        res.summary("calib", row(res, "calib", "00-default"))
    with pytest.raises(ResultsError, match=r"00-parallel-2/config.resolved.yaml: expected a mapping"):
        res.protocol("sharing")


def test_a_sweep_row_without_point_is_named(copy):
    (copy / "sharing" / "sweep.csv").write_text("point,label\n00-a,a\n,b\n")
    with pytest.raises(ResultsError, match=r"sharing/sweep.csv:3: a row needs `point` and `label`"):
        Results(str(copy)).sweep("sharing")


def test_an_experiment_without_runs_has_no_protocol(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(ResultsError, match=r"empty: no run folders"):
        Results(str(tmp_path)).protocol("empty")


def test_described_settings_splits_key_value_pairs():
    assert load.described_settings("roofline(model=opt-13b, tp=1, iteration_overhead=0.0186s)") == {
        "model": "opt-13b", "tp": "1", "iteration_overhead": "0.0186s"}
    assert load.described_settings("constant()") == {}


def test_described_settings_rejects_other_text():
    with pytest.raises(ResultsError, match="expected name"):
        load.described_settings("roofline")
    with pytest.raises(ResultsError, match="is not key=value"):
        load.described_settings("roofline(model=opt-13b, fast)")
