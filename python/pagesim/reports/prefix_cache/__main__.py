"""Generates the prefix-cache report from pagesim results.

  python -m pagesim.reports.prefix_cache RESULTS_DIR DEST_DIR

RESULTS_DIR is what experiments/prefix_cache/run_all.sh writes (trace_stats.json, the two
cache_curve_*.csv and the sweep folders mooncake_unbounded, schedulers_conversation,
schedulers_sessions, eviction). DEST_DIR receives REPORT.md and figures/ (PNG and SVG). Every
number in the report comes from those files; the Mooncake paper's numbers are in
pagesim/reports/prefix_cache/paper.py. Files are written atomically.
"""
import os

from pagesim.reports.document import report_main, write_markdown
from pagesim.reports.prefix_cache import render
from pagesim.reports.prefix_cache.results import PrefixResults


def write_report(results, dest, commit, date):
    """Writes DEST/REPORT.md and DEST/figures/ from RESULTS; returns the report's path. Raises
    ResultsError when a result file or key is missing."""
    figs = os.path.join(dest, "figures")
    os.makedirs(figs, exist_ok=True)
    return write_markdown(dest, render.report(PrefixResults(results), results, figs, commit, date).lines)


if __name__ == "__main__":
    report_main(__doc__, "pagesim.reports.prefix_cache", write_report)
