# pagesim.compare and `pagesim compare A B [C...]`: points matched by label, each source's
# values, differences to the first (absolute and %), compare.csv and the figures.
import math

import pandas
import pytest
import yaml

import pagesim
from conftest import SMALL_SWEEP, run_cli


@pytest.fixture(scope="module")
def sweeps(tmp_path_factory):
    """The 2 x 2 grid at 6 and at 3 req/s (sweeps A, B), and one run without sweep (C)."""
    tmp = tmp_path_factory.mktemp("sweeps")
    config = yaml.safe_load(SMALL_SWEEP)
    config["workload"]["duration_s"] = 20
    (tmp / "grid.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    for name, rate in (("fast", 6), ("slow", 3)):
        cli = run_cli("run", tmp / "grid.yaml", "--out", tmp / name, "-q", "--set", f"workload.arrival.rate={rate}")
        assert cli.returncode == 0, cli.stderr
    del config["sweep"]
    (tmp / "one.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    assert run_cli("run", tmp / "one.yaml", "--out", tmp / "one", "-q").returncode == 0
    return tmp


def test_two_sweeps_point_by_point(sweeps):
    c = pagesim.compare(sweeps / "fast", sweeps / "slow", metrics=["throughput_rps", "ttft_s.p99"])
    assert c.names == ["fast", "slow"]
    fast, slow = pagesim.open(sweeps / "fast"), pagesim.open(sweeps / "slow")
    assert c.point_labels == [p.label for p in fast]
    assert list(c.table.columns) == ["fast", "slow", "slow - fast", "slow vs fast %"]
    for a, b in zip(fast, slow):
        for metric, get in (("throughput_rps", lambda s: s["throughput_rps"]), ("ttft_s.p99", lambda s: s["ttft_s"]["p99"])):
            row = c.table.loc[(a.label, metric)]
            assert row["fast"] == get(a.summary) and row["slow"] == get(b.summary)
            assert row["slow - fast"] == pytest.approx(get(b.summary) - get(a.summary))
            assert row["slow vs fast %"] == pytest.approx(100 * (get(b.summary) / get(a.summary) - 1))
    # Half the arrival rate: about half the requests at every point.
    arrived = pagesim.compare(sweeps / "fast", sweeps / "slow", metrics=["requests_arrived"]).table
    assert all(-60 < v < -40 for v in arrived["slow vs fast %"])
    long = c.long
    assert list(long.columns) == ["point", "metric", "unit", "source", "value", "diff", "diff_pct"]
    assert len(long) == 4 * 2 * 2 and set(long[long.source == "fast"]["diff"]) == {0.0}
    assert set(long[long.metric == "ttft_s.p99"]["unit"]) == {"s"}
    text = c.to_text()
    assert "throughput (req/s)" in text and "TTFT p99 (s)" in text


def test_a_run_against_a_sweep_and_three_sources(sweeps):
    c = pagesim.compare(pagesim.open(sweeps / "one"), sweeps / "fast", sweeps / "slow", names=["one", "A", "B"],
                        metrics=["throughput_rps"])
    # The run is the point "" only: the sweep's points have no baseline value there.
    assert c.point_labels[0] == "" and len(c.point_labels) == 5
    assert math.isnan(c.table.loc[(c.point_labels[1], "throughput_rps"), "A - one"])
    assert list(c.table.columns) == ["one", "A", "B", "A - one", "A vs one %", "B - one", "B vs one %"]


def test_errors_name_what_is_wrong(sweeps):
    with pytest.raises(ValueError, match="at least two"):
        pagesim.compare(sweeps / "fast")
    with pytest.raises(ValueError, match=r"ttft_p99.*did you mean ttft_s\.p99"):
        pagesim.compare(sweeps / "fast", sweeps / "slow", metrics=["ttft_p99"])
    with pytest.raises(ValueError, match="one per source"):
        pagesim.compare(sweeps / "fast", sweeps / "slow", names=["a"])
    with pytest.raises(pagesim.ResultsFolderError, match="neither sweep.csv nor summary.json"):
        pagesim.compare(sweeps / "fast", sweeps)


def test_sources_without_a_common_point(sweeps):
    # A run (point "") and a sweep share no label: nothing to compare, not a table of NaN.
    with pytest.raises(ValueError, match=r"no point label in two sources") as e:
        pagesim.compare(sweeps / "one", sweeps / "fast")
    fast = pagesim.open(sweeps / "fast")
    assert f"{sweeps / 'one'}: a run without sweep (point '')" in str(e.value)
    assert f"{sweeps / 'fast'}: {fast[0].label!r}, {fast[1].label!r}, {fast[2].label!r} and 1 more" in str(e.value)
    cli = run_cli("compare", sweeps / "one", sweeps / "fast", "-m", "throughput_rps")
    assert cli.returncode == 1 and cli.stdout == ""
    assert cli.stderr.startswith("pagesim: error: compare: no point label in two sources")
    assert cli.stderr.count("\n") == 1
    # Two of three sources sharing their points is enough (the baseline's diffs are NaN).
    assert len(pagesim.compare(sweeps / "one", sweeps / "fast", sweeps / "slow").point_labels) == 5


def test_cli_prints_and_writes_csv_and_figures(sweeps, tmp_path):
    out = tmp_path / "cmp"
    p = run_cli("compare", sweeps / "fast", sweeps / "slow", "--name", "6 rps", "--name", "3 rps",
                "-m", "throughput_rps,memory_pct.token_states", "--out", out, "--format", "png,pdf")
    assert p.returncode == 0, p.stderr
    assert "3 rps vs 6 rps %" in p.stdout and "token states (% of KV memory)" in p.stdout
    csv = pandas.read_csv(out / "compare.csv", keep_default_na=False)
    assert set(csv["source"]) == {"6 rps", "3 rps"} and set(csv["metric"]) == {"throughput_rps",
                                                                               "memory_pct.token_states"}
    names = sorted(f.name for f in out.iterdir())
    assert names == ["compare.csv", "compare_latency_cdf.pdf", "compare_latency_cdf.png", "compare_metrics.pdf",
                     "compare_metrics.png"]
    assert (out / "compare_metrics.pdf").read_bytes().startswith(b"%PDF")
    # Same results, same files (no dates in the PDF).
    again = tmp_path / "again"
    assert run_cli("compare", sweeps / "fast", sweeps / "slow", "--name", "6 rps", "--name", "3 rps",
                   "-m", "throughput_rps,memory_pct.token_states", "--out", again, "--format", "png,pdf"
                   ).returncode == 0
    for name in names:
        assert (out / name).read_bytes() == (again / name).read_bytes(), name


def test_cli_errors(sweeps):
    one = run_cli("compare", sweeps / "fast")
    assert one.returncode == 2 and "At least 2 required" in one.stderr
    bad = run_cli("compare", sweeps / "fast", sweeps / "slow", "-m", "throughput")
    assert bad.returncode == 1
    assert bad.stderr.startswith("pagesim: error: metric 'throughput': not a number") and "throughput_rps" in bad.stderr
