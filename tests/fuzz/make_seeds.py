#!/usr/bin/env python3
"""Writes the seed corpus of the fuzz harnesses into tests/fuzz/corpus/<harness>/ (run from
anywhere; rerun after adding test cases). Seeds come from three places:

- the string literals of the GoogleTest suites (the malformed inputs of tests/traces/*_test.cpp
  and the YAML of tests/sim/config/*_test.cpp and tests/sim/experiment/), adjacent literals
  joined as C++ joins them;
- the fixtures in tests/traces/data and the heads (first lines) of the bundled traces in
  traces/data, which are too big to commit twice;
- the experiment files in experiments/, plus --set assignments found in the tests.

Seeds are named by content hash, so reruns do not duplicate them. Crash reproducers the
harnesses found are committed next to them under their own names (regressions, kept).
"""
import hashlib
import pathlib
import re

ROOT = pathlib.Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "fuzz" / "corpus"
MAX_SEED = 4096  # bytes; the runs' -max_len is larger, seeds stay small

LITERAL = r'"(?:[^"\\\n]|\\.)*"'
GROUP = re.compile(r'(?<![A-Za-z0-9_)])((?:' + LITERAL + r'\s*)+)')
ESCAPES = {"n": "\n", "r": "\r", "t": "\t", "\\": "\\", '"': '"', "'": "'", "0": "\0"}


def decode(group):
    """The bytes of a run of adjacent C++ string literals."""
    out = bytearray()
    for lit in re.findall(LITERAL, group):
        body, i = lit[1:-1], 0
        while i < len(body):
            c = body[i]
            if c != "\\":
                out += c.encode()
                i += 1
            elif body[i + 1] == "x":
                m = re.match(r"[0-9A-Fa-f]{1,2}", body[i + 2:])
                out.append(int(m.group(0), 16))
                i += 2 + len(m.group(0))
            else:
                out += ESCAPES.get(body[i + 1], body[i + 1]).encode()
                i += 2
    return bytes(out)


def literals(path):
    return [decode(m.group(1)) for m in GROUP.finditer(path.read_text())]


def head(path, lines):
    with open(path, "rb") as f:
        return b"".join(f.readline() for _ in range(lines))


def put(harness, data):
    if not data or len(data) > MAX_SEED:
        return
    d = CORPUS / harness
    d.mkdir(parents=True, exist_ok=True)
    (d / ("seed-" + hashlib.sha1(data).hexdigest()[:16])).write_bytes(data)


def csv_like(data, first_columns):
    first = data.split(b"\n", 1)[0]
    return b"," in first and any(c in first for c in first_columns) or data.strip() == b""


def main():
    t = ROOT / "tests" / "traces"
    readers = {
        "native_csv_reader": ([t / "native_csv_reader_test.cpp"], [b"arrival_s"], ["native_minimal.csv", "native_small.csv"], []),
        "vidur_csv_reader": ([t / "vidur_csv_reader_test.cpp"], [b"arrived_at"], ["vidur_small.csv"], []),
        "azure_csv_reader": ([t / "azure_csv_reader_test.cpp", t / "azure_timestamp_test.cpp"], [b"TIMESTAMP"],
                             ["azure_small.csv", "azure2024_small.csv"], ["azure2023_code.csv", "azure2023_conv.csv"]),
        "mooncake_reader": ([t / "mooncake_reader_test.cpp"], [b"{"], ["mooncake_small.jsonl"],
                            ["mooncake_conversation_trace.jsonl"]),
        "lengths_csv_reader": ([t / "lengths_csv_reader_test.cpp"], [b"tokens", b"length", b"num_"],
                               ["lengths_small.csv", "lengths_vidur_style.csv"],
                               ["sharegpt_opt_lengths.csv", "lengths_sharegpt_8k_filtered_stats_llama2_tokenizer.csv"]),
    }
    every = []
    for harness, (tests, markers, fixtures, bundled) in readers.items():
        for test in tests:
            for data in literals(test):
                if harness == "mooncake_reader":
                    ok = data.lstrip(b"\xef\xbb\xbf \t").startswith(b"{") or b"\n{" in data
                else:
                    ok = csv_like(data, markers) or b"\n" in data
                if ok:
                    put(harness, data)
                    every.append(data)
        for name in fixtures:
            data = (t / "data" / name).read_bytes()
            put(harness, data)
            every.append(data)
        for name in bundled:
            data = head(ROOT / "traces" / "data" / name, 12)
            put(harness, data)
            every.append(data)
    for data in every:  # detection sees every format
        put("trace_format", data)
    for name in ["trace_format_test.cpp", "make_source_test.cpp", "streaming_test.cpp"]:
        for data in literals(t / name):
            if b"\n" in data:
                put("trace_format", data)

    yaml_tests = sorted((ROOT / "tests" / "sim" / "config").glob("*_test.cpp")) + \
        sorted((ROOT / "tests" / "sim" / "experiment").glob("*_test.cpp"))
    yamls = []
    for test in yaml_tests:
        for data in literals(test):
            if b":" in data and (b"\n" in data or b"{" in data):
                yamls.append(data)
    for f in sorted((ROOT / "experiments").rglob("*.yaml")):
        yamls.append(f.read_bytes())
    sets = set()
    for test in yaml_tests:
        for m in re.finditer(r'apply_override\(\s*\w+,\s*(' + LITERAL + r')\s*\)', test.read_text()):
            sets.add(decode(m.group(1)))
    base = b"name: x\nworkload:\n  kind: synthetic\n  max_requests: 4\n"
    for harness in ["experiment_config", "build_run"]:
        for data in yamls:
            put(harness, data)
        for s in sorted(sets):
            put(harness, base + b"\0" + s + b"\n")


if __name__ == "__main__":
    main()
