"""`pagesim calibrate`: fit the coefficients measured operators cannot give.

The operator tables (cost.kind operators) price the GPU's kernels. What is left is the
engine's host time and the client's own time, which no kernel table holds:
  cost.host.step_s           seconds of host work per engine step (scheduling, input
                             preparation, sampling, output processing)
  cost.host.per_seq_s        seconds of host work per scheduled sequence
  client.latency_s           the client's fixed time per request (HTTP, tokenizing the
                             prompt, detokenizing, streaming): added to every message time
These are fitted by default (--fit): none of them grows with the model or the TP degree, so
what they learn on one model holds for another. --fit may add
  cost.operators.gpu_scale   a factor on the summed operator times. It is not fitted by
                             default: the tables were measured inside vLLM, and a factor fitted
                             on a few models stands in for whatever those models lack, which
                             does not transfer (experiments/sim_to_real/REPORT.md's ablation)
and one property of the client-server pair the measurements show directly:
  client.stream_events_per_token   streamed messages per generated token, the integer m with
                             (E2E − TTFT) / TPOT = m·output_len + final_events − 1 (inference-perf
                             divides the first-to-last message span by the message count − 1)

Method: Levenberg–Marquardt on the relative errors of the per-stage medians of request
latency, TTFT and TPOT over every stage of every fitted run (medians, not means: a stall the
simulator does not model, such as the Mixtral runs' one-second warm-up in their first stage,
moves a stage's TTFT mean by 15% and its median by nothing; a fit to means would learn the
stall into the client's latency and carry it to every other model), the three simulated
coefficients by finite differences (each point one `pagesim run` per run); client.latency_s
enters TTFT and E2E as an exact shift, so at every point it takes its least-squares value in
closed form (clipped at 0). A fit that has not converged after MAX_ITERATIONS is an error
and writes nothing.
"""

from __future__ import annotations

import argparse
import math
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import yaml

from . import measured as measured_mod
from . import simulate

FINAL_EVENTS = 2  # inference-perf's last two messages: the usage chunk and "data: [DONE]"
MAX_ITERATIONS = 25
FIT_METRICS = ("request_latency", "time_to_first_token", "time_per_output_token")
FIT_STATISTIC = "median"  # of each metric's per-stage distribution (module doc)
SHIFTED = ("request_latency", "time_to_first_token")  # client.latency_s adds to these


@dataclass(frozen=True)
class Param:
    key: str
    start: float
    scale: float   # one unit of the optimiser's coordinates, in the key's unit
    lower: float


PARAMS = (
    Param("cost.host.step_s", 5e-4, 1e-3, 0.0),
    Param("cost.host.per_seq_s", 1e-5, 1e-5, 0.0),
    Param("cost.operators.gpu_scale", 1.0, 0.1, 0.2),
)
DEFAULT_FIT = ("cost.host.step_s", "cost.host.per_seq_s")
# What each key means, for the reports that print a calibration.
MEANINGS = {
    "cost.host.step_s": "the engine's host time per step that the GPU waits on (scheduling, inputs, output processing)",
    "cost.host.per_seq_s": "the engine's host time per scheduled sequence",
    "cost.operators.gpu_scale": "a factor on the measured operators' sum",
    "client.latency_s": "the client's and API server's fixed time per request (HTTP, tokenizing, streaming)",
    "client.stream_events_per_token": "streamed messages per generated token (read from the measurements, not fitted)",
}
FD_STEP = 0.05  # finite-difference step, in scaled units


class CalibrationError(RuntimeError):
    """The fit cannot be made or did not converge."""


