"""Reading one results folder of experiments/cluster/run_all.sh.

The folder holds one run folder per single run (a_*, b_*: summary.json) and one sweep folder
per sweep (c_routers, d_colocated, d_disaggregated: sweep.csv and one folder per point, named
by the row's `point`). ClusterResults keeps only the folder's path and returns plain values; a
missing file or key raises ResultsError naming the file and the key.
"""
import os

from pagesim.reports.load import ResultsError, number_at, read_csv_rows, read_json

# (a): folder, label. (b): folder, label, GiB of CPU tier, GiB of disk tier, overlapped.
GLOBAL_RUNS = (("a_local_round_robin", "local, round_robin"),
               ("a_peers_round_robin", "global (peers), round_robin"),
               ("a_local_prefix_aware", "local, prefix_aware"),
               ("a_peers_prefix_aware", "global (peers), prefix_aware"),
               ("a_pool_prefix_aware", "global (shared pool 30M), prefix_aware"))
TIER_RUNS = (("b_gpu_only", "GPU only", 0, 0, False),
             ("b_cpu_1", "CPU 1 GiB", 1, 0, False),
             ("b_cpu_4", "CPU 4 GiB", 4, 0, False),
             ("b_cpu_16", "CPU 16 GiB", 16, 0, False),
             ("b_cpu_64", "CPU 64 GiB", 64, 0, False),
             ("b_cpu_16_overlap", "CPU 16 GiB, overlapped", 16, 0, True),
             ("b_disk_16", "CPU 4 + disk 16 GiB", 4, 16, False),
             ("b_disk_64", "CPU 4 + disk 64 GiB", 4, 64, False))


class ClusterResults:
    """One run_all.sh output folder."""

    def __init__(self, root):
        self.root = root

    def summary(self, folder):
        """summary.json of run folder `folder`, parsed."""
        return read_json(os.path.join(self.root, folder, "summary.json"))

    def value(self, folder, dotted):
        return number_at(self.summary(folder), dotted, os.path.join(folder, "summary.json"))

    def sweep(self, folder):
        """The rows of sweep folder `folder`'s sweep.csv (dicts of text), in file order."""
        path = os.path.join(self.root, folder, "sweep.csv")
        rows = read_csv_rows(path)
        if not rows:
            raise ResultsError(f"{path}: no rows")
        return rows

    def sweep_value(self, folder, row, column):
        """Column `column` of a sweep.csv row as a float; ResultsError naming the file, row and
        column otherwise."""
        try:
            return float(row[column])
        except (KeyError, ValueError):
            raise ResultsError(f"{os.path.join(folder, 'sweep.csv')} row {row.get('point', '?')}: "
                               f"no number in column {column!r}") from None
