"""`python -m pagesim.reports.modern_kv OUT_DIR REPORT_DIR` (see the package's docstring)."""
import sys

from pagesim.reports.modern_kv import main

sys.exit(main(sys.argv))