def stream_events_per_token(runs: Sequence[dict[str, Any]]) -> int:
    """m from the measured runs (module doc); all stages must agree within 0.25."""
    estimates = []
    for run in runs:
        n = run["client"]["data_resolved"]["shared_prefix"]["output_len"]
        for st in run["stages"]:
            lat = st["latency_s"]
            span = lat["request_latency"]["mean"] - lat["time_to_first_token"]["mean"]
            ratio = span / lat["time_per_output_token"]["mean"] + 1 - FINAL_EVENTS
            estimates.append((run["run"], st["stage"], ratio / n))
    values = [e for _, _, e in estimates]
    m = round(float(np.median(values)))
    for name, stage, e in estimates:
        if abs(e - m) > 0.25:
            raise CalibrationError(f"run '{name}' stage {stage}: (E2E - TTFT) / TPOT implies {e:.2f} streamed "
                                   f"messages per token where the other stages imply {m}: the client or server "
                                   f"differs; fit such runs apart")
    if m < 1:
        raise CalibrationError(f"the measured runs imply {m} streamed messages per token; expected >= 1")
    return m


class Problem:
    """The fitted runs, their configs and measurements; residuals of a coefficient vector."""

    def __init__(self, runs: Sequence[dict[str, Any]], configs: Path, workers: int, fixed: Sequence[str],
                 params: Sequence[Param] = tuple(p for p in PARAMS if p.key in DEFAULT_FIT),
                 statistic: str = FIT_STATISTIC):
        self.params = tuple(params)
        self.statistic = statistic
        self.runs = list(runs)
        self.configs = [configs / f"{r['run']}.yaml" for r in self.runs]
        for run, path in zip(self.runs, self.configs):
            if not path.is_file():
                raise CalibrationError(f"{path}: no config for measured run '{run['run']}' "
                                       f"(python -m pagesim.reports.sim_to_real config writes one)")
        self.workers = workers
        self.fixed = list(fixed)
        self.events = stream_events_per_token(self.runs)
        self.evaluations = 0

    def overrides(self, x: np.ndarray) -> list[str]:
        values = [f"{p.key}={x[i] * p.scale:.9g}" for i, p in enumerate(self.params)]
        return values + [f"client.stream_events_per_token={self.events}", "client.latency_s=0"] + self.fixed

    def simulate(self, points: Sequence[np.ndarray]) -> list[list[list[dict[str, Any]]]]:
        jobs = [(c, self.overrides(x), True) for x in points for c in self.configs]
        self.evaluations += len(jobs)
        flat = simulate.run_many(jobs, self.workers)
        k = len(self.configs)
        return [flat[i * k:(i + 1) * k] for i in range(len(points))]

    def pairs(self, sims: list[list[dict[str, Any]]]) -> list[tuple[str, int, str, float, float]]:
        """(run, stage, metric, simulated, measured FIT_STATISTIC) for every fitted value."""
        out = []
        for run, stages in zip(self.runs, sims):
            if len(stages) != len(run["stages"]):
                raise CalibrationError(f"run '{run['run']}': pagesim simulated {len(stages)} stages, "
                                       f"the measurements have {len(run['stages'])}")
            for sim, meas in zip(stages, sorted(run["stages"], key=lambda s: s["stage"])):
                for metric in FIT_METRICS:
                    summary = sim["latency_s"][metric]
                    if summary is None:
                        raise CalibrationError(f"run '{run['run']}' stage {meas['stage']}: pagesim measured no "
                                               f"{metric} (no request finished with two or more messages)")
                    out.append((run["run"], meas["stage"], metric, summary[self.statistic],
                                meas["latency_s"][metric][self.statistic]))
        return out

    @staticmethod
    def latency(pairs) -> float:
        """The least-squares client.latency_s (>= 0) for these pairs."""
        num = sum((m - s) / m**2 for _, _, metric, s, m in pairs if metric in SHIFTED)
        den = sum(1 / m**2 for _, _, metric, _, m in pairs if metric in SHIFTED)
        return max(0.0, num / den)

    @staticmethod
    def residuals(pairs, latency: float) -> np.ndarray:
        return np.array([(s + (latency if metric in SHIFTED else 0.0) - m) / m for _, _, metric, s, m in pairs])


