"""Reading one results folder of experiments/vllm_paper/run_all.sh.

The folder holds one sub-folder per experiment (fig2, fig2_seeds, fig13a, ...), each with the
sweep's sweep.csv (one row per run, values as text) and one folder per run named by the row's
`point`, holding summary.json and config.resolved.yaml. Results reads those files on demand and
returns plain values; it keeps no state besides the folder's path. Errors are ResultsError
naming the file and the key that is missing or malformed.
"""
import csv
import dataclasses
import json
import os

import yaml


class ResultsError(Exception):
    """A results file is missing, or lacks a key or a value of the expected kind."""


@dataclasses.dataclass(frozen=True)
class Protocol:
    """How long an experiment's runs draw arrivals and the window their averages cover."""
    duration_s: float
    window_start_s: float
    window_end_s: float
    rng: str  # workload.rng: "artifact" when the trace is the paper artifact's exact one


@dataclasses.dataclass(frozen=True)
class CostModel:
    """The cost model one run used, with the GPU preset's values filled in where the config
    kept them. Two runs used the same cost model iff their CostModels compare equal."""
    kind: str
    model: str
    gpu: str
    tensor_parallel: int
    compute_efficiency: float  # fraction of the GPU's peak FLOP/s
    memory_efficiency: float  # fraction of the GPU's peak HBM bandwidth
    iteration_overhead_s: float  # fixed cost of every scheduler iteration (s)


# Roofline settings that config.resolved.yaml writes as a negative number when the run kept the
# GPU preset's value, and the name (and unit suffix) under which the cost model's description
# in summary.json records the value used.
_PRESET_KEPT = {"compute_efficiency": ("compute_efficiency", ""),
                "memory_efficiency": ("memory_efficiency", ""),
                "iteration_overhead_s": ("iteration_overhead", "s")}


def number(row, key):
    """The value of column `key` of a sweep.csv row, as a float. Raises ResultsError naming the
    row's point and the key when the column is absent or not a number."""
    try:
        return float(row[key])
    except KeyError:
        raise ResultsError(f"sweep.csv row {row.get('point', '?')}: no column {key!r}") from None
    except ValueError:
        raise ResultsError(f"sweep.csv row {row.get('point', '?')}, column {key!r}: "
                           f"{row[key]!r} is not a number") from None


def case(label):
    """The sweep case of a run label: the sweep writes `case,axis=value,...` when a case is
    crossed with sweep axes (seeds, rates), and the case alone otherwise."""
    return label.split(",")[0]


def described_settings(text):
    """The `key=value` settings of a component description such as
    `roofline(model=opt-13b, ..., iteration_overhead=0.0186s)`, as strings by key. Raises
    ResultsError when the text is not `name(key=value, ...)`."""
    open_at = text.find("(")
    if open_at < 0 or not text.endswith(")"):
        raise ResultsError(f"description {text!r}: expected name(key=value, ...)")
    settings = {}
    inner = text[open_at + 1:-1].strip()
    for item in inner.split(",") if inner else []:
        key, sep, value = item.strip().partition("=")
        if not sep:
            raise ResultsError(f"description {text!r}: item {item.strip()!r} is not key=value")
        settings[key] = value
    return settings


def _lookup(doc, dotted, path):
    node = doc
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            raise ResultsError(f"{path}: no key {dotted!r}")
        node = node[part]
    return node


def _as_float(value, dotted, path):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ResultsError(f"{path}, key {dotted!r}: {value!r} is not a number")
    return float(value)


def read_json(path):
    """The JSON file at `path`, parsed; ResultsError naming the file (and line) otherwise."""
    try:
        with open(path) as fh:
            return json.load(fh)
    except OSError as e:
        raise ResultsError(f"{path}: {e.strerror}") from None
    except json.JSONDecodeError as e:
        raise ResultsError(f"{path}:{e.lineno}: {e.msg}") from None


def number_at(doc, dotted, where):
    """The number at `dotted` (e.g. "ttft_s.p99") of parsed JSON or YAML `doc`; ResultsError
    naming `where` and the key when it is absent or not a number."""
    return _as_float(_lookup(doc, dotted, where), dotted, where)


def read_csv_rows(path):
    """The rows of the CSV file at `path`, in file order, as dicts of text; ResultsError naming
    the file when it cannot be read."""
    try:
        with open(path, newline="") as fh:
            return list(csv.DictReader(fh))
    except OSError as e:
        raise ResultsError(f"{path}: {e.strerror}") from None


