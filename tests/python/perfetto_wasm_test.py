"""perfetto_wasm.py, the WebAssembly trace processor behind the perfetto package's HTTP client:
a hand-written Chrome trace comes back as the slices, counters and process it describes, and a
bad query raises the trace processor's own error."""
import json
import os

import pytest

import perfetto_wasm


@pytest.fixture(scope="module")
def trace_processor(tmp_path_factory):
    path, why = perfetto_wasm.find()
    if path is None:
        if os.environ.get("PAGESIM_REQUIRE_PERFETTO"):
            pytest.fail(why)
        pytest.skip(why)
    from perfetto.trace_processor import TraceProcessor
    trace = tmp_path_factory.mktemp("wasm") / "trace.json"
    events = [
        {"ph": "M", "name": "process_name", "pid": 7, "args": {"name": "replica 0"}},
        {"ph": "X", "name": "iteration", "pid": 7, "tid": 1, "ts": 0, "dur": 25, "args": {"batch": 3}},
        {"ph": "X", "name": "iteration", "pid": 7, "tid": 1, "ts": 40, "dur": 10, "args": {"batch": 1}},
        {"ph": "C", "name": "memory", "pid": 7, "ts": 0, "args": {"free": 100}},
        {"ph": "C", "name": "memory", "pid": 7, "ts": 40, "args": {"free": 60}},
        {"ph": "b", "cat": "request", "name": "request 1", "id": 1, "pid": 7, "ts": 5},
        {"ph": "e", "cat": "request", "name": "request 1", "id": 1, "pid": 7, "ts": 45},
    ]
    trace.write_text(json.dumps({"traceEvents": events}))
    with perfetto_wasm.serve(path) as addr:
        tp = TraceProcessor(trace=str(trace), addr=addr)
        try:
            yield tp
        finally:
            tp.close()


def test_slices_counters_and_process(trace_processor):
    def query(sql):
        return [dict(vars(r)) for r in trace_processor.query(sql)]

    # Chrome trace timestamps are microseconds; the trace processor keeps nanoseconds.
    assert query("select ts, dur from slice where name = 'iteration' order by ts") == [
        {"ts": 0, "dur": 25000}, {"ts": 40000, "dur": 10000}]
    assert query("select ts, dur from slice where name = 'request 1'") == [{"ts": 5000, "dur": 40000}]
    assert query("select c.ts as ts, c.value as value from counter c join track t on c.track_id = t.id "
                 "where t.name = 'memory free' order by c.ts") == [
        {"ts": 0, "value": 100.0}, {"ts": 40000, "value": 60.0}]
    assert query("select pid, name from process where name is not null") == [{"pid": 7, "name": "replica 0"}]


def test_bad_query_raises_the_trace_processors_error(trace_processor):
    from perfetto.trace_processor import TraceProcessorException
    with pytest.raises(TraceProcessorException, match="no such column: nope"):
        trace_processor.query("select nope from slice")
