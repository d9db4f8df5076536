"""python -m pagesim.reports.sim_to_real {config,calibrate,report,requests} ... (see the package doc)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from . import calibrate, measured, report, request_latencies, run_config


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "calibrate":
        return calibrate.main(argv[1:])
    if argv and argv[0] == "requests":
        return request_latencies.main(argv[1:])
    ap = argparse.ArgumentParser(prog="python -m pagesim.reports.sim_to_real")
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("config", help="write the pagesim experiment of measured runs")
    c.add_argument("measured")
    c.add_argument("runs", nargs="*", help="run names (default: all)")
    c.add_argument("--out", default="experiments/sim_to_real/runs")
    c.add_argument("--calibration", help="the calibration file the experiments name")
    r = sub.add_parser("report", help="write REPORT.md")
    r.add_argument("measured")
    r.add_argument("results")
    r.add_argument("--calibration", required=True)
    r.add_argument("--out", required=True)
    r.add_argument("--command", default="experiments/sim_to_real/run_all.sh")
    r.add_argument("--operator-checks", help="folder of <model>-<gpu>-operators.csv (pagesim profile) to report")
    r.add_argument("--peers", help="the peers' predictions of a dev run (experiments/sim_to_real/peers/) to set beside")
    g = sub.add_parser("groups", help="print '<group> <run,run,...>' per model or TP degree (leave-one-group-out fits)")
    g.add_argument("measured")
    g.add_argument("--by", choices=measured.GROUPINGS, required=True)
    sub.add_parser("calibrate", help="pagesim calibrate (see --help there)")
    sub.add_parser("requests", help="pagesim trace compare (see --help there)")
    args = ap.parse_args(argv)
    try:
        if args.cmd == "config":
            runs = measured.load(args.measured)
            for name in args.runs or list(runs):
                if name not in runs:
                    raise measured.MeasuredRunsError(f"{args.measured}: no run '{name}'")
                print(run_config.write(runs[name], args.measured, Path(args.out), args.calibration))
        elif args.cmd == "groups":
            for group, names in measured.groups(measured.load(args.measured), args.by).items():
                print(group, ",".join(names))
        elif args.cmd == "report":
            report.write(Path(args.measured), Path(args.results), Path(args.calibration), Path(args.out), args.command,
                         Path(args.operator_checks) if args.operator_checks else None,
                         Path(args.peers) if args.peers else None)
    except (measured.MeasuredRunsError, ValueError) as e:
        print(f"sim_to_real: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
