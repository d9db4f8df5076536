"""The report's Markdown building blocks: tables and the closing list of misses with reasons."""
from pagesim.reports.vllm_paper import render
from pagesim.reports.load import Protocol


def test_table_is_markdown_with_a_blank_line_after():
    rep = render.Report()
    rep.table(["a", "b"], [[1, "x"], [2.5, ""]])
    assert rep.lines == ["| a | b |", "|---|---|", "| 1 | x |", "| 2.5 |  |", ""]


def test_no_miss_says_every_number_is_within_target():
    assert render.Report().differences() == [
        "## Where pagesim differs from the paper", "", "Every number is within its target.", "", ""]


def test_a_computed_reason_wins_over_the_fixed_explanation():
    rep = render.Report(render.EXPLANATIONS)
    rep.miss("Fig. 15 beam-4: 75.0% outside 44.3–66.3%", "computed")
    rep.miss("Fig. 15 beam-6: 83.0% outside 44.3–66.3%")
    rep.miss("Fig. 13a Orca (Max): 8.00 vs 7.0 (+14.3%)")
    lines = rep.differences()
    assert lines[2] == "- **Fig. 15 beam-4: 75.0% outside 44.3–66.3%.** computed"
    assert lines[3] == ("- **Fig. 15 beam-6: 83.0% outside 44.3–66.3%.** "
                        + render.EXPLANATIONS["Fig. 15 beam"])
    assert lines[4] == "- **Fig. 13a Orca (Max): 8.00 vs 7.0 (+14.3%).** No modelling reason recorded."
    assert lines[-1] == ""


def test_window_and_spread_text():
    assert render.window_text(Protocol(900.0, 300.0, 900.0, "artifact")) == (
        "900 s of arrivals, averages over scheduler iterations in t = 300–900 s")
    from pagesim.reports.vllm_paper.judge import spread
    assert render.spread_text(spread([1.0, 2.0, 4.5])) == "2.5 (1.0–4.5)"
    assert render.spread_text(spread([7.0]), 2) == "7.00 (7.00–7.00)"


def test_beam_column_label_is_the_case_label_form():
    assert render.label(("neutral", None)) == "neutral"
    assert render.label(("scores", 0.25)) == "scores-0.25"
    assert render.label(("scores", 1.0)) == "scores-1"
