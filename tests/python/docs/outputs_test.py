"""docs/outputs.md names every output file's columns and keys: runs that use every feature
(prefix cache, layer-group pools, replicas with a global cache and disaggregation, offload
tiers, LoRA, SLOs, a client, the operators cost model) write their files, and every CSV column,
summary.json key and client_metrics.json key must appear in the document (a memory class,
statistic, tier, layer class or operator in a key as its placeholder: `memory_pct.<class>`)."""
import csv
import glob
import json
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))
from pagesim_binary import REPO, run_pagesim  # noqa: E402

CLASSES = {"token_states", "reserved", "over_reserved", "rounding", "free", "cached_free", "unusable_free"}
STATS = {"mean", "p50", "p90", "p99", "max", "min", "p1", "p10", "median"}
LAYER_CLASSES = {"out_of_window", "recurrent_state", "unused_layers"}
OPERATORS = {"gemm", "context_attention", "generation_attention", "moe", "allreduce"}
SMALL = ["--set", "workload.max_requests=60", "--set", "output.iterations_stride=1", "--set",
         "output.requests_csv=true", "-q", "--overwrite"]
# (experiment, extra --set assignments): together they use every feature that adds outputs.
RUNS = [
    ("experiments/vllm_paper/fig2.yaml", ["sweep={}", "output.timeline=true", "validate.every_n_iterations=50"]),
    ("experiments/prefix_cache/mooncake_unbounded.yaml", ["sweep={}"]),
    ("experiments/heterogeneous_kv/allocators_azure.yaml", ["sweep={}", "allocator.kind=hybrid", "model=gemma-2-9b"]),
    ("experiments/modern_kv/lora_placements.yaml", []),
    ("experiments/cluster/mooncake_10x3m.yaml", ["sweep={}", "replicas.global_cache.bandwidth_gbps=200",
                                                  "replicas.global_cache.latency_us=20"]),
    ("experiments/cluster/disagg_azure.yaml", ["sweep={}", "replicas.disaggregated.prefill=2",
                                               "replicas.disaggregated.transfer_gbps=200",
                                               "replicas.disaggregated.transfer_latency_us=20"]),
    ("experiments/cluster/tiers_sessions.yaml",
     ["sweep={}", "allocator.offload={tiers: [{kind: cpu, capacity_gib: 1}, {kind: disk, capacity_gib: 8}]}"]),
    ("experiments/sim_to_real/runs/20260217-155451-llama-2-7b-tp1-codegen.yaml", []),
]


def placeholder(key):
    """`key` with its class, statistic, tier, layer class or operator as the document's placeholder."""
    parts = key.split(".")
    out = []
    for i, p in enumerate(parts):
        before = parts[i - 1] if i else ""
        if p in CLASSES and before.startswith("memory_"):
            p = "<class>"
        elif p in STATS and i == len(parts) - 1 and "load_balance" not in parts:
            p = "<stat>"
        elif before == "tiers" and p in {"cpu", "disk"}:
            p = "<tier>"
        elif p in LAYER_CLASSES and before.startswith("memory_pct"):
            p = "<layer_class>"
        elif p in OPERATORS and before.endswith("lookups"):
            p = "<op>"
        out.append(p)
    return ".".join(out)


def keys_of(doc, prefix=""):
    for k, v in doc.items():
        if isinstance(v, dict):
            yield from keys_of(v, prefix + k + ".")
        elif isinstance(v, list) and v and isinstance(v[0], dict):
            if prefix + k == "stages":
                yield "stages"
                continue
            for item in v:
                yield from keys_of(item, prefix + k + "[].")
        else:
            yield prefix + k


@pytest.fixture(scope="module")
def outputs(tmp_path_factory):
    out = tmp_path_factory.mktemp("outputs")
    for i, (exp, sets) in enumerate(RUNS):
        args = ["run", exp, "--out", str(out / str(i))] + SMALL
        for s in sets:
            args += ["--set", s]
        run_pagesim(*args)
    return out


def documented():
    with open(os.path.join(REPO, "docs", "outputs.md")) as f:
        return f.read()


@pytest.mark.parametrize("name", ["requests.csv", "iterations.csv"])
def test_every_csv_column_is_documented(outputs, name):
    doc = documented()
    columns = set()
    for path in glob.glob(str(outputs / "**" / name), recursive=True):
        with open(path) as f:
            columns.update(next(csv.reader(f)))
    assert len(columns) > 15
    missing = sorted(c for c in columns if f"`{c}`" not in doc)
    assert not missing, f"{name} columns not in docs/outputs.md: {missing}"


@pytest.mark.parametrize("name", ["summary.json", "client_metrics.json"])
def test_every_json_key_is_documented(outputs, name):
    doc = documented()
    keys = set()
    for path in glob.glob(str(outputs / "**" / name), recursive=True):
        with open(path) as f:
            keys.update(keys_of(json.load(f)))
    assert keys, name
    missing = []
    for k in sorted(keys):
        p = placeholder(k)
        # replicas[].X: documented as replicas[].X, as X, or (global_cache) as cluster.X.
        inner = p.split("[].", 1)[-1]
        if not any(f"`{d}`" in doc for d in (p, inner, "cluster." + inner)):
            missing.append(p)
    assert not missing, f"{name} keys not in docs/outputs.md: {missing}"


def test_every_file_is_documented(outputs):
    doc = documented()
    names = {os.path.basename(p) for p in glob.glob(str(outputs / "**" / "*"), recursive=True) if os.path.isfile(p)}
    assert {"summary.json", "requests.csv", "iterations.csv", "timeline.json", "batches.jsonl",
            "client_metrics.json", "sweep.csv", "config.resolved.yaml"} <= names
    assert not sorted(n for n in names if f"`{n}`" not in doc)


def test_requests_csv_is_in_finish_order_as_documented(outputs):
    # Issue 41: requests.csv streams as requests finish; the document says so, and that `id`
    # gives the workload's order. Every run's file is in finish order, and some not in id order.
    doc = documented()
    assert "in the order requests finish" in doc and "sort by `id`" in doc
    out_of_id_order = 0
    for path in glob.glob(str(outputs / "**" / "requests.csv"), recursive=True):
        with open(path) as f:
            rows = list(csv.DictReader(f))
        finish = [float(r["finish_s"]) for r in rows]
        assert finish == sorted(finish), path
        ids = [int(r["id"]) for r in rows]
        out_of_id_order += ids != sorted(ids)
    assert out_of_id_order > 0
