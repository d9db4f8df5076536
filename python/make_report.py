#!/usr/bin/env python3
"""Generates the vLLM-paper reproduction report from pagesim results.

  make_report.py RESULTS_DIR DEST_DIR

RESULTS_DIR holds one folder per experiment as written by experiments/vllm_paper/run_all.sh
(fig2, fig2_seeds, fig13a, fig13a_seeds, fig15, fig12, ablation_block_size,
ablation_preemption, calibration, calibration_2rps, calibration_4rps). DEST_DIR receives
REPORT.md and figures/ (PNG and SVG). Every number in the report comes from those result
files; the paper's numbers are in pagesim_report/paper.py. Files are written atomically.
"""
import datetime
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pagesim_report import render  # noqa: E402
from pagesim_report.load import Results, ResultsError  # noqa: E402


def git_commit():
    """The short hash of the checked-out commit, or "unknown" outside a git checkout."""
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def write_markdown(dest, lines):
    """Writes DEST/REPORT.md from `lines` atomically (a reader never sees half a report); returns
    its path."""
    path = os.path.join(dest, "REPORT.md")
    with open(path + ".tmp", "w") as out:
        out.write("\n".join(lines))
    os.replace(path + ".tmp", path)
    return path


def report_main(doc, script, write_report):
    """The command line every report generator shares: `SCRIPT RESULTS_DIR DEST_DIR` calls
    write_report(results, dest, commit, date) -> path and prints the path; exits with `doc` on
    wrong arguments and with "SCRIPT: error: ..." on a missing result file or key."""
    if len(sys.argv) != 3:
        sys.exit(doc)
    try:
        path = write_report(sys.argv[1], sys.argv[2], git_commit(), datetime.date.today().isoformat())
    except ResultsError as e:
        sys.exit(f"{script}: error: {e}")
    print(f"report: {path}")


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    results, dest = sys.argv[1], sys.argv[2]
    figs = os.path.join(dest, "figures")
    os.makedirs(figs, exist_ok=True)
    try:
        rep = render.report(Results(results), results, figs, git_commit(), datetime.date.today().isoformat())
    except ResultsError as e:
        sys.exit(f"make_report.py: error: {e}")
    path = write_markdown(dest, rep.lines)
    print(f"report: {path} ({len(rep.misses)} number(s) outside target)")


if __name__ == "__main__":
    main()
