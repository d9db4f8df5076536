"""timeline.json (output.timeline) of a small run, of the Fig. 2 vLLM point, of two replicas
with prefix caches and of a disaggregated cluster: its structure as the Chrome trace-event format defines it (always checked),
and the tracks Perfetto's trace processor makes of it, loaded and queried through the `perfetto`
package from PyPI: always with the trace processor's WebAssembly build (perfetto_wasm.py), and
also with the native trace_processor_shell where it is present (perfetto_prebuilt.py; skips
saying how to provide it otherwise)."""
import collections
import contextlib
import csv
import json
import os

import pytest

import perfetto_prebuilt
import perfetto_wasm
from pagesim_binary import REPO, run_pagesim

FIG2 = os.path.join(REPO, "experiments", "vllm_paper", "fig2.yaml")
CLASSES = ["token_states", "reserved", "over_reserved", "rounding", "free", "cached_free"]
PHASES = {"queued", "prefill", "decode", "preempted", "swapped"}
DISAGGREGATED_PHASES = {"transfer_queued", "kv_transfer"}


def request_slices(events):
    """The request slices of the lanes ("B"/"E" on threads tid >= 2): checks that they nest on
    each (pid, tid) and that a lane holds one request at a time; returns {(pid, tid): [(name,
    begin, end, depth)]} in the order they end, and the lanes' names {(pid, tid): name}."""
    lane_names = {(e["pid"], e["tid"]): e["args"]["name"] for e in events
                  if e["ph"] == "M" and e["name"] == "thread_name" and e["tid"] >= 2}
    stacks = collections.defaultdict(list)
    slices = collections.defaultdict(list)
    for e in events:
        if e["ph"] not in "BE":
            continue
        lane = (e["pid"], e["tid"])
        assert lane in lane_names, e  # named before its first slice
        if e["ph"] == "B":
            if not stacks[lane]:
                assert e["name"].startswith("request ")
                assert not slices[lane] or slices[lane][-1][2] <= e["ts"]  # one request at a time
            stacks[lane].append((e["name"], e["ts"]))
        else:
            name, begin = stacks[lane].pop()
            assert name == e["name"] and begin <= e["ts"]
            slices[lane].append((name, begin, e["ts"], len(stacks[lane])))
    assert all(not s for s in stacks.values())
    assert all(name == f"requests {tid - 2}" for (_, tid), name in lane_names.items())
    return slices, lane_names


def rid(name):
    return int(name.split()[1])


def timeline_of(tmp_path, *sets):
    """Runs the Fig. 2 vLLM point with `sets` and output.timeline on; returns the folder."""
    out = tmp_path / "out"
    args = ["run", FIG2, "--out", str(out), "-q", "--set", "sweep.cases=[{label: vllm}]",
            "--set", "output.timeline=true"]
    for s in sets:
        args += ["--set", s]
    run_pagesim(*args)
    return out / "00-vllm"


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    return timeline_of(tmp_path_factory.mktemp("small"), "workload.duration_s=20", "measure.window_start_s=0")


@pytest.fixture(scope="module")
def fig2(tmp_path_factory):
    return timeline_of(tmp_path_factory.mktemp("fig2"))


def check_structure(folder):
    """Checks the trace's structure; returns (events, iterations.csv row count, requests)."""
    with open(folder / "timeline.json") as f:
        doc = json.load(f)
    events = doc["traceEvents"]
    names = {e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "process_name"}
    assert names == {"replica 0"}
    # One complete slice per iteration (stride 1, far below the default cap), in time order,
    # never overlapping on the iterations thread.
    slices = [e for e in events if e["ph"] == "X"]
    with open(folder / "iterations.csv") as f:
        rows = sum(1 for _ in f) - 1
    assert len(slices) == rows
    for a, b in zip(slices, slices[1:]):
        assert a["ts"] + a["dur"] <= b["ts"] + 1e-3
        assert b["args"]["index"] == a["args"]["index"] + 1
    assert all(set(e["args"]) == {"index", "batch_requests", "batch_seqs", "prefill_tokens", "decode_tokens",
                                  "duration_ms"} for e in slices)
    counters = collections.defaultdict(list)
    for e in events:
        if e["ph"] == "C":
            counters[e["name"]].append(e)
    assert set(counters) == {"memory", "queues"}
    assert len(counters["memory"]) == rows and len(counters["queues"]) == rows
    assert all(list(e["args"]) == CLASSES for e in counters["memory"])
    # Each request: one outer slice from arrival to finish on a lane of the replica's process,
    # its phases back to back inside; lanes are reused (far fewer lanes than requests).
    assert not [e for e in events if e["ph"] in "be"]  # no async tracks, one per request
    slices, lanes = request_slices(events)
    requests = {}
    for ss in slices.values():
        phases = []  # of the request open on the lane, in order
        for n, b, e, depth in ss:
            if depth == 1:
                assert n in PHASES
                phases.append((b, e))
                continue
            requests[rid(n)] = (n, b, e)
            assert phases[0][0] == b and phases[-1][1] == e
            assert all(x[1] == y[0] for x, y in zip(phases, phases[1:]))  # back to back
            phases = []
    with open(folder / "requests.csv") as f:
        finished = sum(1 for _ in f) - 1
    assert len(requests) == finished
    assert 1 <= len(lanes) < len(requests)
    return events, rows, requests


