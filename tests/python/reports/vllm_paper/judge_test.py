"""The report's verdicts on hand-made numbers: edges of every tolerance and range, missing
inputs, and the sustainable-rate interpolation."""
import math

import pytest

from pagesim.reports.vllm_paper import judge


def test_fold_fig2_adds_rounding_and_free_into_the_last_class():
    pct = {"token_states": 40.0, "reserved": 20.0, "over_reserved": 10.0, "rounding": 5.5, "free": 24.5}
    assert judge.fold_fig2(pct) == (40.0, 20.0, 10.0, 30.0)


def test_fold_fig2_names_a_missing_class():
    with pytest.raises(KeyError, match="rounding"):
        judge.fold_fig2({"token_states": 1.0, "reserved": 0.0, "over_reserved": 0.0, "free": 99.0})


def test_spread_of_values():
    s = judge.spread([3.0, 1.0, 2.0, 6.0])
    assert (s.mean, s.low, s.high, s.half_range) == (3.0, 1.0, 6.0, 2.5)


def test_spread_of_no_values_is_an_error():
    with pytest.raises(ValueError, match="no seed results"):
        judge.spread([])


def test_within_pp_counts_exactly_the_tolerance_as_within():
    assert judge.within_pp(42.0, 40.0, 2.0)
    assert judge.within_pp(38.0, 40.0, 2.0)
    assert not judge.within_pp(42.25, 40.0, 2.0)
    assert not judge.within_pp(37.75, 40.0, 2.0)


def test_relative_tolerance_counts_exactly_the_tolerance_as_within():
    assert judge.relative_diff(5.0, 4.0) == 0.25
    assert judge.within_relative(5.0, 4.0, 0.25)
    assert judge.within_relative(3.0, 4.0, 0.25)
    assert not judge.within_relative(5.0625, 4.0, 0.25)
    assert not judge.within_relative(2.9375, 4.0, 0.25)


def test_default_relative_tolerance_is_fig13a_target():
    assert judge.within_relative(10.5, 10.0)
    assert not judge.within_relative(11.5, 10.0)


def test_in_range_includes_both_ends():
    assert judge.in_range(1.5, 1.5, 2.5)
    assert judge.in_range(2.5, 1.5, 2.5)
    assert not judge.in_range(1.4999, 1.5, 2.5)
    assert not judge.in_range(2.5001, 1.5, 2.5)
    assert not judge.in_range(math.inf, 1.5, 2.5)


EXPECTED = {"a": (40.0, 20.0, 10.0, 30.0), "b": (90.0, None, None, None)}


def test_judge_fig2_judges_seed_0_and_the_seed_mean_apart():
    seed0 = {"a": (42.5, 20.0, 10.0, 27.5), "b": (91.0, 1.0, 0.0, 8.0)}
    seeds = {"a": [(42.5, 20, 10, 27.5), (39.5, 20, 10, 30.5), (40.0, 21, 10, 29.0)],
             "b": [(91.0, 1.0, 0.0, 8.0), (95.0, 0.0, 0.0, 5.0)]}
    cells = judge.judge_fig2(seed0, seeds, EXPECTED, tol_pp=2.0)
    assert [(c.system, c.cls) for c in cells] == [("a", i) for i in range(4)] + [("b", i) for i in range(4)]
    tok = cells[0]
    assert tok.expected == 40.0 and tok.seed0 == 42.5 and tok.diff == 2.5
    assert tok.seeds.low == 39.5 and tok.seeds.high == 42.5
    assert tok.mean_diff == pytest.approx(2.0 / 3.0)
    assert (tok.seed0_ok, tok.mean_ok) == (False, True)
    ext = cells[3]  # 27.5 vs 30: 2.5 pp off on seed 0; mean 29.0 within
    assert (ext.seed0_ok, ext.mean_ok) == (False, True)
    assert all(c.seed0_ok and c.mean_ok for c in cells[1:3])


def test_judge_fig2_leaves_classes_the_paper_does_not_give_unjudged():
    seed0 = {"a": EXPECTED["a"], "b": (80.0, 5.0, 5.0, 10.0)}
    seeds = {"a": [EXPECTED["a"]], "b": [(80.0, 5.0, 5.0, 10.0)]}
    b = [c for c in judge.judge_fig2(seed0, seeds, EXPECTED, 2.0) if c.system == "b"]
    assert (b[0].seed0_ok, b[0].mean_ok) == (False, False)  # 80 vs 90
    assert all(c.expected is None and c.seed0_ok is None and c.mean_ok is None for c in b[1:])
    assert b[1].seed0 == 5.0


