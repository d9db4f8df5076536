"""The cluster report (python -m pagesim.reports.cluster) on a tiny synthetic results folder written
by the test itself (the layout experiments/cluster/run_all.sh writes, with only the keys the
report reads and round numbers whose derived values are computed by hand), and its errors."""
import csv
import json
import os
import subprocess
import sys

import pytest

from pagesim.reports.cluster import __main__ as make_cluster_report
from pagesim.reports.cluster.results import GLOBAL_RUNS, TIER_RUNS
from pagesim.reports.load import ResultsError

PYTHON_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), *[os.pardir] * 4, "python")


def write_summary(root, folder, summary):
    os.makedirs(root / folder, exist_ok=True)
    (root / folder / "summary.json").write_text(json.dumps(summary))


def cluster_summary(hit, remote, ttft_mean):
    """A 10-request run of 1,000 prompt tokens per request with `hit` and `remote` of them hit."""
    s = {"requests_finished": 10, "prefix_hit_rate": hit / 10000,
         "prefix_cache": {"prompt_tokens": 10000, "hit_tokens": hit},
         "ttft_s": {"mean": ttft_mean, "p50": ttft_mean, "p99": 2 * ttft_mean},
         "cluster": {"load_balance": {"requests": {"max_over_mean": 1.5}}}}
    if remote is not None:
        s["cluster"]["global_cache"] = {"remote_hit_tokens": remote, "fetched_bytes": 2.0 * (1 << 30),
                                        "fetch_s": 0.5}
    return s


def tier_summary(hit, cpu_hit, saved, ttft_mean):
    s = {"prefix_hit_rate": hit, "ttft_s": {"mean": ttft_mean, "p50": ttft_mean, "p99": 3 * ttft_mean}}
    if cpu_hit is not None:
        s["tiers"] = {"cpu": {"hit_rate": cpu_hit}, "disk": {"hit_rate": 0.0}, "transfer_s": 1.0,
                      "prefill_saved_s": saved}
    return s


def write_sweep(root, folder, rows):
    os.makedirs(root / folder, exist_ok=True)
    with open(root / folder / "sweep.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


def make_results(root):
    # (a): local round robin hits 1,000 of 10,000 tokens, with peers 3,000 (2,000 fetched).
    hits = {"a_local_round_robin": (1000, None, 0.4), "a_peers_round_robin": (3000, 2000, 0.3),
            "a_local_prefix_aware": (2500, None, 0.8), "a_peers_prefix_aware": (2600, 100, 0.8),
            "a_pool_prefix_aware": (3500, 1000, 0.7)}
    for folder, _ in GLOBAL_RUNS:
        write_summary(root, folder, cluster_summary(*hits[folder]))
    for i, (folder, _, cpu, disk, overlap) in enumerate(TIER_RUNS):
        tiered = cpu > 0
        write_summary(root, folder, tier_summary(0.4 + 0.01 * i, 0.01 * i if tiered else None,
                                                 (1.0 if overlap or cpu == 64 else -1.0), 0.1))
    common = {"ttft_s.p50": "0.1", "throughput_rps": "5", "throughput_tokens_per_s": "1000",
              "slo.attainment": "0.9", "cluster.load_balance.requests.max_over_mean": "1.1", "preemptions": "3"}
    write_sweep(root, "c_routers", [dict(common, point=f"0{i}", **{"replicas.router": r, "ttft_s.p99": str(i + 1),
                                                                   "slo.goodput_rps": str(4 + i / 10)})
                                    for i, r in enumerate(["round_robin", "least_outstanding", "least_kv",
                                                           "random"])])
    for folder in ("d_colocated", "d_disaggregated"):
        write_sweep(root, folder, [dict(common, point=f"0{i}", **{"workload.trace.time_scale": str(ts),
                                                                  "ttft_s.p99": "0.5", "tpot_s.p50": "0.02",
                                                                  "tpot_s.p99": "0.03", "slo.goodput_rps": "1"})
                                   for i, ts in enumerate([4, 2, 1])])


def test_report_has_every_section_with_numbers_from_the_results(tmp_path):
    results, dest = tmp_path / "results", tmp_path / "dest"
    make_results(results)
    path = make_cluster_report.write_report(str(results), str(dest), "abc1234", "2026-01-02")
    text = open(path).read()
    assert "pagesim commit abc1234, 2026-01-02" in text and "Do not edit by hand" in text
    for heading in ("## (a) Local caches against a global cache", "### Beside the paper",
                    "## (b) CPU and disk tiers", "## (c) Routers", "## (d) Disaggregated"):
        assert heading in text
    # (a): 1,000 / 10,000 = 10.00%; with peers 30.00% of which 20.00% fetched (3.00x); computed
    # tokens per request 900 -> 700; 2 GiB fetched.
    assert "| local, round_robin | 10.00% | 0.00% | 900 |" in text
    assert "| global (peers), round_robin | 30.00% | 20.00% | 700 |" in text
    assert "from 10.00% to 30.00% (3.00x)" in text and "| 2.0 GiB |" in text
    # The paper's Fig. 10 conversation labels beside pagesim's ratios (3.00x hit, 700/900 = 0.78x computed).
    assert "| Mooncake, Fig. 10 (prefill GPU time) | 2.22x | 0.76x |" in text
    assert "| pagesim round_robin, peers (prompt tokens computed) | 3.00x | 0.78x |" in text
    assert "could not be retrieved" not in text
    # (c): the lowest p99 is round robin's 1 s, the highest random's 5 s; the best goodput random's.
    assert "TTFT p99 1.00 s under `round_robin` against 4.00 s under `random`" in text
    # (d): rate = 1 / time_scale.
    assert "| 0.25 | co-located 4 |" in text and "| 1.00 | 2 prefill + 2 decode |" in text
    for stem in ("global_cache", "tiers", "routers", "disaggregation"):
        for ext in ("png", "svg"):
            assert os.path.getsize(dest / "figures" / f"{stem}.{ext}") > 0


def test_a_missing_key_names_the_file_and_the_key(tmp_path):
    results = tmp_path / "results"
    make_results(results)
    s = json.loads((results / "a_peers_round_robin" / "summary.json").read_text())
    del s["ttft_s"]["p99"]
    (results / "a_peers_round_robin" / "summary.json").write_text(json.dumps(s))
    with pytest.raises(ResultsError, match=r"a_peers_round_robin/summary.json: no key 'ttft_s.p99'"):
        make_cluster_report.write_report(str(results), str(tmp_path / "dest"), "abc1234", "2026-01-02")


def test_a_missing_run_folder_is_named(tmp_path):
    results = tmp_path / "results"
    make_results(results)
    os.remove(results / "c_routers" / "sweep.csv")
    with pytest.raises(ResultsError, match=r"c_routers/sweep.csv"):
        make_cluster_report.write_report(str(results), str(tmp_path / "dest"), "abc1234", "2026-01-02")


def test_the_command_line_names_the_script_and_the_missing_file(tmp_path):
    # report_main (pagesim/reports/document.py), shared by the reports.
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([PYTHON_DIR, os.environ.get("PYTHONPATH", "")]))
    command = [sys.executable, "-m", "pagesim.reports.cluster"]
    p = subprocess.run(command + [str(tmp_path / "none"), str(tmp_path / "dest")], capture_output=True, text=True,
                       env=env)
    assert p.returncode == 1 and p.stderr.startswith("pagesim.reports.cluster: error: ") and "none" in p.stderr
    p = subprocess.run(command, capture_output=True, text=True, env=env)
    assert p.returncode == 1 and "RESULTS_DIR DEST_DIR" in p.stderr
