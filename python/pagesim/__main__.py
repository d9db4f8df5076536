"""python -m pagesim sweep EXP.yaml [--out DIR] [--set key.path=value]... [--executor threads|ray]
                          [--address ADDRESS] [-j N] [--overwrite | --resume] [--quiet]
python -m pagesim compare A B [C...] [--name N]... [--metric a,b] [--out DIR] [--format png,pdf]

pagesim.sweep() and pagesim.compare() from the command line; `pagesim run EXP.yaml --ray
[ADDRESS]` execs the first with --executor ray (sim/cli/ray_handoff.h), `pagesim compare`
the second (sim/cli/main.cpp). Errors print one line, "pagesim: error: ...", and exit with
status 1 (2 for usage), as the CLI's do.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m pagesim")
    commands = parser.add_subparsers(dest="command", required=True)
    s = commands.add_parser("sweep", help="run an experiment's points on local threads or on Ray")
    s.add_argument("file", help="experiment YAML")
    s.add_argument("--out", help="output folder (default: out/<file name without .yaml>)")
    s.add_argument("--set", dest="sets", action="append", default=[], metavar="key.path=value",
                   help="override a setting (repeatable)")
    s.add_argument("--executor", choices=["threads", "ray"], default="threads")
    s.add_argument("--address", default=None,
                   help="Ray: the cluster to join ('auto', 'ray://host:10001'); default: a local instance")
    s.add_argument("-j", "--jobs", type=int, default=None, help="threads: points run at once")
    group = s.add_mutually_exclusive_group()
    group.add_argument("--overwrite", action="store_true", help="replace another run's results in the folder")
    group.add_argument("--resume", action="store_true", help="keep the points complete for the same config")
    s.add_argument("--quiet", action="store_true", help="no progress lines")
    c = commands.add_parser("compare", help="results folders side by side: summary metrics, differences, plots")
    c.add_argument("folders", nargs="+", help="results folders of pagesim run (runs or sweeps); the first is the "
                   "baseline")
    c.add_argument("--name", dest="names", action="append", default=None,
                   help="a name per folder, in order (default: the folders' names)")
    c.add_argument("--metric", default="", help="summary metrics, comma-separated (sweep.csv's column names)")
    c.add_argument("--out", help="also write compare.csv and the figures into this folder")
    c.add_argument("--format", default="png", help="figure formats, comma-separated: png, svg, pdf")
    args = parser.parse_args(argv)
    if args.command == "compare":
        return _compare(args)

    import pagesim
    from pagesim.sweep import _sweep

    out = Path(args.out) if args.out else Path("out") / Path(args.file).stem
    existing = "overwrite" if args.overwrite else "resume" if args.resume else "refuse"
    start = time.monotonic()
    try:
        result, table, resume_note = _sweep(args.file, args.sets, out, executor=args.executor, jobs=args.jobs,
                                            address=args.address or None, existing=existing,
                                            progress=not args.quiet)
    except (pagesim.ConfigError, pagesim.TraceError, pagesim.CostModelError, pagesim.SimulationError,
            pagesim.ExistingResultsError, pagesim.FolderBusyError, pagesim.SweepPointFolderError, ImportError,
            OSError, ValueError) as e:
        print(f"pagesim: error: {e}", file=sys.stderr)
        return 1
    for w in result.warnings:
        print(f"pagesim: warning: {w}", file=sys.stderr)
    if existing == "resume":
        print(f"pagesim: {resume_note}", end="", file=sys.stderr)
    print(table, end="")  # the table `pagesim run` prints
    points = len(result) if isinstance(result, pagesim.SweepResult) else 1
    print(f"{points} point{'s' if points != 1 else ''} ({args.executor}); results in {out} "
          f"({time.monotonic() - start:.2f} s wall)")
    return 0


def _compare(args: argparse.Namespace) -> int:
    from pagesim.compare import FORMATS, compare
    from pagesim.result import ResultsFolderError

    if len(args.folders) < 2:
        print("pagesim: error: compare: expected at least two results folders", file=sys.stderr)
        return 2
    formats = [f for f in args.format.split(",") if f]
    for f in formats:
        if f not in FORMATS:
            print(f"pagesim: error: --format {f}: expected {', '.join(FORMATS)}", file=sys.stderr)
            return 2
    try:
        comparison = compare(*args.folders, names=args.names,
                             metrics=[m for m in args.metric.split(",") if m] or None)
        print(comparison.to_text(), end="")
        if args.out:
            out = Path(args.out)
            out.mkdir(parents=True, exist_ok=True)
            files = [comparison.to_csv(out / "compare.csv")] + comparison.plot(out, formats)
            print(f"wrote {', '.join(str(f) for f in files)}")
    except (ResultsFolderError, ValueError, OSError) as e:
        print(f"pagesim: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
