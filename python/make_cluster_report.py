#!/usr/bin/env python3
"""Generates the cluster report from pagesim results.

  make_cluster_report.py RESULTS_DIR DEST_DIR

RESULTS_DIR is what experiments/cluster/run_all.sh writes (run folders a_*, b_* and sweep
folders c_routers, d_colocated, d_disaggregated). DEST_DIR receives REPORT.md and figures/ (PNG
and SVG). Every number in the report comes from those files; what the Mooncake paper says is in
cluster_report/paper.py. REPORT.md is written atomically.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_report import report_main, write_markdown  # noqa: E402
from cluster_report import render  # noqa: E402
from cluster_report.results import ClusterResults  # noqa: E402


def write_report(results, dest, commit, date):
    """Writes DEST/REPORT.md and DEST/figures/ from RESULTS; returns the report's path. Raises
    ResultsError when a result file or key is missing."""
    figs = os.path.join(dest, "figures")
    os.makedirs(figs, exist_ok=True)
    return write_markdown(dest, render.report(ClusterResults(results), figs, commit, date).lines)


if __name__ == "__main__":
    report_main(__doc__, "make_cluster_report.py", write_report)
