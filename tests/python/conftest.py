# Puts python/ (the report package and plot_memory.py) on the import path of these tests, as
# python/make_report.py does for itself.
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir, "python"))
