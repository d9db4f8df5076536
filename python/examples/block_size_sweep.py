"""Where KV memory goes as the paged allocator's block size grows: a sweep run through the
pagesim package, read into pandas, drawn with matplotlib. Notebook-ready: each step is a
few lines to paste into a cell.

    python3 python/examples/block_size_sweep.py [--out DIR]   (from any folder)

Writes DIR/block_size_sweep.png (default: a new temporary folder) and prints the table.
"""

import argparse
import tempfile
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt
import pandas as pd

import pagesim

# vLLM on the Fig. 2 workload of the vLLM paper (experiments/vllm_paper/fig2.yaml), 120
# simulated seconds, one point per block size.
# Found beside this script, so the example runs from any folder; the experiment's own lengths
# file resolves against its folder, then pagesim's bundled data (README: Paths).
EXPERIMENT = Path(__file__).resolve().parents[2] / "experiments" / "vllm_paper" / "fig2.yaml"
OVERRIDES = {
    "sweep": {"allocator.block_size": [1, 4, 16, 64, 256]},  # replaces the file's Orca/vLLM cases
    "workload.duration_s": 120,
    "measure.window_start_s": 30,
    "measure.window_end_s": 120,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=None, help="folder for the plot (default: a temporary one)")
    args = parser.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="pagesim-example-"))
    out.mkdir(parents=True, exist_ok=True)

    # 1. Run the sweep (points on local threads; executor="ray" sends them to a Ray cluster).
    result = pagesim.sweep(EXPERIMENT, overrides=OVERRIDES, out=out / "sweep", progress=False)

    # 2. sweep.csv as a DataFrame: one row per point, swept keys then the flattened summary.
    table = pd.DataFrame(result.table)
    classes = [c for c in table.columns if c.startswith("memory_pct.") and table[c].max() > 0]
    print(table[["allocator.block_size", "throughput_rps", *classes]].to_string(index=False))

    # 3. Memory classes stacked per block size, throughput on a second axis.
    fig, ax = plt.subplots(figsize=(7, 4))
    x = range(len(table))
    bottom = pd.Series(0.0, index=table.index)
    for c in classes:
        ax.bar(x, table[c], bottom=bottom, label=c.removeprefix("memory_pct."))
        bottom += table[c]
    ax.set_xticks(list(x), [str(b) for b in table["allocator.block_size"]])
    ax.set_xlabel("block size (tokens)")
    ax.set_ylabel("% of KV capacity (window mean)")
    ax.legend(fontsize=7, loc="lower left")
    rps = ax.twinx()
    rps.plot(list(x), table["throughput_rps"], "k.-")
    rps.set_ylabel("throughput (req/s)")
    fig.tight_layout()
    path = out / "block_size_sweep.png"
    fig.savefig(path, dpi=100)
    print(f"plot: {path}")


if __name__ == "__main__":
    main()
