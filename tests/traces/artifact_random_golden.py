#!/usr/bin/env python3
"""Prints the golden values of tests/traces/artifact_random_test.cpp.

Run with NumPy and CPython (the values committed came from NumPy 1.24.2, CPython 3.11.2):
    python3 tests/traces/artifact_random_golden.py
The calls are the ones the vLLM paper artifact's benchmark/trace.py makes.
"""
import csv
import random
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]


def main() -> None:
    for seed in (0, 1, 4):
        np.random.seed(seed)
        counts = np.random.poisson(lam=4.0 * (10 / 1000), size=90000)
        nz = [int(i) for i in np.flatnonzero(counts)[:8]]
        print(f"numpy seed {seed}: total {int(counts.sum())}, first non-zero quanta {nz}, "
              f"max {int(counts.max())}")
    np.random.seed(0)
    print("numpy seed 0 random_sample:", [float.hex(x) for x in np.random.random_sample(3)])
    np.random.seed(7)
    print("numpy seed 7 poisson(3.5):", [int(x) for x in np.random.poisson(3.5, size=10)])
    for seed in (0, 1, 2**40 + 5):
        random.seed(seed)
        print(f"cpython seed {seed} getrandbits(32):", [random.getrandbits(32) for _ in range(3)])
        random.seed(seed)
        rows = list(range(1000))
        random.shuffle(rows)
        print(f"cpython seed {seed} shuffle(range(1000))[:10]:", rows[:10],
              "sum of i*rows[i]:", sum(i * r for i, r in enumerate(rows)))

    # The whole of trace.py's generate_text_completion_requests for Fig. 2 (4 req/s, 900 s).
    with open(REPO / "traces/data/sharegpt_opt_lengths.csv") as f:
        table = [(int(r["input_tokens"]), int(r["output_tokens"])) for r in csv.DictReader(f)]
    random.seed(0)
    np.random.seed(0)
    counts = np.random.poisson(lam=4.0 * (10 / 1000), size=int(900 * (1000 / 10)))
    times = []
    for i, n in enumerate(counts):
        times += [i * (10 / 1000)] * n
    filtered = [(p, o) for p, o in table if p + o < 2048]
    data = []
    while len(data) < len(times):
        data += filtered
    data = data[:len(times)]
    random.shuffle(data)
    print("fig2 workload: requests", len(times), "first", [(t, p, o) for t, (p, o) in
          zip(times[:4], data[:4])], "sum prompt", sum(p for p, _ in data), "sum output",
          sum(o for _, o in data))


if __name__ == "__main__":
    main()
