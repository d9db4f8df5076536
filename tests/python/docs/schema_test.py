"""docs/experiment.schema.json (what `pagesim schema` prints, kept current by
tests/sim/config/config_schema_test.cpp) accepts every bundled experiment file and refuses
what the reader refuses: an unknown key, a name outside a choice, a value of the wrong type."""
import glob
import json
import os

import pytest
import yaml

jsonschema = pytest.importorskip("jsonschema")  # in the project's .venv (python/requirements.txt)

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir, os.pardir))
# Every experiment file; calibration files (sim/config/calibration.h: `values` and `fit`) and
# engine parity's divergences.yaml (pagesim/reports/engine_parity/expectations.py) are other
# formats.
EXPERIMENTS = sorted([p for p in glob.glob(os.path.join(REPO, "experiments", "**", "*.yaml"), recursive=True)
                      if os.sep + "calibration" + os.sep not in p
                      and os.path.basename(p) != "divergences.yaml"]
                     # and the resolved configs of the result folders kept as test fixtures
                     + glob.glob(os.path.join(REPO, "tests", "**", "config.resolved.yaml"), recursive=True))


@pytest.fixture(scope="module")
def validator():
    with open(os.path.join(REPO, "docs", "experiment.schema.json")) as f:
        schema = json.load(f)
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def test_there_are_bundled_experiments():
    assert len(EXPERIMENTS) > 20


@pytest.mark.parametrize("path", EXPERIMENTS, ids=lambda p: os.path.relpath(p, REPO))
def test_every_bundled_experiment_is_valid(validator, path):
    with open(path) as f:
        doc = yaml.safe_load(f)
    errors = [f"{'.'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(doc)]
    assert not errors, "\n".join(errors)


@pytest.mark.parametrize("text, where", [
    ("allocator: {kind: paged, blok_size: 16}", "allocator"),
    ("scheduler: {kind: vllm-v2}", "scheduler.kind"),
    ("allocator: {block_size: sixteen}", "allocator.block_size"),
    ("colour: red", ""),
    ("model: {layers: 2, heads: 2, attention: full}", "model"),
    ("sweep: {allocator.blocksize: [16, 32]}", "sweep"),
    ("replicas: 0", "replicas"),
])
def test_bad_experiments_are_refused(validator, text, where):
    errors = list(validator.iter_errors(yaml.safe_load(text)))
    assert errors, text
    assert any(".".join(map(str, e.absolute_path)).startswith(where) for e in errors), [e.message for e in errors]


def test_custom_models_and_shorthands_are_valid(validator):
    for text in ["model: {hf_config: my-model/config.json}",
                 "model: {layers: 4, hidden: 512, heads: 8, kv_heads: 2, mla: {kv_lora_rank: 64}}",
                 "replicas: 4",
                 "sweep: {cases: [{label: a, model: llama-3-8b}], allocator.block_size: [16, 32]}"]:
        assert not list(validator.iter_errors(yaml.safe_load(text))), text


# The schema and the reader read scalars one way, JSON Schema's: a number with no fractional
# part is an integer (1.0, 2e4), a quoted scalar is a string, never a number or a boolean.
SCALARS = [
    ("seed: 1.0", True),
    ("kv: {slots: 2.0e+4}", True),  # YAML 1.1 (PyYAML) reads a bare 2e4 as a string
    ("replicas: 2.0", True),
    ("seed: 1.5", False),
    ("seed: '5'", False),
    ("kv: {slots: '20000'}", False),
    ("output: {requests_csv: 'yes'}", False),
    ("output: {requests_csv: true}", True),
]


@pytest.mark.parametrize("text, valid", SCALARS)
def test_the_schema_and_the_reader_agree_on_scalars(validator, tmp_path, text, valid):
    import subprocess
    import sys
    sys.path.insert(0, os.path.join(REPO, "tests", "python"))
    from pagesim_binary import pagesim_binary
    assert (not list(validator.iter_errors(yaml.safe_load(text)))) == valid, text
    path = tmp_path / "e.yaml"
    path.write_text("workload: {max_requests: 3}\n" + text + "\n")
    p = subprocess.run([pagesim_binary(), "run", str(path), "--out", str(tmp_path / "out"), "-q"],
                       capture_output=True, text=True)
    assert (p.returncode == 0) == valid, f"{text}: {p.stderr}"
    if not valid and "'" in text:
        assert "a quoted scalar is a string" in p.stderr, p.stderr
