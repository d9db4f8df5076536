"""Engine parity (experiments/engine_parity/): every committed recording of vLLM's and SGLang's
own schedulers against pagesim's decisions on the same scenario, step by step, with each
known divergence explained and bounded (divergences.yaml); the step record pagesim writes on
a scenario worked out by hand; and the record reader and the expectation checks on bad input."""
import gzip
import json
import os

import pytest

from pagesim.reports.engine_parity import __main__ as parity
from pagesim.reports.engine_parity import record as records
from pagesim.reports.engine_parity.compare import Comparison, Divergence, compare
from pagesim.reports.engine_parity.expectations import ExpectationError, check, read_expectations
from pagesim_binary import REPO, pagesim_binary

ROOT = os.path.join(REPO, "experiments", "engine_parity")


def test_every_recording_is_matched_or_its_divergence_explained_and_bounded(tmp_path):
    found = parity.recordings(ROOT)
    assert found, f"no recording under {ROOT}/recorded"
    engines = {records.read(p).header["engine_version"] for p in found if records.read(p).engine == "vllm"}
    assert len(engines) >= 2, f"recordings of at least two vLLM versions expected, found {sorted(engines)}"
    results = parity.compare_all(pagesim_binary(), ROOT, str(tmp_path))
    failures = check(results, read_expectations(os.path.join(ROOT, "divergences.yaml")))
    assert not failures, "\n".join(failures)


SCENARIO = """name: by-hand
model: llama-2-7b
workload: {kind: trace, trace: {path: t.csv, hash_block_tokens: 4}}
kv: {slots: 24}
allocator: {kind: paged, block_size: 4, prefix_cache: true}
scheduler: {kind: vllm-v1, max_num_batched_tokens: 8, max_num_seqs: 8}
cost: {kind: constant, constant: {seconds_per_iteration: 1}}
"""


def steps_of(tmp_path, trace):
    (tmp_path / "t.csv").write_text(trace)
    (tmp_path / "s.yaml").write_text(SCENARIO)
    return parity.pagesim_steps(pagesim_binary(), str(tmp_path / "s.yaml"), str(tmp_path / "out"))


def test_step_record_of_a_scenario_worked_out_by_hand(tmp_path):
    # Blocks of 4, 6 blocks, budget 8. r0 (10 tokens, ids 1 2; 2 out) and r1 (the same first 8
    # tokens, 4 more; 1 out) at 0. Step 0: r0 takes the budget (8 of 10; 2 blocks), r1 waits.
    # Step 1: r0's last 2 (3 blocks, first token), then r1 is admitted hitting both of r0's
    # full prompt blocks (8 cached tokens) and computes 4 of its 12 with the 6 left... its
    # chunk is the budget left, 6, capped at what it lacks (4): 3 blocks, 1 new. r1 finishes.
    # Step 2: r0 decodes its second token (11 tokens, still 3 blocks) and finishes.
    rec = steps_of(tmp_path, "arrival_s,prompt_tokens,output_tokens,hash_ids\n0,10,2,1 2 3\n0,12,1,1 2 4\n")
    assert rec.header["engine"] == "pagesim" and rec.pool_blocks() == 6 and rec.header["block_size"] == 4
    s = rec.steps
    assert [x["t"] for x in s] == [0, 1, 2]
    assert s[0]["scheduled"] == [[0, 8]] and s[0]["new"] == [[0, 0]] and s[0]["blocks"] == [[0, 2]]
    assert s[0]["free_blocks"] == 4 and s[0]["finished"] == [] and s[0]["preempted"] == []
    assert s[1]["scheduled"] == [[0, 2], [1, 4]] and s[1]["new"] == [[1, 8]]
    assert s[1]["blocks"] == [[0, 3], [1, 3]] and s[1]["free_blocks"] == 6 - 3 - 1
    assert s[1]["finished"] == [1]
    assert s[2]["scheduled"] == [[0, 1]] and s[2]["finished"] == [0] and s[2]["blocks"] == [[0, 3]]


def write_record(path, header, steps):
    with gzip.open(path, "wt") as fh:
        for obj in [header, *steps]:
            fh.write(json.dumps(obj) + "\n")


HEADER = {"format": "pagesim-engine-steps", "format_version": 1, "engine": "vllm", "engine_version": "0.15.1",
          "scenario": "x", "num_gpu_blocks": 7, "block_size": 4}
STEP = {"step": 0, "t": 0, "scheduled": [[0, 8]], "new": [[0, 0]], "preempted": [], "finished": [],
        "free_blocks": 4, "blocks": [[0, 2]]}


@pytest.mark.parametrize("header,step,message", [
    ({**HEADER, "format": "other"}, STEP, "header field 'format' is 'other'"),
    ({**HEADER, "format_version": 9}, STEP, "header field 'format_version' is 9"),
    ({**HEADER, "engine": "trt"}, STEP, "header field 'engine' is 'trt'"),
    ({k: v for k, v in HEADER.items() if k != "scenario"}, STEP, "header field 'scenario' is missing"),
    ({k: v for k, v in HEADER.items() if k != "num_gpu_blocks"}, STEP, "header field 'num_gpu_blocks'"),
    (HEADER, {k: v for k, v in STEP.items() if k != "free_blocks"}, ":2: field 'free_blocks' is missing"),
    (HEADER, {**STEP, "blocks": [[1, 2], [0, 2]]}, ":2: field 'blocks': expected entries sorted by request id"),
    (HEADER, {**STEP, "preempted": ["a"]}, ":2: field 'preempted': expected request ids"),
    (HEADER, {**STEP, "step": 3}, ":2: field 'step' is 3, expected 0"),
    (HEADER, {**STEP, "extra": 1}, ":2: unknown field 'extra'"),
])
def test_a_bad_record_is_refused_naming_the_file_and_field(tmp_path, header, step, message):
    path = str(tmp_path / "r.jsonl.gz")
    write_record(path, header, [step])
    with pytest.raises(records.RecordError, match=".*r.jsonl.gz.*"):
        records.read(path)
    with pytest.raises(records.RecordError) as e:
        records.read(path)
    assert message in str(e.value)


