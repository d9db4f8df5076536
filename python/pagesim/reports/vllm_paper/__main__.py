"""Generates the vLLM-paper reproduction report from pagesim results.

  python -m pagesim.reports.vllm_paper RESULTS_DIR DEST_DIR

RESULTS_DIR holds one folder per experiment as written by experiments/vllm_paper/run_all.sh
(fig2, fig2_seeds, fig13a, fig13a_seeds, fig15, fig12, ablation_block_size,
ablation_preemption, calibration, calibration_2rps, calibration_4rps). DEST_DIR receives
REPORT.md and figures/ (PNG and SVG). Every number in the report comes from those result
files; the paper's numbers are in pagesim/reports/vllm_paper/paper.py. Files are written
atomically.
"""
import datetime
import os
import sys

from pagesim.reports.document import git_commit, write_markdown
from pagesim.reports.load import Results, ResultsError
from pagesim.reports.vllm_paper import render


def main(argv=None):
    argv = sys.argv if argv is None else argv
    if len(argv) != 3:
        sys.exit(__doc__)
    results, dest = argv[1], argv[2]
    figs = os.path.join(dest, "figures")
    os.makedirs(figs, exist_ok=True)
    try:
        rep = render.report(Results(results), results, figs, git_commit(), datetime.date.today().isoformat())
    except ResultsError as e:
        sys.exit(f"pagesim.reports.vllm_paper: error: {e}")
    path = write_markdown(dest, rep.lines)
    print(f"report: {path} ({len(rep.misses)} number(s) outside target)")


if __name__ == "__main__":
    main()
