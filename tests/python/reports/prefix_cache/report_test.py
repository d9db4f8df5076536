"""The prefix-cache report (python -m pagesim.reports.prefix_cache) on fixtures/results, a miniature
of experiments/prefix_cache/run_all.sh's output made by make_fixture.sh; and its readers on
hand-written files whose values are computed by hand."""
import json
import os
import shutil

import pytest

from pagesim.reports.prefix_cache import __main__ as make_prefix_cache_report
from pagesim.reports.load import ResultsError
from pagesim.reports.prefix_cache import render
from pagesim.reports.prefix_cache.results import PrefixResults, Run

FIXTURE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "results")
FIGURES = ("fig9_cache_curve", "schedulers", "eviction", "hit_rate_over_time")


def summary(point):
    with open(os.path.join(FIXTURE, point, "summary.json")) as fh:
        return json.load(fh)


def test_report_from_the_fixture_has_every_section_and_its_numbers(tmp_path):
    path = make_prefix_cache_report.write_report(FIXTURE, str(tmp_path), "abc1234", "2026-01-02")
    text = open(path).read()
    assert "pagesim commit abc1234, 2026-01-02" in text and "Do not edit by hand" in text
    for heading in ("## (a) Table 2", "## (a) Figure 9", "## (b) Schedulers", "## (c) Eviction policies",
                    "## Hit rate over time", "## Where pagesim differs from the paper"):
        assert heading in text
    # Numbers come from the results: the unbounded run's hit rate, every swept scheduler, the
    # trace statistics, and the fixture's subset named as such.
    unbounded = summary("mooncake_unbounded/00-allocator.block_size=16")
    assert f"{100 * unbounded['prefix_hit_rate']:.2f}%" in text
    assert "| `vllm` |" in text and "| `sarathi` |" in text and "| `static` |" in text
    assert "its first 60 requests" in text
    assert "does **not** match Table 2" in text  # 60 requests are not the paper's 12,031
    for stem in FIGURES:
        for ext in ("png", "svg"):
            assert os.path.getsize(tmp_path / "figures" / f"{stem}.{ext}") > 0
    assert not [p for p in os.listdir(tmp_path / "figures") if p.endswith(".tmp")]


def test_same_results_give_the_same_bytes(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    for dest in (a, b):
        make_prefix_cache_report.write_report(FIXTURE, str(dest), "abc1234", "2026-01-02")
    assert (a / "REPORT.md").read_bytes() == (b / "REPORT.md").read_bytes()
    for stem in FIGURES:
        for ext in ("png", "svg"):
            assert (a / "figures" / f"{stem}.{ext}").read_bytes() == (b / "figures" / f"{stem}.{ext}").read_bytes()


def test_a_missing_experiment_names_its_file(tmp_path):
    root = tmp_path / "results"
    shutil.copytree(FIXTURE, root)
    shutil.rmtree(root / "eviction")
    with pytest.raises(ResultsError, match=r"eviction/sweep\.csv"):
        make_prefix_cache_report.write_report(str(root), str(tmp_path / "out"), "abc1234", "2026-01-02")


def test_run_reads_nested_numbers_and_label_axes():
    run = Run("kv.slots=1048576,allocator.eviction=lru", "eviction/00-x", {"ttft_s": {"p50": 2}, "name": "n"})
    assert run.get("ttft_s.p50") == 2.0
    assert run.axis("kv.slots") == "1048576" and run.axis("allocator.eviction") == "lru"
    with pytest.raises(ResultsError, match=r"eviction/00-x/summary.json: no key 'ttft_s.p99'"):
        run.get("ttft_s.p99")
    with pytest.raises(ResultsError, match=r"key 'name': 'n' is not a number"):
        run.get("name")
    with pytest.raises(ResultsError, match=r"has no axis 'scheduler.kind'"):
        run.axis("scheduler.kind")


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_hit_rate_over_time_sums_tokens_per_span(tmp_path):
    # Spans of 10 s: [0, 10) has 100 + 300 prompt tokens with 50 + 0 hit; [10, 20) none at all
    # (left out); [20, 30) 200 with 150 hit.
    write(tmp_path / "exp/00-a/iterations.csv",
          "index,start_s,prefix_prompt_tokens,prefix_hit_tokens\n"
          "0,0,100,50\n1,9.5,300,0\n2,12,0,0\n3,25,200,150\n")
    res = PrefixResults(str(tmp_path))
    assert res.hit_rate_over_time(Run("a", "exp/00-a", {}), 10.0) == [(0.0, 0.125), (20.0, 0.75)]
    write(tmp_path / "exp/01-b/iterations.csv", "index,start_s\n0,0\n")
    with pytest.raises(ResultsError, match=r"01-b/iterations.csv: expected columns"):
        res.hit_rate_over_time(Run("b", "exp/01-b", {}), 10.0)


def test_mean_request_hit_fraction_weights_requests_alike(tmp_path):
    # 1000 tokens with 900 hit and 100 with none: token-weighted 900/1100, per request (0.9 + 0) / 2.
    write(tmp_path / "exp/00-a/requests.csv", "id,prompt_tokens,cached_tokens\n0,1000,900\n1,100,0\n")
    res = PrefixResults(str(tmp_path))
    assert res.mean_request_hit_fraction(Run("a", "exp/00-a", {})) == pytest.approx(0.45)
    with pytest.raises(ResultsError, match=r"01-b/requests.csv: No such file"):
        res.mean_request_hit_fraction(Run("b", "exp/01-b", {}))


def test_a_capacity_is_the_point_rounded_down_to_whole_blocks():
    points = [(512, 0.1), (2_999_808, 0.3), (50_000_000, 0.4)]
    assert render.at_capacity(points, 3_000_000) == 0.3  # 3M rounds down to 5,859 blocks of 512
    assert render.at_capacity(points, 2_999_807) is None  # not a requested capacity
    assert render.nearest_below(points, 2_999_807) == (512, 0.1)
    with pytest.raises(ResultsError, match="no point at or below 100 tokens"):
        render.nearest_below(points, 100)
    assert render.tokens_text(2_999_808) == "3.00M" and render.tokens_text(51_200) == "51k"


def test_idealised_lru_comes_from_the_stack_when_not_simulated():
    curve = {"stack": [(1024, 0.2), (4096, 0.5)], "direct": {"fifo": [(4096, 0.4)]}}
    assert render.idealised(curve, "lru", 4096) == 0.5
    assert render.idealised(curve, "fifo", 4096) == 0.4
    assert render.idealised(curve, "lfu", 4096) is None
    assert render.idealised(curve, "lru_protect_waiting", 4096) is None
