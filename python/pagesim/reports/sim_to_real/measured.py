"""Measured-runs files: load one and check it holds what a comparison reads.

The schema is shared/sim2real/measured_runs.json's: {"runs": [run, ...]}, each run with
"run" (its name), "server" (model, tensor_parallel, max_model_len, max_num_batched_tokens,
max_num_seqs), "hardware", "client" (data_resolved.shared_prefix, load_type, ignore_eos) and
"stages" (stage, rate_per_s, duration_s, requests_ok, latency_s.<metric>.<statistic>, in
seconds). The latency metrics are inference-perf's (kubernetes-sigs/inference-perf,
inference_perf/reportgen/base.py): request_latency, time_to_first_token,
time_per_output_token, inter_token_latency, normalized_time_per_output_token.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

# The metrics a comparison reads, by inference-perf's names, and their statistics.
METRICS = ("request_latency", "time_to_first_token", "time_per_output_token", "inter_token_latency")
ALL_METRICS = METRICS + ("normalized_time_per_output_token",)
STATISTICS = ("mean", "median", "p90", "p99")

SERVER_KEYS = ("model", "tensor_parallel", "max_model_len", "max_num_batched_tokens", "max_num_seqs")
SHARED_PREFIX_KEYS = ("num_groups", "num_prompts_per_group", "system_prompt_len", "question_len", "output_len")


class MeasuredRunsError(ValueError):
    """A measured-runs file that lacks something a comparison needs; names file, run and key."""


def _require(node: Any, key: str, where: str, path: Path) -> Any:
    if not isinstance(node, dict) or key not in node or node[key] is None:
        raise MeasuredRunsError(f"{path}: {where}: missing '{key}'")
    return node[key]


def _number(node: Any, key: str, where: str, path: Path) -> float:
    value = _require(node, key, where, path)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
        raise MeasuredRunsError(f"{path}: {where}.{key}: expected a number, found {value!r}")
    return float(value)


def check_run(run: dict[str, Any], path: Path) -> None:
    """Raises MeasuredRunsError naming the first missing or malformed field of `run`."""
    name = _require(run, "run", "a run", path)
    where = f"run '{name}'"
    server = _require(run, "server", where, path)
    for key in SERVER_KEYS:
        _require(server, key, f"{where}.server", path)
    _require(run, "hardware", where, path)
    client = _require(run, "client", where, path)
    data = _require(client, "data_resolved", f"{where}.client", path)
    if data.get("type") != "shared_prefix":
        raise MeasuredRunsError(f"{path}: {where}.client.data_resolved.type: expected 'shared_prefix' (the only "
                                f"inference-perf data generator pagesim models), found {data.get('type')!r}")
    shared = _require(data, "shared_prefix", f"{where}.client.data_resolved", path)
    for key in SHARED_PREFIX_KEYS:
        _number(shared, key, f"{where}.client.data_resolved.shared_prefix", path)
    if shared["output_len"] < 2:
        raise MeasuredRunsError(f"{path}: {where}.client.data_resolved.shared_prefix.output_len: expected >= 2 "
                                f"tokens (TPOT needs two), found {shared['output_len']}")
    if shared.get("enable_multi_turn_chat"):
        raise MeasuredRunsError(f"{path}: {where}: multi-turn shared_prefix data is not modelled")
    load_type = _require(client, "load_type", f"{where}.client", path)
    if load_type not in ("constant", "poisson"):
        raise MeasuredRunsError(f"{path}: {where}.client.load_type: expected constant or poisson, found {load_type!r}")
    stages = _require(run, "stages", where, path)
    if not isinstance(stages, list) or not stages:
        raise MeasuredRunsError(f"{path}: {where}.stages: expected a non-empty list")
    for i, stage in enumerate(stages):
        sw = f"{where}.stages[{i}]"
        for key in ("stage", "rate_per_s", "duration_s", "requests_ok"):
            _number(stage, key, sw, path)
        latency = _require(stage, "latency_s", sw, path)
        for metric in ALL_METRICS:
            m = _require(latency, metric, f"{sw}.latency_s", path)
            for stat in STATISTICS:
                _number(m, stat, f"{sw}.latency_s.{metric}", path)
            if metric in METRICS and m["mean"] <= 0:
                raise MeasuredRunsError(f"{path}: {sw}.latency_s.{metric}.mean: expected seconds > 0, "
                                        f"found {m['mean']}")


def load(path: str | Path) -> dict[str, dict[str, Any]]:
    """The runs of a measured-runs file by name, in file order; every run checked."""
    path = Path(path)
    try:
        doc = json.loads(path.read_text())
    except FileNotFoundError:
        raise MeasuredRunsError(f"{path}: no such file") from None
    except json.JSONDecodeError as e:
        raise MeasuredRunsError(f"{path}:{e.lineno}: not JSON: {e.msg}") from None
    runs = _require(doc, "runs", "the top level", path)
    if not isinstance(runs, list) or not runs:
        raise MeasuredRunsError(f"{path}: 'runs': expected a non-empty list")
    out: dict[str, dict[str, Any]] = {}
    for run in runs:
        check_run(run, path)
        if run["run"] in out:
            raise MeasuredRunsError(f"{path}: run '{run['run']}' appears twice")
        out[run["run"]] = run
    return out


def stage_value(stage: dict[str, Any], metric: str, stat: str) -> float:
    """A measured stage's statistic of a metric, seconds."""
    return float(stage["latency_s"][metric][stat])


GROUPINGS = ("model", "tp")  # what a leave-one-group-out fit leaves out


def group_of(run: dict[str, Any], by: str) -> str:
    """The group a run belongs to for a leave-one-group-out fit: a file-name-safe slug of its
    model ("mistralai/Mixtral-8x7B-v0.1" -> "mistralai-mixtral-8x7b-v0-1") or "tp<N>"."""
    if by == "model":
        return re.sub(r"[^a-z0-9]+", "-", run["server"]["model"].lower()).strip("-")
    if by == "tp":
        return f"tp{run['server']['tensor_parallel']}"
    raise ValueError(f"unknown grouping '{by}'; expected one of {', '.join(GROUPINGS)}")


def groups(runs: dict[str, dict[str, Any]], by: str) -> dict[str, list[str]]:
    """group -> its runs' names, in the measured file's order."""
    out: dict[str, list[str]] = {}
    for name, run in runs.items():
        out.setdefault(group_of(run, by), []).append(name)
    return out
