"""Generates the heterogeneous-KV report from pagesim results.

  python -m pagesim.reports.heterogeneous_kv RESULTS_DIR DEST_DIR

RESULTS_DIR is what experiments/heterogeneous_kv/run_all.sh writes (models/*.json from
`pagesim model`, the kv_dtype sweep). DEST_DIR receives REPORT.md (written atomically). The
published numbers it compares with are in pagesim/reports/heterogeneous_kv/paper.py.
"""
import os

from pagesim.reports.document import report_main, write_markdown
from pagesim.reports.heterogeneous_kv import render


def write_report(results, dest, commit, date):
    """Writes DEST/REPORT.md from RESULTS; returns its path. Raises ResultsError when a result
    file or key is missing."""
    lines = render.report(results, commit, date)
    os.makedirs(dest, exist_ok=True)
    return write_markdown(dest, lines)


def main():
    report_main(__doc__, "pagesim.reports.heterogeneous_kv", write_report)


if __name__ == "__main__":
    main()
