"""A benchmark someone ran, replayed and compared, as the README shows it: `pagesim trace import`
of a vLLM `vllm bench serve --save-detailed` result and of inference-perf's per-request report
(the small fixtures of tests/traces/data), `pagesim run` of the trace it writes, and
`pagesim trace compare` of the measured latencies with the run's requests.csv. Also
request_latencies' statistics against NumPy's, and its refusals."""

import csv
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from pagesim_binary import REPO, pagesim_binary, run_pagesim  # noqa: E402

from pagesim.reports.sim_to_real import request_latencies  # noqa: E402

DATA = Path(REPO) / "tests" / "traces" / "data"
VLLM = DATA / "vllm_bench_concurrency.json"
INFERENCE_PERF = DATA / "inference_perf_requests_small.json"


def experiment(tmp: Path, trace: Path, fmt: str = "native") -> Path:
    """A small replay of `trace` (absolute path): Llama-2-7B on an A100-80GB, vLLM's scheduler."""
    path = tmp / f"replay-{trace.stem}-{fmt}.yaml"
    path.write_text(f"""name: replay
workload:
  kind: trace
  trace: {{path: {trace}, format: {fmt}}}
model: llama-2-7b
gpu: a100-80gb
allocator: {{kind: paged, block_size: 16}}
scheduler: {{kind: vllm}}
cost: {{kind: roofline}}
""")
    return path


def rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


def test_import_run_compare_a_vllm_benchmark(tmp_path):
    imported = tmp_path / "imported"
    p = run_pagesim("trace", "import", str(VLLM), "--out", str(imported))
    assert "imported vllm bench serve" in p.stdout
    assert "4 of 6 requests (1 failed, 1 without output tokens excluded)" in p.stdout
    assert "at most 2 in flight" in p.stdout
    trace = rows(imported / "trace.csv")
    measured = rows(imported / "measured_requests.csv")
    assert [r["prompt_tokens"] for r in trace] == ["100", "200", "300", "80"]
    assert [r["output_tokens"] for r in trace] == ["4", "3", "2", "5"]
    assert [r["source_index"] for r in measured] == ["0", "1", "3", "5"]
    assert float(measured[2]["arrival_s"]) == pytest.approx(0.08)
    assert float(measured[0]["e2e_s"]) == pytest.approx(0.08)
    assert float(measured[0]["tpot_s"]) == pytest.approx(0.01)

    out = tmp_path / "out"
    run_pagesim("run", str(experiment(tmp_path, imported / "trace.csv")), "--out", str(out), "-q")
    simulated = sorted(rows(out / "requests.csv"), key=lambda r: int(r["id"]))  # written as they finish
    assert [r["prompt_tokens"] for r in simulated] == ["100", "200", "300", "80"]
    assert [float(r["arrival_s"]) for r in simulated] == [float(r["arrival_s"]) for r in measured]

    # The result file itself replays as a trace (workload.trace.format: vllm-bench), the same requests.
    direct = tmp_path / "direct"
    run_pagesim("run", str(experiment(tmp_path, VLLM, "vllm-bench")), "--out", str(direct), "-q")
    assert (direct / "requests.csv").read_text() == (out / "requests.csv").read_text()

    p = run_pagesim("trace", "compare", str(imported / "measured_requests.csv"), str(out),
                    "--json", str(tmp_path / "cmp.json"))
    assert "| TTFT | mean |" in p.stdout and "| E2E | p99 |" in p.stdout
    result = json.loads((tmp_path / "cmp.json").read_text())
    assert result["requests"] == {"measured": 4, "simulated": 4}
    e2e = result["metrics"]["e2e_s"]
    assert e2e["measured"]["mean"] == pytest.approx((0.08 + 0.14 + 0.23 + 0.10) / 4)
    sim_e2e = [float(r["e2e_s"]) for r in simulated]
    assert e2e["simulated"]["mean"] == pytest.approx(sum(sim_e2e) / 4)
    assert e2e["difference_pct"]["mean"] == pytest.approx(
        (e2e["simulated"]["mean"] - e2e["measured"]["mean"]) / e2e["measured"]["mean"] * 100)
    assert result["metrics"]["tpot_s"]["requests"] == {"measured": 4, "simulated": 4}
    assert f"| E2E | mean | {e2e['measured']['mean'] * 1e3:.2f} | {e2e['simulated']['mean'] * 1e3:.2f} |" in p.stdout


