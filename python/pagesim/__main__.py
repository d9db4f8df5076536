"""python -m pagesim sweep EXP.yaml [--out DIR] [--set key.path=value]... [--executor threads|ray]
                          [--address ADDRESS] [-j N] [--overwrite | --resume] [--quiet]

pagesim.sweep() from the command line; `pagesim run EXP.yaml --ray [ADDRESS]` execs this with
--executor ray (sim/cli/ray_handoff.h). Errors print one line, "pagesim: error: ...", and
exit with status 1 (2 for usage), as the CLI's do.
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
    args = parser.parse_args(argv)

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


if __name__ == "__main__":
    sys.exit(main())