def test_small_run_timeline_structure(small):
    check_structure(small)


def test_fig2_vllm_timeline_structure(fig2):
    events, _, _ = check_structure(fig2)
    # Fig. 2 is an overload run (DESIGN.md): requests wait, and some are preempted.
    names = {e["name"] for e in events if e["ph"] == "B"}
    assert {"queued", "prefill", "decode", "preempted"} <= names


def test_resolved_config_keeps_only_the_keys_set(small):
    text = (small / "config.resolved.yaml").read_text()
    assert "timeline: true" in text and "timeline_stride" not in text


def test_stride_bounds_the_file(tmp_path, small):
    folder = timeline_of(tmp_path, "workload.duration_s=20", "measure.window_start_s=0",
                         "output.timeline_stride=10")
    with open(folder / "timeline.json") as f:
        strided = [e for e in json.load(f)["traceEvents"] if e["ph"] == "X"]
    with open(small / "timeline.json") as f:
        every = [e for e in json.load(f)["traceEvents"] if e["ph"] == "X"]
    assert [e["args"]["index"] for e in strided] == [e["args"]["index"] for e in every][::10]


@contextlib.contextmanager
def perfetto_trace_processor(trace, backend):
    """Perfetto's trace processor with `trace` loaded, through the perfetto package's client.
    "wasm": the WebAssembly build behind perfetto_wasm's local server; skips when the project
    venv's packages are missing, unless $PAGESIM_REQUIRE_PERFETTO is set (.ci/test sets it, so CI
    cannot pass by skipping). "shell": trace_processor_shell ($PERFETTO_TRACE_PROCESSOR, else the
    copy .ci/venv fetched into perfetto's cache); skips saying how to provide it. Never downloads."""
    pytest.importorskip("perfetto", reason="the perfetto package (PyPI) is not installed in this interpreter; "
                                           "it comes with the project venv (python/requirements.txt)")
    from perfetto.trace_processor import TraceProcessor, TraceProcessorConfig
    if backend == "shell":
        path, why = perfetto_prebuilt.find()
        if path is None:
            pytest.skip(why)
        tp = TraceProcessor(trace=trace, config=TraceProcessorConfig(bin_path=path))
        try:
            yield tp
        finally:
            tp.close()
        return
    path, why = perfetto_wasm.find()
    if path is None:
        if os.environ.get("PAGESIM_REQUIRE_PERFETTO"):
            pytest.fail(why)
        pytest.skip(why)
    with perfetto_wasm.serve(path) as addr:
        tp = TraceProcessor(trace=trace, addr=addr)
        try:
            yield tp
        finally:
            tp.close()


