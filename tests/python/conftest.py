# Puts python/ (the pagesim package's source: pagesim.reports, pagesim.plots) on the import path
# of these tests, as .ci/python does for the experiments' scripts.
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir, "python"))
