"""What every report renders and how it is run: a Report (Markdown lines and the numbers
outside their target, with reasons), figures saved deterministically (same results, same
bytes), REPORT.md written atomically, and the `python -m pagesim.reports.NAME RESULTS DEST`
command line."""
import datetime
import os
import subprocess
import sys

from pagesim.plots.memory import DETERMINISTIC
from pagesim.reports.load import ResultsError


class Report:
    """The Markdown lines of a report, and the numbers outside target with their reasons.
    `explanations` maps the start of a miss's text to its standing explanation, for misses
    recorded without a reason computed from the results."""

    def __init__(self, explanations=None):
        self.lines = []
        self.misses = []
        self.reasons = {}  # miss -> explanation computed from results
        self.explanations = explanations or {}

    def add(self, *lines):
        self.lines.extend(lines)

    def table(self, header, rows):
        self.add("| " + " | ".join(header) + " |", "|" + "---|" * len(header))
        for r in rows:
            self.add("| " + " | ".join(str(x) for x in r) + " |")
        self.add("")

    def miss(self, text, reason=None):
        self.misses.append(text)
        if reason is not None:
            self.reasons[text] = reason

    def differences(self):
        """The closing section's lines: each miss with its reason."""
        lines = ["## Where pagesim differs from the paper", ""]
        if not self.misses:
            lines += ["Every number is within its target.", ""]
        for m in self.misses:
            reason = self.reasons.get(m) or next((v for k, v in self.explanations.items() if m.startswith(k)),
                                                 "No modelling reason recorded.")
            lines.append(f"- **{m}.** {reason}")
        lines.append("")
        return lines


def save(fig, dest, stem):
    """Writes `fig` as DEST/STEM.png and .svg (atomically, without timestamps) and closes it."""
    import matplotlib.pyplot as plt

    os.makedirs(dest, exist_ok=True)
    for ext in ("png", "svg"):
        path = os.path.join(dest, f"{stem}.{ext}")
        fig.savefig(path + ".tmp", format=ext, dpi=140, bbox_inches="tight", metadata=DETERMINISTIC[ext])
        os.replace(path + ".tmp", path)
    plt.close(fig)


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


def report_main(doc, module, write_report, argv=None):
    """The command line every report shares: `python -m MODULE RESULTS_DIR DEST_DIR` calls
    write_report(results, dest, commit, date) -> path and prints the path; exits with `doc` on
    wrong arguments and with "MODULE: error: ..." on a missing result file or key."""
    argv = sys.argv if argv is None else argv
    if len(argv) != 3:
        sys.exit(doc)
    try:
        path = write_report(argv[1], argv[2], git_commit(), datetime.date.today().isoformat())
    except ResultsError as e:
        sys.exit(f"{module}: error: {e}")
    print(f"report: {path}")