@pytest.mark.parametrize("backend", ["wasm", "shell"])
def test_fig2_vllm_timeline_opens_in_perfetto(fig2, backend):
    events, rows, requests = check_structure(fig2)
    with perfetto_trace_processor(str(fig2 / "timeline.json"), backend) as tp:
        def query(sql):
            return list(tp.query(sql))

        assert [r.name for r in query("select name from process where name is not null")] == ["replica 0"]
        iterations = query("select count(*) as n from slice where name = 'iteration'")
        assert iterations[0].n == rows
        # Perfetto names a JSON counter's track "<event name> <arg key>" ("memory token_states").
        tracks = {r.name for r in query("select distinct t.name as name from counter c join track t "
                                        "on c.track_id = t.id")}
        for series in [f"memory {c}" for c in CLASSES] + [f"queues {q}" for q in ("waiting", "running", "swapped")]:
            assert series in tracks, (series, sorted(tracks))
        outer = query("select count(*) as n from slice where name like 'request %' and depth = 0")
        assert outer[0].n == len(requests)
        phase_names = {r.name for r in query("select distinct name from slice where depth = 1")}
        assert {"queued", "prefill", "decode", "preempted"} <= phase_names <= PHASES
        phases = query("select count(*) as n from slice where depth = 1")
        assert phases[0].n == sum(1 for e in events if e["ph"] == "B" and e["name"] in PHASES)
        # Every request slice is on a thread track of replica 0's process: its lanes, not a
        # global track per request.
        lanes = query("select p.name as process, t.name as thread, count(*) as n from slice s "
                      "join thread_track tt on s.track_id = tt.id join thread t using(utid) "
                      "join process p using(upid) where s.name like 'request %' group by t.tid")
        assert {r.process for r in lanes} == {"replica 0"}
        assert sum(r.n for r in lanes) == len(requests)
        assert len(lanes) == sum(1 for e in events if e["ph"] == "M" and e["name"] == "thread_name"
                                 and e["args"]["name"].startswith("requests "))
        assert all(r.thread.startswith("requests ") for r in lanes)
        errors = list(tp.query("select name, value from stats where severity in ('error', 'data_loss') "
                               "and value > 0"))
        assert not errors, [(e.name, e.value) for e in errors]  # e.g. misplaced_end_event


MOONCAKE_10X3M = os.path.join(REPO, "experiments", "cluster", "mooncake_10x3m.yaml")


def test_two_replicas_with_prefix_caches(tmp_path):
    """One process per replica with its own iteration slices and its own memory, queues and
    prefix counter tracks; each request's async slice on one replica; the prefix counters'
    last samples add up to summary.json's prefix_cache totals."""
    out = tmp_path / "out"
    run_pagesim("run", MOONCAKE_10X3M, "--out", str(out), "-q", "--set", "workload.max_requests=200",
                "--set", "replicas.count=2", "--set", "kv.slots=131072", "--set", "output.timeline=true",
                "--set", "output.iterations_stride=1", "--set", "output.requests_csv=true")
    with open(out / "timeline.json") as f:
        events = json.load(f)["traceEvents"]
    names = {e["pid"]: e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "process_name"}
    assert names == {1: "replica 0", 2: "replica 1"}
    with open(out / "iterations.csv") as f:
        rows = collections.Counter(int(line.split(",", 1)[0]) for line in list(f)[1:])
    summary = json.loads((out / "summary.json").read_text())
    last_prefix = {}
    for pid in names:
        slices = [e for e in events if e["ph"] == "X" and e["pid"] == pid]
        assert len(slices) == rows[pid - 1] > 0
        assert [e["args"]["index"] for e in slices] == list(range(len(slices)))
        for series in ("memory", "queues", "prefix"):
            assert sum(1 for e in events if e["ph"] == "C" and e["pid"] == pid and e["name"] == series) == len(slices)
        prefix = [e["args"] for e in events if e["ph"] == "C" and e["pid"] == pid and e["name"] == "prefix"]
        for a, b in zip(prefix, prefix[1:]):
            assert a["prompt_tokens"] <= b["prompt_tokens"] and a["hit_tokens"] <= b["hit_tokens"]
        assert all(p["hit_tokens"] <= p["prompt_tokens"] for p in prefix)
        last_prefix[pid] = prefix[-1]
    assert sum(p["prompt_tokens"] for p in last_prefix.values()) == summary["prefix_cache"]["prompt_tokens"]
    assert sum(p["hit_tokens"] for p in last_prefix.values()) == summary["prefix_cache"]["hit_tokens"] > 0
    outer = collections.defaultdict(set)
    slices, _ = request_slices(events)
    for (pid, _), ss in slices.items():
        for name, _, _, depth in ss:
            if depth == 0:
                outer[rid(name)].add(pid)
    assert all(len(pids) == 1 for pids in outer.values()) and {p for s in outer.values() for p in s} == {1, 2}
    with open(out / "requests.csv") as f:
        assert len(outer) == sum(1 for _ in f) - 1