def test_the_printed_replay_config_runs_without_a_warning(tmp_path):
    # Issue 41 item 12: the keys import prints say the prefix cache is off, and why; pasted into
    # an experiment they replay the trace without the warning a run with the cache on gives
    # (no request carries hash ids).
    imported = tmp_path / "imported"
    p = run_pagesim("trace", "import", str(VLLM), "--out", str(imported))
    printed = p.stdout.split("replay it with these keys of an experiment:\n", 1)[1].split("\nwrote ", 1)[0]
    assert "allocator: {prefix_cache: false}  # no token contents (hash_ids)" in printed
    path = tmp_path / "pasted.yaml"
    path.write_text("name: pasted\nscheduler: {kind: vllm-v1}\n"
                    + "\n".join(line.strip() for line in printed.splitlines()) + "\n")
    run = run_pagesim("run", str(path), "--out", str(tmp_path / "out"), "-q")
    assert "warning" not in run.stderr, run.stderr
    path.write_text(path.read_text().replace("prefix_cache: false", "prefix_cache: true"))
    run = run_pagesim("run", str(path), "--out", str(tmp_path / "on"), "-q")
    assert "allocator.prefix_cache: no request of the workload carried token identities" in run.stderr


def test_import_run_compare_an_inference_perf_run(tmp_path):
    imported = tmp_path / "imported"
    p = run_pagesim("trace", "import", str(INFERENCE_PERF), "--out", str(imported))
    assert "imported inference-perf" in p.stdout and "3 of 5 requests" in p.stdout
    measured = rows(imported / "measured_requests.csv")
    assert [r["output_tokens"] for r in measured] == ["3", "4", "2"]  # max_tokens under ignore_eos: 4
    assert measured[2]["ttft_s"] == "" and measured[2]["tpot_s"] == ""  # not streamed
    out = tmp_path / "out"
    run_pagesim("run", str(experiment(tmp_path, imported / "trace.csv")), "--out", str(out), "-q")
    result = request_latencies.compare(imported / "measured_requests.csv", out)
    # The request that was not streamed has no measured TTFT; the simulated side has all three.
    assert result["metrics"]["ttft_s"]["requests"] == {"measured": 2, "simulated": 3}
    assert result["metrics"]["e2e_s"]["requests"] == {"measured": 3, "simulated": 3}


def test_a_malformed_result_names_the_field_and_request_and_writes_nothing(tmp_path):
    doc = json.loads(VLLM.read_text())
    doc["output_lens"][3] = "two"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    p = subprocess.run([pagesim_binary(), "trace", "import", str(bad), "--out", str(tmp_path / "x")],
                       capture_output=True, text=True)
    assert p.returncode == 1
    assert (f"pagesim: error: {bad}: output_lens[3]: expected a non-negative integer number of tokens, "
            "found '\"two\"'") in p.stderr
    assert not (tmp_path / "x").exists()
    # A run that names it fails the same way.
    p = subprocess.run([pagesim_binary(), "run", str(experiment(tmp_path, bad, "vllm-bench")), "--out",
                        str(tmp_path / "o"), "-q"], capture_output=True, text=True)
    assert p.returncode != 0 and "output_lens[3]" in p.stderr


def test_statistics_are_numpys_linear_percentiles():
    np = pytest.importorskip("numpy")
    values = [0.3, 0.1, 0.7, 0.2, 0.9, 0.05, 0.4]
    s = request_latencies.summarize(values)
    assert s["mean"] == pytest.approx(np.mean(values))
    for q in (50, 90, 99):
        assert s[f"p{q}"] == pytest.approx(np.percentile(values, q))
    assert request_latencies.summarize([]) is None
    assert request_latencies.summarize([2.0]) == {"mean": 2.0, "p50": 2.0, "p90": 2.0, "p99": 2.0}


def test_compare_refuses_what_it_cannot_read(tmp_path):
    good = tmp_path / "m.csv"
    good.write_text("id,source_index,arrival_s,prompt_tokens,output_tokens,ttft_s,tpot_s,e2e_s\n0,0,0,5,3,0.1,0.01,0.12\n")
    bad = tmp_path / "bad.csv"
    bad.write_text("id,output_tokens,ttft_s,tpot_s,e2e_s\n0,3,0.1,0.01,0.12\n1,3,fast,0.01,0.2\n")
    with pytest.raises(request_latencies.RequestsError, match=r"bad.csv:3: column 'ttft_s': expected a number >= 0"):
        request_latencies.compare(good, bad)
    missing = tmp_path / "missing.csv"
    missing.write_text("id,ttft_s\n0,0.1\n")
    with pytest.raises(request_latencies.RequestsError, match=r"missing.csv:1: header: .*missing output_tokens"):
        request_latencies.compare(good, missing)
    sweep = tmp_path / "sweep"
    sweep.mkdir()
    (sweep / "sweep.csv").write_text("x\n")
    with pytest.raises(request_latencies.RequestsError, match="a sweep's folder"):
        request_latencies.compare(good, sweep)
    assert request_latencies.main([str(good), str(tmp_path / "nowhere.csv")]) == 1
    assert math.isclose(request_latencies.compare(good, good)["metrics"]["e2e_s"]["difference_pct"]["mean"], 0.0)
