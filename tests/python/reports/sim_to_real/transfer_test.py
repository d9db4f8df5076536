"""sim_to_real's transfer protocol: the groups a leave-one-model-out fit leaves out, the signed
and absolute medians per group, the noise floor read from the measurements, and the same-rows
peer table (its ITL conversion and its refusal of a file without the columns it needs)."""

import json
from pathlib import Path

import pytest

from pagesim.reports.sim_to_real import measured, report

ROOT = Path(__file__).resolve().parents[4]
MEASURED = ROOT / "experiments" / "sim_to_real" / "measured" / "measured_runs.json"
PEERS = ROOT / "experiments" / "sim_to_real" / "peers" / "error_records.csv"
RUN = "20260217-155451-llama-2-7b-tp1-codegen"


def test_groups_split_the_dev_runs_by_model_and_by_tp_alike():
    runs = measured.load(MEASURED)
    by_model = measured.groups(runs, "model")
    assert list(by_model) == ["meta-llama-llama-2-7b-hf", "mistralai-mixtral-8x7b-v0-1"]
    assert all(len(v) == 3 for v in by_model.values())
    by_tp = measured.groups(runs, "tp")
    assert sorted(map(sorted, by_tp.values())) == sorted(map(sorted, by_model.values()))
    with pytest.raises(ValueError, match="unknown grouping 'gpu'"):
        measured.group_of(next(iter(runs.values())), "gpu")


def table_with(variant, values):
    """A report table of `variant` where each run's every stage/metric/statistic is simulated at
    values[run] times the measured value."""
    runs = measured.load(MEASURED)
    table = {}
    for name, run in runs.items():
        for st in run["stages"]:
            for metric in measured.METRICS:
                for stat in measured.STATISTICS:
                    m = float(st["latency_s"][metric][stat])
                    table[(variant, name, st["stage"], metric, stat)] = (m * values.get(name, 1.0), m)
    return runs, table


def test_medians_and_signs_are_taken_per_group():
    runs = measured.load(MEASURED)
    llama = set(measured.groups(runs, "model")["meta-llama-llama-2-7b-hf"])
    runs, table = table_with("calibrated-lomo", {r: 0.96 for r in llama} | {r: 1.10 for r in runs if r not in llama})
    assert report.medians(table, "calibrated-lomo", llama)[("request_latency", "mean")] == pytest.approx(4.0)
    assert report.signed_medians(table, "calibrated-lomo", llama)["time_to_first_token"] == pytest.approx(-4.0)
    others = set(runs) - llama
    assert report.signed_medians(table, "calibrated-lomo", others)["request_latency"] == pytest.approx(10.0)


def test_the_noise_floor_is_a_fraction_of_a_percent_on_thousands_of_requests():
    floor = report.noise_floor(measured.load(MEASURED))
    assert len(floor) == 10 * 3
    e2e = [e for _, _, m, e in floor if m == "request_latency"]
    assert all(0 < e < 1 for e in e2e)


def test_the_peer_table_sets_pagesim_beside_each_simulator_on_the_same_rows():
    runs, table = table_with("calibrated-lomo", {RUN: 1.02})
    lines = report.peer_lines(PEERS, RUN, runs, table)
    assert lines[0].startswith("| stage | metric | actual (ms) | pagesim, leave one model out | aiconfigurator-estimate")
    e2e = next(line for line in lines if line.startswith("| 0 | e2e_mean |"))
    assert "(2.0%)" in e2e.split("|")[4]  # pagesim's cell: 2% over the measured mean
    # ITL in BLIS's definition: the peers' actual scaled by pagesim's (E2E - TTFT) ratio, 2% here.
    itl = next(line for line in lines if line.startswith("| 0 | itl_mean |"))
    assert "(2.0%)" in itl.split("|")[4]
    assert lines[-1].startswith("| | median APE |")
    # Whole-run rows (stage -1) have no pagesim stage to set beside them and are left out.
    assert not any(line.startswith("| -1 |") for line in lines)


def test_a_peer_file_without_its_columns_is_refused(tmp_path):
    bad = tmp_path / "peers.csv"
    bad.write_text("# comment\nsimulator,metric_name,predicted\nvidur,e2e_mean,1\n")
    with pytest.raises(ValueError, match="expected the columns actual, metric_name, predicted"):
        report.read_peers(bad)