DISAGG_AZURE = os.path.join(REPO, "experiments", "cluster", "disagg_azure.yaml")


def test_disaggregated_requests_move_to_their_decode_replica(tmp_path):
    """Two prefill and two decode replicas: a handed-off request's slice on its prefill replica
    holds queued, prefill (ending at its first token, requests.csv's first_token_s), then
    transfer_queued (when not empty) and kv_transfer; a second slice on its decode replica's process starts at
    the transfer's end, in decode, and ends at its finish. In Perfetto each slice is on a
    lane (thread) of its own replica's process."""
    out = tmp_path / "out"
    run_pagesim("run", DISAGG_AZURE, "--out", str(out), "-q", "--set", "workload.max_requests=60",
                "--set", "sweep.workload.trace.time_scale=[1]", "--set", "replicas.disaggregated.prefill=2",
                "--set", "replicas.disaggregated.transfer_gbps=200",
                "--set", "replicas.disaggregated.transfer_latency_us=20", "--set", "output.timeline=true",
                "--set", "output.requests_csv=true")
    (folder,) = [p for p in out.iterdir() if p.is_dir()]
    with open(folder / "timeline.json") as f:
        events = json.load(f)["traceEvents"]
    with open(folder / "requests.csv") as f:
        rows = list(csv.DictReader(f))
    slices = collections.defaultdict(list)  # (request, pid) -> [(name, begin, end)], by end
    for (pid, _), ss in request_slices(events)[0].items():
        current = []
        for name, begin, end, depth in ss:
            current.append((name, begin, end))
            if depth == 0:
                slices[(rid(name), pid)] += current
                current = []
    moved = 0
    for row in rows:
        i = int(row["id"])
        parts = sorted((pid, s) for (r, pid), s in slices.items() if r == i)
        first_token_us = float(row["first_token_s"]) * 1e6
        if len(parts) == 1:  # finished by its prefill (one output token): never handed off
            continue
        moved += 1
        (p, on_prefill), (d, on_decode) = parts
        assert p in (1, 2) and d in (3, 4)  # replicas 0-1 prefill, 2-3 decode
        names = [n for n, _, _ in on_prefill]
        # A phase that lasts no time has no slice (queued on arrival, transfer_queued when a
        # decode replica has room at once).
        assert names[0] in ("queued", "prefill") and names[-2:] == ["kv_transfer", f"request {i}"]
        if names[-3] == "transfer_queued":
            names.pop(-3)
        assert set(names[:-2]) <= {"queued", "prefill", "preempted"}
        prefill_end = next(end for n, _, end in reversed(on_prefill) if n == "prefill")
        assert abs(prefill_end - first_token_us) <= 1e-3
        phases = on_prefill[:-1] + on_decode[:-1]
        assert all(abs(a[2] - b[1]) <= 1e-3 for a, b in zip(phases, phases[1:])), phases  # back to back
        assert on_decode[0][0] == "decode" and on_decode[0][1] == on_prefill[-1][2]  # at the transfer's end
        assert on_decode[-1][0] == f"request {i}"
        assert abs(on_decode[-1][2] - float(row["finish_s"]) * 1e6) <= 1e-3
        assert set(n for n, _, _ in on_decode[:-1]) <= PHASES
    assert moved > 0
    with perfetto_trace_processor(str(folder / "timeline.json"), "wasm") as tp:
        rows = list(tp.query("select s.name as name, p.name as process from slice s "
                             "join thread_track tt on s.track_id = tt.id join thread t using(utid) "
                             "join process p using(upid) where t.tid >= 2"))
        by_phase = collections.defaultdict(set)
        for r in rows:
            by_phase[r.name].add(r.process)
        assert by_phase["kv_transfer"] and by_phase["kv_transfer"] <= {"replica 0", "replica 1"}
        assert by_phase["transfer_queued"] <= {"replica 0", "replica 1"}
        assert by_phase["decode"] and by_phase["decode"] <= {"replica 2", "replica 3"}
        assert len(rows) == sum(len(s) for s in slices.values())  # every slice on a replica's lane
        errors = list(tp.query("select name, value from stats where severity in ('error', 'data_loss') "
                               "and value > 0"))
        assert not errors, [(e.name, e.value) for e in errors]