def fit(problem: Problem, log=print) -> dict[str, Any]:
    lower = np.array([p.lower / p.scale for p in problem.params])
    x = np.array([p.start / p.scale for p in problem.params])
    lam = 1e-2

    def evaluate(points):
        results = []
        for sims in problem.simulate(points):
            pairs = problem.pairs(sims)
            lat = Problem.latency(pairs)
            results.append((Problem.residuals(pairs, lat), lat, pairs))
        return results

    (r, lat, pairs), = evaluate([x])
    cost = float(r @ r)
    for iteration in range(1, MAX_ITERATIONS + 1):
        probes = []
        for j in range(len(x)):
            xp = x.copy()
            xp[j] += FD_STEP
            probes.append(xp)
        jac = np.column_stack([(rp - r) / FD_STEP for rp, _, _ in evaluate(probes)])
        g = jac.T @ r
        a = jac.T @ jac
        accepted = False
        for _ in range(8):
            step = np.linalg.solve(a + lam * np.diag(np.diag(a) + 1e-12), -g)
            xn = np.maximum(x + step, lower)
            (rn, latn, pairsn), = evaluate([xn])
            cn = float(rn @ rn)
            if cn < cost:
                accepted = True
                break
            lam *= 4
        if not accepted:
            log(f"  iteration {iteration}: no step lowers the cost {cost:.6g}: at a minimum")
            return result(problem, x, lat, pairs, r, iteration)
        moved = float(np.max(np.abs(xn - x)))
        gain = (cost - cn) / max(cost, 1e-300)
        x, r, lat, pairs, cost = xn, rn, latn, pairsn, cn
        lam = max(lam / 3, 1e-6)
        log(f"  iteration {iteration}: cost {cost:.6g} (rms error {100 * math.sqrt(cost / len(r)):.2f}%), "
            + ", ".join(f"{p.key} {x[i] * p.scale:.6g}" for i, p in enumerate(problem.params))
            + f", client.latency_s {lat:.6g}")
        if gain < 1e-5 or moved < 1e-3:
            return result(problem, x, lat, pairs, r, iteration)
    raise CalibrationError(f"the fit did not converge in {MAX_ITERATIONS} iterations (cost {cost:.6g}): "
                           f"check the runs' configs against their measurements")


def result(problem: Problem, x: np.ndarray, lat: float, pairs, r: np.ndarray, iterations: int) -> dict[str, Any]:
    values = {p.key: float(f"{x[i] * p.scale:.6g}") for i, p in enumerate(problem.params)}
    values["client.latency_s"] = float(f"{lat:.6g}")
    values["client.stream_events_per_token"] = problem.events
    residuals: dict[str, dict[str, dict[str, float]]] = {}
    for (run, stage, metric, _, _), e in zip(pairs, r):
        residuals.setdefault(run, {}).setdefault(f"stage {stage}", {})[metric] = round(100 * float(e), 3)
    return {"values": values, "statistic": problem.statistic,
            "fitted": [p.key for p in problem.params] + ["client.latency_s"],
            "fixed": list(problem.fixed), "iterations": iterations, "rms_error_pct": round(100 * math.sqrt(float(r @ r) / len(r)), 3),
            "residuals_pct": residuals, "simulations": problem.evaluations}


def write(path: Path, fitted: dict[str, Any], runs: Sequence[str], measured: str, command: str) -> None:
    doc = {
        "values": fitted["values"],
        "fit": {
            "command": command,
            "measured": measured,
            "runs": list(runs),
            "objective": f"least squares of relative errors of per-stage {fitted['statistic']}s: "
                         + ", ".join(FIT_METRICS),
            "fitted": fitted["fitted"],
            "fixed": fitted["fixed"],
            "iterations": fitted["iterations"],
            "rms_error_pct": fitted["rms_error_pct"],
            "residuals_pct": fitted["residuals_pct"],
        },
    }
    text = ("# pagesim calibration (sim/config/calibration.h): `values` are config keys an experiment\n"
            "# naming this file takes unless it sets them itself; `fit` says how they were found.\n"
            "# Written by `pagesim calibrate`; regenerate, do not edit.\n")
    text += yaml.safe_dump(doc, sort_keys=False, width=100)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    tmp.replace(path)