def test_judge_fig2_names_a_system_without_seed_results():
    seed0 = {"a": EXPECTED["a"], "b": EXPECTED["a"]}
    with pytest.raises(ValueError, match="no seed results for b"):
        judge.judge_fig2(seed0, {"a": [EXPECTED["a"]], "b": []}, EXPECTED)
    with pytest.raises(ValueError, match="no seed results for b"):
        judge.judge_fig2(seed0, {"a": [EXPECTED["a"]]}, EXPECTED)


def test_judge_fig2_names_a_system_without_seed_0():
    with pytest.raises(ValueError, match="no seed-0 result for b"):
        judge.judge_fig2({"a": EXPECTED["a"]}, {"a": [EXPECTED["a"]], "b": [EXPECTED["a"]]}, EXPECTED)


def test_judge_fig2_defaults_to_the_paper():
    row = (20.4, 13.3, 57.3, 8.9)
    systems = ["orca-max", "orca-pow2", "orca-oracle", "vllm"]
    cells = judge.judge_fig2({s: row for s in systems}, {s: [row] for s in systems})
    assert len(cells) == 16
    assert all(c.seed0_ok for c in cells if c.system == "orca-max")


def test_sustainable_rate_interpolates_the_first_crossing():
    points = [(2.0, 0.4), (1.0, 0.1), (3.0, 0.6), (4.0, 0.3), (5.0, 2.0)]  # unsorted; dips again at 4
    rate, censored = judge.sustainable_rate(points, 0.5)
    assert rate == pytest.approx(2.5) and not censored


def test_sustainable_rate_at_exactly_the_threshold_keeps_that_point():
    assert judge.sustainable_rate([(1.0, 0.25), (2.0, 0.5), (3.0, 0.75)], 0.5) == (2.0, False)


def test_sustainable_rate_never_crossed_is_censored_at_the_highest_rate():
    assert judge.sustainable_rate([(1.0, 0.1), (2.0, 0.2)], 0.5) == (2.0, True)


def test_sustainable_rate_above_threshold_from_the_start_is_zero():
    assert judge.sustainable_rate([(1.0, 0.6), (2.0, 0.9)], 0.5) == (0.0, False)


def test_sustainable_rate_of_one_point():
    assert judge.sustainable_rate([(3.0, 0.5)], 0.5) == (3.0, True)


def test_rate_ratio_is_infinite_when_the_baseline_sustains_nothing():
    assert judge.rate_ratio(2.0, 0.8) == 2.5
    assert judge.rate_ratio(2.0, 0.0) == math.inf


def test_first_match_returns_the_first_equal_key():
    assert judge.first_match(3, [("x", 1), ("y", 3), ("z", 3)]) == "y"
    assert judge.first_match(4, [("x", 1)]) is None
    assert judge.first_match(4, []) is None


def test_batches_within_capacity_keeps_the_batch_order_and_both_ends():
    capacity = {"slow": 1.5, "low-edge": 1.7, "mid": 1.85, "high-edge": 2.0, "fast": 3.0}
    batch = [("fast", 5.0), ("high-edge", 12.0), ("mid", 20.0), ("slow", 60.0), ("low-edge", 30.0)]
    assert judge.batches_within_capacity(capacity, batch, 1.7, 2.0) == [(2.0, 12.0), (1.85, 20.0), (1.7, 30.0)]
    assert judge.batches_within_capacity(capacity, [("fast", 5.0)], 1.7, 2.0) == []


def test_batches_within_capacity_names_a_label_without_capacity():
    with pytest.raises(KeyError, match="unknown"):
        judge.batches_within_capacity({}, [("unknown", 1.0)], 1.7, 2.0)


def test_beam_fits_and_per_width():
    savings = {"neutral": {2: 50.0, 4: 75.0, 6: 83.0},
               "scores-1": {2: 44.3, 4: 60.0, 6: 66.3},  # exactly on both ends: fits
               "scores-4": {2: 44.2, 4: 50.0, 6: 60.0}}
    fits, per_width = judge.beam_fits(savings, 44.3, 66.3)
    assert fits == ["scores-1"]
    assert per_width == {2: ["neutral", "scores-1"], 4: ["scores-1", "scores-4"], 6: ["scores-1", "scores-4"]}


def test_beam_fits_a_column_missing_a_width_does_not_fit():
    fits, per_width = judge.beam_fits({"a": {2: 50.0}, "b": {2: 50.0, 4: 50.0}}, 44.3, 66.3)
    assert fits == ["b"]
    assert per_width == {2: ["a", "b"], 4: ["b"]}


def test_beam_fits_none():
    fits, per_width = judge.beam_fits({"neutral": {2: 10.0}}, 44.3, 66.3)
    assert fits == [] and per_width == {2: []}
