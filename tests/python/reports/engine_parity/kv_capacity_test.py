"""pagesim's vLLM KV budget against the published vLLM start-up logs of
experiments/engine_parity/kv_capacity/logs.csv (check.py there): the target, and malformed rows
refused naming the file and the field."""
import importlib.util
import os

import pytest

from pagesim_binary import REPO, pagesim_binary

FOLDER = os.path.join(REPO, "experiments", "engine_parity", "kv_capacity")
LOGS = os.path.join(FOLDER, "logs.csv")


def load_check():
    spec = importlib.util.spec_from_file_location("kv_capacity_check", os.path.join(FOLDER, "check.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


check = load_check()


def test_at_least_twenty_logs_each_with_a_source():
    rows = check.read_logs(LOGS)
    assert len(rows) >= 20
    assert all(r["source"] for r in rows)


def test_pool_within_target_of_the_logs():
    results = check.compare(pagesim_binary(), check.read_logs(LOGS))
    median, worst = check.summary(results)
    assert median <= check.TARGET_MEDIAN, check.report(results, "logs.csv")
    # Every log, gpt-oss-120b's 3.33 GiB pool on MXFP4 experts included (the Triton backend's
    # padded scale copies and fp32 biases: vllm_moe_backend_bytes).
    assert worst <= check.TARGET_MAX, check.report(results, "logs.csv")


def test_report_is_the_generated_one():
    results = check.compare(pagesim_binary(), check.read_logs(LOGS))
    with open(os.path.join(FOLDER, "REPORT.md")) as f:
        assert f.read() == check.report(results, "logs.csv"), "regenerate: check.py build/pagesim"


@pytest.mark.parametrize("field", ["max_num_seqs", "gpu_memory_utilization", "kv_cache_gib"])
def test_a_row_missing_a_field_is_refused_naming_file_and_field(tmp_path, field):
    with open(LOGS) as f:
        lines = f.read().splitlines()
    header_at = next(i for i, line in enumerate(lines) if not line.startswith("#"))
    columns = lines[header_at].split(",")
    cells = lines[header_at + 1].split(",")
    cells[columns.index(field)] = ""
    lines[header_at + 1] = ",".join(cells)
    bad = tmp_path / "bad_logs.csv"
    bad.write_text("\n".join(lines) + "\n")
    with pytest.raises(check.LogError, match=rf"bad_logs\.csv:{header_at + 2} .*field '{field}' is empty"):
        check.read_logs(str(bad))


def test_a_missing_column_is_refused(tmp_path):
    bad = tmp_path / "no_column.csv"
    bad.write_text("id,vllm_version\nx,0.19.0\n")
    with pytest.raises(check.LogError, match=r"no_column\.csv:1: header lacks the column\(s\) gpu"):
        check.read_logs(str(bad))
