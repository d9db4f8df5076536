"""The paper's numbers: shape, and the Fig. 2 bars as pagesim.plots.memory draws them."""
import pytest

from pagesim.reports.vllm_paper import paper


def test_fig2_rows_have_one_number_per_class():
    for system, numbers in paper.FIG2.items():
        assert len(numbers) == len(paper.FIG2_CLASSES), system


def test_fully_labelled_fig2_bars_sum_to_the_whole_memory():
    for system, numbers in paper.FIG2.items():
        if None not in numbers:  # four numbers rounded to 0.1 each: off by at most 0.2
            assert sum(numbers) == pytest.approx(100.0, abs=0.2), system


def test_fig2_bar_of_a_labelled_system_is_its_numbers():
    assert paper.fig2_bar("orca-pow2") == (26.8, 17.9, 13.6, 41.6)


def test_fig2_bar_of_vllm_gives_the_unlabelled_rest_to_the_last_class():
    # The paper labels only vLLM's token states (96.3); the bar's rest is 3.7, drawn exactly.
    assert paper.fig2_bar("vllm") == (96.3, 0.0, 0.0, 3.7)


def test_fig13a_covers_the_fig2_systems():
    assert set(paper.FIG13A) == set(paper.FIG2)


def test_ranges_are_ordered():
    for low, high in [*paper.FIG15.values(), *paper.FIG12_RATIOS.values(), paper.VLLM_CAPACITY_RPS]:
        assert low < high
