"""Plot of prefix-cache hit rate against cache capacity, from `pagesim trace cache-curve --out`.

  python -m pagesim.plots.cache_curve CURVE.csv [--out STEM] [--title T] [--mark TOKENS]...

Writes STEM.png and STEM.svg (default: the CSV's path without .csv): the one-pass LRU curve
as a line over log-scaled capacity (tokens), the directly simulated policies as markers, and
a dotted line at the infinite-capacity hit rate (the largest stack point). --mark draws a
vertical line at a capacity (e.g. the Mooncake paper's 3M and 50M tokens). Files are written
to a temporary name and renamed, so a failed run leaves nothing behind; same CSV => same files.
"""
import argparse
import csv
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

matplotlib.rcParams["svg.hashsalt"] = "pagesim"
DETERMINISTIC = {"png": {"Software": None}, "svg": {"Date": None}}
MARKERS = {"lru": "o", "fifo": "s", "lfu": "^"}


def read_curve(path):
    """The CSV's points: {"stack": [(capacity_tokens, hit_rate)], "direct": {policy: [...]}},
    each list sorted by capacity. Raises ValueError naming the file and line of a bad row."""
    stack, direct = [], {}
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        need = {"policy", "method", "capacity_tokens", "hit_rate"}
        if not need <= set(reader.fieldnames or []):
            raise ValueError(f"{path}: expected columns {sorted(need)}, found {reader.fieldnames}")
        for row in reader:
            try:
                point = (int(row["capacity_tokens"]), float(row["hit_rate"]))
            except ValueError:
                raise ValueError(f"{path}:{reader.line_num}: capacity_tokens / hit_rate: expected numbers, "
                                 f"found {row['capacity_tokens']!r} / {row['hit_rate']!r}") from None
            if row["method"] == "stack":
                stack.append(point)
            elif row["method"] == "direct":
                direct.setdefault(row["policy"], []).append(point)
            else:
                raise ValueError(f"{path}:{reader.line_num}: method: expected stack or direct, "
                                 f"found {row['method']!r}")
    return {"stack": sorted(stack), "direct": {p: sorted(v) for p, v in direct.items()}}


def plot_cache_curve(curve, stem, title=None, marks=()):
    """Draws `curve` (read_curve's result) and writes stem.png and stem.svg. Returns the paths."""
    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    stack = [p for p in curve["stack"] if p[0] > 0]  # log-x: capacity 0 has no place
    if stack:
        ax.plot([c for c, _ in stack], [100 * r for _, r in stack], color="C0", label="LRU (one pass)")
        best = max(r for _, r in curve["stack"])
        ax.axhline(100 * best, color="grey", linestyle=":", linewidth=1,
                   label=f"infinite capacity ({100 * best:.1f}%)")
    for i, (policy, points) in enumerate(sorted(curve["direct"].items())):
        points = [p for p in points if p[0] > 0]
        ax.plot([c for c, _ in points], [100 * r for _, r in points], linestyle="none",
                marker=MARKERS.get(policy, "x"), color=f"C{i + 1}", label=f"{policy} (simulated)")
    for m in marks:
        ax.axvline(m, color="black", linestyle="--", linewidth=0.8)
    ax.set_xscale("log")
    ax.set_xlabel("cache capacity (tokens)")
    ax.set_ylabel("prefix-cache hit rate (% of prompt tokens)")
    ax.set_ylim(bottom=0)
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(loc="upper left", fontsize=8)
    if title:
        ax.set_title(title)
    paths = []
    for ext in ("png", "svg"):
        path = f"{stem}.{ext}"
        tmp = path + ".tmp"
        fig.savefig(tmp, format=ext, dpi=150, bbox_inches="tight", metadata=DETERMINISTIC[ext])
        os.replace(tmp, path)
        paths.append(path)
    plt.close(fig)
    return paths


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv", help="CSV written by pagesim trace cache-curve --out")
    ap.add_argument("--out", help="output path without extension (default: the CSV's, without .csv)")
    ap.add_argument("--title")
    ap.add_argument("--mark", type=float, action="append", default=[], help="capacity (tokens) to mark")
    args = ap.parse_args(argv)
    stem = args.out or (args.csv[:-4] if args.csv.endswith(".csv") else args.csv)
    try:
        curve = read_curve(args.csv)
    except (OSError, ValueError) as e:
        print(f"pagesim.plots.cache_curve: error: {e}", file=sys.stderr)
        return 1
    for p in plot_cache_curve(curve, stem, args.title, args.mark):
        print(f"wrote {p}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