class Results:
    """One run_all.sh output folder (REQUIRES: it exists; missing files raise ResultsError)."""

    def __init__(self, root):
        self.root = root

    def has(self, experiment):
        """Whether the folder holds results of `experiment`."""
        return os.path.isdir(os.path.join(self.root, experiment))

    def experiments(self):
        """The experiment folders, sorted by name."""
        return sorted(d for d in os.listdir(self.root) if self.has(d))

    def sweep(self, experiment):
        """The rows of the experiment's sweep.csv, in file order, as dicts of text."""
        path = os.path.join(self.root, experiment, "sweep.csv")
        rows = read_csv_rows(path)
        for i, r in enumerate(rows, start=2):
            if not r.get("point") or not r.get("label"):
                raise ResultsError(f"{path}:{i}: a row needs `point` and `label`")
        return rows

    def summary(self, experiment, row):
        """The summary.json of the run of `row`, parsed."""
        return read_json(os.path.join(self.root, experiment, row["point"], "summary.json"))

    def config(self, experiment, row):
        """The config.resolved.yaml of the run of `row`, parsed."""
        return self._config(os.path.join(self.root, experiment, row["point"], "config.resolved.yaml"))

    def _config(self, path):
        try:
            with open(path) as fh:
                doc = yaml.safe_load(fh)
        except OSError as e:
            raise ResultsError(f"{path}: {e.strerror}") from None
        except yaml.YAMLError as e:
            raise ResultsError(f"{path}: {e}") from None
        if not isinstance(doc, dict):
            raise ResultsError(f"{path}: expected a mapping at the top level")
        return doc

    def protocol(self, experiment):
        """Duration, measurement window and generators of an experiment, from the resolved config
        of its first run folder (every run of a sweep shares them unless a case overrides them)."""
        folder = os.path.join(self.root, experiment)
        try:
            runs = sorted(d for d in os.listdir(folder) if os.path.isdir(os.path.join(folder, d)))
        except OSError as e:
            raise ResultsError(f"{folder}: {e.strerror}") from None
        if not runs:
            raise ResultsError(f"{folder}: no run folders")
        path = os.path.join(folder, runs[0], "config.resolved.yaml")
        doc = self._config(path)
        return Protocol(
            duration_s=number_at(doc, "workload.duration_s", path),
            window_start_s=number_at(doc, "measure.window_start_s", path),
            window_end_s=number_at(doc, "measure.window_end_s", path),
            rng=str(_lookup(doc, "workload.rng", path)))

    def _run_path(self, experiment, row):
        return os.path.join(self.root, experiment, row["point"], "config.resolved.yaml")

    def offered_rate(self, experiment, row):
        """The nominal arrival rate (req/s) of the run of `row`."""
        path = self._run_path(experiment, row)
        return number_at(self.config(experiment, row), "workload.arrival.rate", path)

    def cost_model(self, experiment, row):
        """The cost model the run of `row` used. Its settings come from config.resolved.yaml; a
        roofline setting the config leaves negative (keep the GPU preset's) is taken from the
        cost model's description in summary.json, the only record of the preset's value."""
        path = self._run_path(experiment, row)
        doc = self.config(experiment, row)
        values = {}
        described = None
        for key, (described_key, unit) in _PRESET_KEPT.items():
            v = number_at(doc, f"cost.{key}", path)
            if v < 0:
                if described is None:
                    described = described_settings(str(self.summary(experiment, row).get("cost_model", "")))
                text = described.get(described_key, "")
                if not text.endswith(unit):
                    raise ResultsError(f"{experiment}/{row['point']}/summary.json, cost_model: "
                                       f"{described_key}={text!r}, expected a number ending in {unit!r}")
                try:
                    v = float(text[:len(text) - len(unit)])
                except ValueError:
                    raise ResultsError(f"{experiment}/{row['point']}/summary.json, cost_model: "
                                       f"{described_key}={text!r} is not a number") from None
            values[key] = v
        return CostModel(kind=str(_lookup(doc, "cost.kind", path)), model=str(_lookup(doc, "model", path)),
                         gpu=str(_lookup(doc, "gpu", path)),
                         tensor_parallel=int(_lookup(doc, "tensor_parallel", path)), **values)

    def sharing(self, experiment, row):
        """What the run of `row` shares blocks between: ("beam", width) when a sampling class
        runs beam search, else ("parallel", n) when one samples n > 1 sequences."""
        path = self._run_path(experiment, row)
        classes = _lookup(self.config(experiment, row), "workload.sampling", path)
        if not isinstance(classes, list):
            raise ResultsError(f"{path}, key 'workload.sampling': expected a list")
        widths = [int(c.get("beam_width", 1)) for c in classes]
        ns = [int(c.get("n", 1)) for c in classes]
        if max(widths, default=1) > 1:
            return "beam", max(widths)
        if max(ns, default=1) > 1:
            return "parallel", max(ns)
        raise ResultsError(f"{path}, key 'workload.sampling': no class with n > 1 or beam_width > 1")

    def beam_model(self, experiment, row):
        """The beam-survival model of the run of `row`: ("neutral", None) or ("scores", mean
        next-token entropy in nats)."""
        path = self._run_path(experiment, row)
        doc = self.config(experiment, row)
        model = str(_lookup(doc, "beam.model", path))
        if model == "neutral":
            return model, None
        return model, number_at(doc, "beam.mean_entropy_nats", path)


MEMORY_CLASSES = ("token_states", "reserved", "over_reserved", "rounding", "free")


def memory_pct(row):
    """pagesim's five memory classes of a sweep.csv row (percent of KV capacity, by name)."""
    return {c: number(row, f"memory_pct.{c}") for c in MEMORY_CLASSES}
