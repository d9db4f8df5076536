"""Figures of results folders that the reports and `pagesim plot` share: memory.py (the memory
classes: Fig. 2's bars, the classes over time) and cache_curve.py (prefix-cache hit rate against
capacity, from `pagesim trace cache-curve`). Each is also a command:
`python -m pagesim.plots.memory OUT_DIR`, `python -m pagesim.plots.cache_curve CURVE.csv`."""