def main(argv: Sequence[str] | None = None, prog: str = "pagesim calibrate") -> int:
    ap = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n\n")[0])
    ap.add_argument("--measured", required=True, help="measured-runs file (shared/sim2real/measured_runs.json's schema)")
    ap.add_argument("--configs", required=True, help="folder of the runs' experiments, <run>.yaml each")
    ap.add_argument("--runs", help="comma-separated run names to fit on (default: every run of --measured)")
    ap.add_argument("--exclude", help="comma-separated run names to leave out (leave-one-out)")
    ap.add_argument("--out", required=True, help="the calibration file to write")
    ap.add_argument("--fit", default=",".join(DEFAULT_FIT),
                    help="comma-separated coefficients to fit besides client.latency_s (default: "
                         + ",".join(DEFAULT_FIT) + "; also: " + ",".join(p.key for p in PARAMS
                                                                         if p.key not in DEFAULT_FIT) + ")")
    ap.add_argument("--statistic", choices=("median", "mean"), default=FIT_STATISTIC,
                    help="which per-stage statistic of each metric the fit matches (default median: module doc)")
    ap.add_argument("--set", action="append", default=[], dest="fixed", metavar="KEY=VALUE",
                    help="an override applied to every simulation of the fit")
    ap.add_argument("-j", "--jobs", type=int, default=2, help="simulations at once (default 2)")
    args = ap.parse_args(argv)
    try:
        runs = measured_mod.load(args.measured)
        names = args.runs.split(",") if args.runs else list(runs)
        if len(set(names)) != len(names):
            raise CalibrationError(f"--runs: a run is named twice: {args.runs}")
        for n in names:
            if n not in runs:
                raise CalibrationError(f"--runs: '{n}' is not a run of {args.measured} (runs: {', '.join(runs)})")
        excluded = set(args.exclude.split(",")) if args.exclude else set()
        for n in excluded:
            if n not in runs:
                raise CalibrationError(f"--exclude: '{n}' is not a run of {args.measured}")
        names = [n for n in names if n not in excluded]
        if not names:
            raise CalibrationError("no run left to fit on")
        keys = [k for k in args.fit.split(",") if k]
        known = {p.key: p for p in PARAMS}
        for k in keys:
            if k not in known:
                raise CalibrationError(f"--fit: '{k}' is not a coefficient pagesim calibrate fits; expected some of "
                                       f"{', '.join(known)}")
        if len(set(keys)) != len(keys):
            raise CalibrationError(f"--fit: a coefficient is named twice: {args.fit}")
        params = tuple(p for p in PARAMS if p.key in keys)
        fixed_keys = {f.split("=", 1)[0] for f in args.fixed}
        for p in params:
            if p.key in fixed_keys:
                raise CalibrationError(f"--set {p.key}: that coefficient is fitted (--fit); fix it or fit it, not both")
        problem = Problem([runs[n] for n in names], Path(args.configs), args.jobs, args.fixed, params, args.statistic)
        print(f"calibrating on {len(names)} runs: {', '.join(names)}")
        print(f"  client.stream_events_per_token = {problem.events} (from (E2E - TTFT) / TPOT)")
        fitted = fit(problem)
        command = "pagesim calibrate " + " ".join(argv if argv is not None else sys.argv[1:])
        write(Path(args.out), fitted, names, args.measured, command)
    except (CalibrationError, measured_mod.MeasuredRunsError, simulate.SimulationFailed) as e:
        print(f"pagesim calibrate: error: {e}", file=sys.stderr)
        return 1
    print("fit:")
    for k, v in fitted["values"].items():
        print(f"  {k:32s} {v}")
    print(f"residuals (% of measured), rms {fitted['rms_error_pct']}%:")
    for run, stages in fitted["residuals_pct"].items():
        for stage, metrics in stages.items():
            print(f"  {run} {stage}: " + ", ".join(f"{m} {v:+.2f}" for m, v in metrics.items()))
    print(f"wrote {args.out} ({fitted['simulations']} simulations)")
    return 0
