"""Generates the cluster report from pagesim results.

  python -m pagesim.reports.cluster RESULTS_DIR DEST_DIR

RESULTS_DIR is what experiments/cluster/run_all.sh writes (run folders a_*, b_* and sweep
folders c_routers, d_colocated, d_disaggregated). DEST_DIR receives REPORT.md and figures/ (PNG
and SVG). Every number in the report comes from those files; what the Mooncake paper says is in
pagesim/reports/cluster/paper.py. REPORT.md is written atomically.
"""
import os

from pagesim.reports.cluster import render
from pagesim.reports.cluster.results import ClusterResults
from pagesim.reports.document import report_main, write_markdown


def write_report(results, dest, commit, date):
    """Writes DEST/REPORT.md and DEST/figures/ from RESULTS; returns the report's path. Raises
    ResultsError when a result file or key is missing."""
    figs = os.path.join(dest, "figures")
    os.makedirs(figs, exist_ok=True)
    return write_markdown(dest, render.report(ClusterResults(results), figs, commit, date).lines)


if __name__ == "__main__":
    report_main(__doc__, "pagesim.reports.cluster", write_report)