def comparison(first=None, ours=None, theirs=None):
    c = Comparison("x", "vllm", "0.15.1", 10, 10, 10 if first is None else 9, first)
    c.metrics_ours = ours or {"steps": 10, "preemptions": 2}
    c.metrics_theirs = theirs or {"steps": 10, "preemptions": 2}
    return c


def expectations(tmp_path, text):
    p = tmp_path / "divergences.yaml"
    p.write_text(text)
    return read_expectations(str(p))


ENTRY = """- {engine: vllm, engine_version: 0.15.1, scenario: x, first_step: 4, cause: why,
   bounds: {preemptions: 0.5}}
"""


def test_expectations_fail_unexplained_moved_unbounded_and_stale_divergences(tmp_path):
    e = expectations(tmp_path, ENTRY)
    d = Divergence(4, ["preempted"], {"preempted": []}, {"preempted": [1]})
    assert check([comparison(d, {"steps": 10, "preemptions": 2}, {"steps": 10, "preemptions": 3})], e) == []
    assert "not explained" in check([comparison(d)], {})[0]
    assert "divergences.yaml says 4" in check([comparison(Divergence(5, ["t"], {}, {}))], e)[0]
    over = check([comparison(d, {"steps": 10, "preemptions": 2}, {"steps": 10, "preemptions": 5})], e)
    assert len(over) == 1 and "preemptions differs by -60.00%" in over[0]
    assert "steps differs" in check([comparison(d, {"steps": 11, "preemptions": 2})], e)[0]
    assert "remove the stale entry" in check([comparison()], e)[0]
    assert "has no recording" in check([], e)[0]


@pytest.mark.parametrize("text,message", [
    ("- {engine: vllm}\n", "key 'engine_version' is missing"),
    (ENTRY.replace("bounds: {preemptions: 0.5}", "bounds: {latency: 0.5}"), "unknown metric 'latency'"),
    (ENTRY.replace("first_step: 4", "first_step: -1"), "key 'first_step' is -1"),
    (ENTRY.replace("cause: why", "cause: why, note: x"), "unknown key 'note'"),
    ("{a: 1}\n", "expected a list of entries"),
])
def test_bad_expectations_are_refused_naming_the_entry_and_key(tmp_path, text, message):
    with pytest.raises(ExpectationError) as e:
        expectations(tmp_path, text)
    assert "divergences.yaml" in str(e.value) and message in str(e.value)


def test_compare_names_the_first_divergent_step_and_its_fields(tmp_path):
    a = str(tmp_path / "a.jsonl.gz")
    b = str(tmp_path / "b.jsonl.gz")
    write_record(a, {**HEADER, "engine": "pagesim", "pool_blocks": 6}, [STEP, {**STEP, "step": 1, "t": 1}])
    write_record(b, HEADER, [STEP, {**STEP, "step": 1, "t": 1, "free_blocks": 3}])
    c = compare(records.read(a), records.read(b))
    assert c.identical == 1 and c.first.step == 1 and c.first.fields == ["free_blocks"]
    assert c.first.ours == {"free_blocks": 4} and c.first.theirs == {"free_blocks": 3}
    assert c.metric_differences()["mean_free_blocks"] == pytest.approx(4 / 3.5 - 1)


def test_a_recording_without_its_scenario_or_of_another_pool_is_refused_naming_both(tmp_path):
    root = tmp_path / "parity"
    (root / "recorded" / "0.15.1").mkdir(parents=True)
    (root / "scenarios").mkdir()
    write_record(str(root / "recorded" / "0.15.1" / "x.jsonl.gz"), HEADER, [STEP])
    with pytest.raises(parity.ParityError, match=r"x\.jsonl\.gz: header field 'scenario' is 'x', but .*x\.yaml does not"):
        parity.compare_all(pagesim_binary(), str(root), str(tmp_path / "out"))
    (root / "scenarios" / "t.csv").write_text("arrival_s,prompt_tokens,output_tokens\n0,10,2\n")
    (root / "scenarios" / "x.yaml").write_text(
        SCENARIO.replace("path: t.csv, hash_block_tokens: 4", "path: t.csv").replace("slots: 24", "slots: 32"))
    with pytest.raises(parity.ParityError, match=r"recorded pool is 6 blocks of 4 tokens.*pagesim's run .* has 8 of 4"):
        parity.compare_all(pagesim_binary(), str(root), str(tmp_path / "out"))


def test_a_scenario_pagesim_cannot_run_is_refused_with_pagesims_reason(tmp_path):
    root = tmp_path / "parity"
    (root / "recorded" / "0.15.1").mkdir(parents=True)
    (root / "scenarios").mkdir()
    write_record(str(root / "recorded" / "0.15.1" / "x.jsonl.gz"), HEADER, [STEP])
    (root / "scenarios" / "x.yaml").write_text("name: x\nscheduler: {kind: vllm-v1, long_prefill_token_threshold: -3}\n")
    with pytest.raises(parity.ParityError, match=r"x\.yaml.*scheduler\.long_prefill_token_threshold"):
        parity.compare_all(pagesim_binary(), str(root), str(tmp_path / "out"))
