"""pagesim's decisions against the engines' recorded ones (experiments/engine_parity/).

  python -m pagesim.reports.engine_parity check  [--pagesim BIN] [--root DIR] [--out DIR] [--report]

For every recording DIR/recorded/<engine-version>/<scenario>.jsonl.gz (DIR defaults to
experiments/engine_parity), runs DIR/scenarios/<scenario>.yaml through pagesim with
output.steps on, compares the two step by step, and checks each divergence against
DIR/divergences.yaml: a recording pagesim does not match step for step must be listed there
with its first divergent step, its cause and a bound on each summary metric it moves; a
listed recording that now matches is stale. Prints one line per recording; exits 1 when a
check fails, 2 on bad input. --report also writes DIR/REPORT.md.
"""
import argparse
import glob
import os
import subprocess
import sys
import tempfile

from pagesim.reports.engine_parity import record as records
from pagesim.reports.engine_parity.compare import compare
from pagesim.reports.engine_parity.expectations import ExpectationError, check, read_expectations
from pagesim.reports.engine_parity.render import report

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), *[os.pardir] * 4))


class ParityError(Exception):
    """A scenario pagesim cannot run, or a recording without its scenario."""


def recordings(root):
    """Every recording under root/recorded, in a stable order."""
    return sorted(glob.glob(os.path.join(root, "recorded", "*", "*.jsonl.gz")))


def pagesim_steps(pagesim, scenario_yaml, out_dir, settings=()):
    """Runs the scenario with output.steps on (and each "key=value" of `settings`) into
    out_dir; returns its steps Record."""
    args = [pagesim, "run", scenario_yaml, "--out", out_dir, "--set", "output.steps=true", "--quiet"]
    for s in settings:
        args += ["--set", s]
    p = subprocess.run(args, capture_output=True, text=True)
    if p.returncode != 0:
        raise ParityError(f"pagesim could not run {scenario_yaml} (exit {p.returncode}): {p.stderr.strip()}")
    return records.read(os.path.join(out_dir, "steps.jsonl"))


def compare_all(pagesim, root, out_dir):
    """The Comparison of every recording under root with pagesim's run of its scenario."""
    ours = {}
    results = []
    for path in recordings(root):
        theirs = records.read(path)
        name = theirs.scenario
        yaml_path = os.path.join(root, "scenarios", f"{name}.yaml")
        if not os.path.exists(yaml_path):
            raise ParityError(f"{path}: header field 'scenario' is {name!r}, but {yaml_path} does not exist")
        # pagesim follows the recorded vLLM release where releases differ (vllm_version).
        settings = (f"vllm_version={theirs.engine_version}",) if theirs.engine == "vllm" else ()
        key = (name, settings)
        if key not in ours:
            ours[key] = pagesim_steps(pagesim, yaml_path, os.path.join(out_dir, f"{name}-{len(ours)}"), settings)
        mine = ours[key]
        if mine.pool_blocks() != theirs.pool_blocks() or mine.header["block_size"] != theirs.header["block_size"]:
            raise ParityError(f"{path}: the recorded pool is {theirs.pool_blocks()} blocks of "
                              f"{theirs.header['block_size']} tokens, pagesim's run of {yaml_path} has "
                              f"{mine.pool_blocks()} of {mine.header['block_size']}: the scenario does not "
                              f"describe the recorded engine")
        results.append(compare(mine, theirs))
    return results


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m pagesim.reports.engine_parity", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("command", choices=["check"])
    ap.add_argument("--pagesim", default=os.environ.get("PAGESIM", os.path.join(REPO, "build", "pagesim")))
    ap.add_argument("--root", default=os.path.join(REPO, "experiments", "engine_parity"))
    ap.add_argument("--out", help="where pagesim's runs go (default: a temporary folder)")
    ap.add_argument("--report", action="store_true", help="write ROOT/REPORT.md")
    args = ap.parse_args(argv)
    try:
        expectations = read_expectations(os.path.join(args.root, "divergences.yaml"))
        with tempfile.TemporaryDirectory(prefix="pagesim-parity-") as tmp:
            results = compare_all(args.pagesim, args.root, args.out or tmp)
    except (records.RecordError, ExpectationError, ParityError) as e:
        print(f"engine_parity: {e}", file=sys.stderr)
        return 2
    failures = check(results, expectations)
    for c in results:
        state = "identical" if c.first is None else f"first divergence at step {c.first.step} ({', '.join(c.first.fields)})"
        print(f"{c.engine} {c.engine_version:>8} {c.scenario:<24} {c.identical:>5}/{c.steps_compared:<5} steps  {state}")
    for f in failures:
        print(f"FAIL: {f}", file=sys.stderr)
    if args.report:
        path = os.path.join(args.root, "REPORT.md")
        with open(path + ".tmp", "w") as fh:
            fh.write("\n".join(report(results, expectations)) + "\n")
        os.replace(path + ".tmp", path)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
