"""Reading one results folder of experiments/prefix_cache/run_all.sh.

The folder holds trace_stats.json (`pagesim trace stats --json`), cache_curve_512.csv and
cache_curve_16.csv (`pagesim trace cache-curve --out`: the trace's 512-token hash blocks, and
16-token full blocks), and one sweep folder per experiment (mooncake_unbounded,
schedulers_conversation, schedulers_sessions, eviction), read through pagesim_report.load.
Results keeps only the folder's path and returns plain values; a missing file or key raises
ResultsError naming the file and the key.
"""
import csv
import dataclasses
import os

from pagesim.plots import cache_curve as plot_cache_curve
from pagesim.reports.load import Results, ResultsError, read_json

EXPERIMENTS = ("mooncake_unbounded", "schedulers_conversation", "schedulers_sessions", "eviction")
CURVES = {"512": "cache_curve_512.csv", "16": "cache_curve_16.csv"}


@dataclasses.dataclass(frozen=True)
class Run:
    """One sweep point: its label (`axis=value,...`), folder name and parsed summary.json."""
    label: str
    point: str
    summary: dict

    def get(self, dotted):
        """The number at `dotted` (e.g. "ttft_s.p50") in summary.json. Raises ResultsError naming
        the run and the key when it is absent or not a number."""
        node = self.summary
        for part in dotted.split("."):
            if not isinstance(node, dict) or part not in node:
                raise ResultsError(f"{self.point}/summary.json: no key {dotted!r}")
            node = node[part]
        if isinstance(node, bool) or not isinstance(node, (int, float)):
            raise ResultsError(f"{self.point}/summary.json, key {dotted!r}: {node!r} is not a number")
        return float(node)

    def axis(self, name):
        """The value (text) of sweep axis `name` in the label. Raises ResultsError when the label
        has no such axis."""
        for item in self.label.split(","):
            key, sep, value = item.partition("=")
            if sep and key == name:
                return value
        raise ResultsError(f"{self.point}: label {self.label!r} has no axis {name!r}")


class PrefixResults:
    """One run_all.sh output folder (REQUIRES: it exists; missing files raise ResultsError)."""

    def __init__(self, root):
        self.root = root
        self._sweeps = Results(root)

    def runs(self, experiment):
        """The experiment's sweep points in sweep.csv order, each with its summary."""
        return [Run(r["label"], os.path.join(experiment, r["point"]), self._sweeps.summary(experiment, r))
                for r in self._sweeps.sweep(experiment)]

    def config(self, experiment):
        """The config.resolved.yaml of the experiment's first sweep point, parsed."""
        return self._sweeps.config(experiment, self._sweeps.sweep(experiment)[0])

    def trace_stats(self):
        """trace_stats.json, parsed."""
        return read_json(os.path.join(self.root, "trace_stats.json"))

    def curve(self, blocks):
        """The cache curve with `blocks` = "512" or "16" (see CURVES), as plot_cache_curve.read_curve
        returns it: {"stack": [(tokens, rate)], "direct": {policy: [(tokens, rate)]}}."""
        path = os.path.join(self.root, CURVES[blocks])
        try:
            curve = plot_cache_curve.read_curve(path)
        except OSError as e:
            raise ResultsError(f"{path}: {e.strerror}") from None
        except ValueError as e:
            raise ResultsError(str(e)) from None
        if not curve["stack"]:
            raise ResultsError(f"{path}: no stack (LRU) points")
        return curve

    def hit_rate_over_time(self, run, bin_s):
        """First-admission hit rate per span of `bin_s` simulated seconds, from the run's
        iterations.csv (every iteration: iterations_stride 1): [(span start s, rate)], spans with
        no prompt tokens left out. Raises ResultsError when the file or a column is missing."""
        path = os.path.join(self.root, run.point, "iterations.csv")
        hits, prompts = {}, {}
        try:
            with open(path, newline="") as fh:
                reader = csv.DictReader(fh)
                need = {"start_s", "prefix_prompt_tokens", "prefix_hit_tokens"}
                if not need <= set(reader.fieldnames or []):
                    raise ResultsError(f"{path}: expected columns {sorted(need)}, found {reader.fieldnames}")
                for row in reader:
                    try:
                        span = int(float(row["start_s"]) // bin_s)
                        p, h = int(row["prefix_prompt_tokens"]), int(row["prefix_hit_tokens"])
                    except ValueError:
                        raise ResultsError(f"{path}:{reader.line_num}: start_s / prefix_prompt_tokens / "
                                           "prefix_hit_tokens: expected numbers") from None
                    prompts[span] = prompts.get(span, 0) + p
                    hits[span] = hits.get(span, 0) + h
        except OSError as e:
            raise ResultsError(f"{path}: {e.strerror}") from None
        return [(span * bin_s, hits[span] / prompts[span]) for span in sorted(prompts) if prompts[span] > 0]

    def mean_request_hit_fraction(self, run):
        """The mean over requests of cached_tokens / prompt_tokens (first admissions), from the run's
        requests.csv: the per-request average, where summary.json's prefix_hit_rate weights requests
        by their prompt length. Raises ResultsError when the file or a column is missing or empty."""
        path = os.path.join(self.root, run.point, "requests.csv")
        fractions = []
        try:
            with open(path, newline="") as fh:
                reader = csv.DictReader(fh)
                need = {"prompt_tokens", "cached_tokens"}
                if not need <= set(reader.fieldnames or []):
                    raise ResultsError(f"{path}: expected columns {sorted(need)}, found {reader.fieldnames}")
                for row in reader:
                    try:
                        prompt, cached = int(row["prompt_tokens"]), int(row["cached_tokens"])
                    except ValueError:
                        raise ResultsError(f"{path}:{reader.line_num}: prompt_tokens / cached_tokens: "
                                           "expected integers") from None
                    if prompt > 0:
                        fractions.append(cached / prompt)
        except OSError as e:
            raise ResultsError(f"{path}: {e.strerror}") from None
        if not fractions:
            raise ResultsError(f"{path}: no request with a prompt")
        return sum(fractions) / len(fractions)
