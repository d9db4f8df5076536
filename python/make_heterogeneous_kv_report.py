#!/usr/bin/env python3
"""Generates the heterogeneous-KV report from pagesim results.

  make_heterogeneous_kv_report.py RESULTS_DIR DEST_DIR

RESULTS_DIR is what experiments/heterogeneous_kv/run_all.sh writes (models/*.json from
`pagesim model`, the kv_dtype sweep). DEST_DIR receives REPORT.md (written atomically). The
published numbers it compares with are in heterogeneous_kv_report/paper.py.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_report import report_main, write_markdown  # noqa: E402
from heterogeneous_kv_report import render  # noqa: E402


def write_report(results, dest, commit, date):
    """Writes DEST/REPORT.md from RESULTS; returns its path. Raises ResultsError when a result
    file or key is missing."""
    lines = render.report(results, commit, date)
    os.makedirs(dest, exist_ok=True)
    return write_markdown(dest, lines)


def main():
    report_main(__doc__, "make_heterogeneous_kv_report.py", write_report)


if __name__ == "__main__":
    main()
