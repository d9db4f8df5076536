#!/usr/bin/env python3
"""Generates the prefix-cache report from pagesim results.

  make_prefix_cache_report.py RESULTS_DIR DEST_DIR

RESULTS_DIR is what experiments/prefix_cache/run_all.sh writes (trace_stats.json, the two
cache_curve_*.csv and the sweep folders mooncake_unbounded, schedulers_conversation,
schedulers_sessions, eviction). DEST_DIR receives REPORT.md and figures/ (PNG and SVG). Every
number in the report comes from those files; the Mooncake paper's numbers are in
prefix_cache_report/paper.py. Files are written atomically.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_report import report_main, write_markdown  # noqa: E402
from prefix_cache_report import render  # noqa: E402
from prefix_cache_report.results import PrefixResults  # noqa: E402


def write_report(results, dest, commit, date):
    """Writes DEST/REPORT.md and DEST/figures/ from RESULTS; returns the report's path. Raises
    ResultsError when a result file or key is missing."""
    figs = os.path.join(dest, "figures")
    os.makedirs(figs, exist_ok=True)
    return write_markdown(dest, render.report(PrefixResults(results), results, figs, commit, date).lines)


if __name__ == "__main__":
    report_main(__doc__, "make_prefix_cache_report.py", write_report)
