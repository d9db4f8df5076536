# The heterogeneous-KV report generator on tiny hand-made inputs: the memory arithmetic
# against hand-computed values, the report's cells, and a missing input named.
import csv
import json
import os

import pytest

from pagesim.reports.heterogeneous_kv import __main__ as gen
from pagesim.reports.heterogeneous_kv import memory
from pagesim.reports.load import ResultsError


def group(kind, layers, kv_bytes, window=0, encoder=0, state=0):
    return {"kind": kind, "layers": layers, "kv_heads_per_gpu": 8, "head_dim": 128, "kv_bytes_per_token": kv_bytes,
            "window_tokens": window, "encoder_tokens": encoder, "state_bytes": state}


def model(name, max_seq_len, groups, tp=1, dtype="auto"):
    attending = sum(g["layers"] for g in groups if g["kind"] != "recurrent")
    widest = max(g["kv_bytes_per_token"] // g["layers"] for g in groups if g["kind"] != "recurrent")
    return {"model": name, "tensor_parallel": tp, "kv_dtype": dtype, "max_seq_len": max_seq_len,
            "kv_bytes_per_token_per_gpu": attending * widest, "groups_per_gpu": groups}


# Per layer and token 4096 B (2 · 8 heads · 128 · 2 B), as the real presets.
GEMMA2 = model("gemma-2-9b", 8192, [group("sliding_window", 21, 21 * 4096, window=4096), group("full", 21, 21 * 4096)])
MINISTRAL = model("ministral-8b", 131072, [group("full", 9, 9 * 4096), group("sliding_window", 27, 27 * 4096, 32768)])
MLLAMA = model("llama-3.2-11b-vision", 131072, [group("full", 32, 32 * 4096), group("cross_attention", 8, 8 * 4096, encoder=6404)])


def test_tokens_kept_per_kind():
    assert memory.tokens_kept(group("full", 1, 1), 100) == 100
    assert memory.tokens_kept(group("sliding_window", 1, 1, window=16), 100) == 16
    assert memory.tokens_kept(group("sliding_window", 1, 1, window=16), 10) == 10
    # Chunks of 16: position 99 is in chunk [96, 112), so 4 tokens; 96 tokens fill chunk 5.
    assert memory.tokens_kept(group("chunked_local", 1, 1, window=16), 100) == 4
    assert memory.tokens_kept(group("chunked_local", 1, 1, window=16), 96) == 16
    assert memory.tokens_kept(group("cross_attention", 1, 1, encoder=7), 100) == 7
    assert memory.tokens_kept(group("recurrent", 1, 0, state=9), 100) == 0
    with pytest.raises(ValueError):
        memory.tokens_kept(group("diagonal", 1, 1), 1)


def test_the_rfc_numbers_by_hand():
    # Gemma-2 at 8192: half the layers need 4096 of 8192 tokens: 25%.
    assert memory.uniform_waste_pct(GEMMA2, 8192) == pytest.approx(25.0)
    assert memory.uniform_waste_pct(GEMMA2, 4096) == 0.0
    # Ministral at 128k: 27/36 of the layers need 32k of 128k: 0.75 · 0.75 = 56.25%.
    assert memory.uniform_waste_pct(MINISTRAL, 131072) == pytest.approx(56.25)
    # mllama: (8 n + 32 · 6404) / (40 (n + 6404)) wasted; 80% as n -> 0.
    n = 43
    assert memory.uniform_waste_pct(MLLAMA, n) == pytest.approx(100 * (8 * n + 32 * 6404) / (40 * (n + 6404)))
    assert memory.decoder_tokens_for_waste(MLLAMA, 79.605) == 43
    # Gemma-2's waste grows with n (25% at its context), so no length keeps it under 10%.
    assert memory.decoder_tokens_for_waste(GEMMA2, 10.0) is None


def test_vattention_worst_case():
    yi6b = model("yi-6b", 4096, [group("full", 32, 32 * 2 * 4 * 128 * 2)])  # 4 KV heads: 1 KiB per layer's K
    assert memory.vattention_tokens_per_page(yi6b, 64 * 1024) == {"full": 64}
    assert memory.vattention_worst_waste_bytes(yi6b, 64 * 1024) == 4 * 2**20  # the paper's 4 MB
    tp2 = dict(yi6b, tensor_parallel=2)
    assert memory.vattention_worst_waste_bytes(tp2, 64 * 1024) == 8 * 2**20
    jamba = model("jamba-v0.1", 262144, [group("recurrent", 28, 0, state=100), group("full", 4, 4 * 4096)])
    assert memory.vattention_worst_waste_bytes(jamba, 64 * 1024) == 2 * 4 * 64 * 1024
    assert memory.recurrent_state_bytes(jamba) == 100


def write_results(root, with_mllama=True):
    os.makedirs(os.path.join(root, "models"))
    docs = [GEMMA2, MINISTRAL] + ([MLLAMA] if with_mllama else [])
    docs.append(model("llama-3-8b", 8192, [group("full", 32, 131072)]))
    docs.append(model("llama-3-8b", 8192, [group("full", 32, 65536)], dtype="fp8"))
    for d in docs:
        with open(os.path.join(root, "models", f"{d['model']}.tp{d['tensor_parallel']}.{d['kv_dtype']}.json"), "w") as f:
            json.dump(d, f)
    sweep = os.path.join(root, "kv_dtype")
    os.makedirs(sweep)
    cols = ["point", "label", "kv_dtype", "mean_batched_requests", "throughput_rps", "throughput_tokens_per_s",
            "tpot_s.p50", "memory_pct.token_states", "memory_pct.free", "preemptions"]
    rows = [["00-kv_dtype=auto", "kv_dtype=auto", "auto", "100", "2.5", "1000", "0.05", "97", "2", "3"],
            ["01-kv_dtype=fp8", "kv_dtype=fp8", "fp8", "200", "3.0", "1200", "0.08", "96", "3", "0"]]
    with open(os.path.join(sweep, "sweep.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(cols)
        w.writerows(rows)
    for point, slots in (("00-kv_dtype=auto", 1000), ("01-kv_dtype=fp8", 2000)):
        os.makedirs(os.path.join(sweep, point))
        with open(os.path.join(sweep, point, "summary.json"), "w") as f:
            json.dump({"kv_slots": slots}, f)


ALLOC_COLS = ["point", "label", "model", "gpu", "allocator.kind", "memory_pct.token_states", "memory_pct.rounding",
              "memory_pct.free", "layer_classes.memory_pct.out_of_window", "mean_batched_requests",
              "throughput_tokens_per_s", "preemptions"]


def write_allocator_sweeps(root, skip=None):
    """Part (b): every model x allocator; uniform's token share 50%, jenga's 90% and 1.5x its
    throughput on every model."""
    values = {"uniform": ("50", "0.5", "1", "48.5", "10", "1000", "40"),
              "hybrid": ("80", "9", "2", "9", "15", "1400", "20"),
              "jenga": ("90", "0.5", "2", "7.5", "17", "1500", "10"),
              "vattention": ("45", "8", "1", "46", "9", "950", "30")}
    for folder in ("allocators_sharegpt", "allocators_azure"):
        os.makedirs(os.path.join(root, folder))
        with open(os.path.join(root, folder, "sweep.csv"), "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(ALLOC_COLS)
            for m in ("gemma-2-9b", "gemma-3-27b", "ministral-8b", "gpt-oss-120b"):
                for a, v in values.items():
                    if (m, a) == skip:
                        continue
                    w.writerow([f"{m}_{a}", f"{m},{a}", m, "h200", a] + list(v))


def test_report_cells(tmp_path):
    write_results(str(tmp_path / "res"))
    write_allocator_sweeps(str(tmp_path / "res"))
    path = gen.write_report(str(tmp_path / "res"), str(tmp_path / "dest"), "abc123", "2026-01-01")
    text = open(path).read()
    assert "at commit abc123 on 2026-01-01" in text
    assert "| gemma-2-9b | 21 sliding_window, 21 full | 8192 | 25.0% | 25.00% |" in text
    assert "| ministral-8b | 9 full, 27 sliding_window | 131072 | 56.25% | 56.25% |" in text
    assert "| llama-3.2-11b-vision | 32 full, 8 cross_attention | 43 | 79.6% | 79.60% |" in text
    assert "## (b) uniform vs hybrid vs jenga vs vattention" in text
    assert "| gemma-3-27b | h200 | jenga | 90.0 | 7.5 | 0.5 | 2.0 | 17.0 | 1500 | 1.50 | 10 |" in text
    assert "| gemma-3-27b | h200 | vattention | 45.0 | 46.0 | 8.0 | 1.0 | 9.0 | 950 | 0.95 | 30 |" in text
    assert "| Azure conversation trace | gpt-oss-120b | +40.0 | 1.50× |" in text
    assert "throughput up to 1.50× (1.50× on average over these 8 runs)" in text
    assert "| llama-3-8b | 1 | 32 / 64 / 128 / 1024 | 4 MiB | 8 MiB | 16 MiB | 128 MiB |" in text
    assert "| auto | 131072 | 1000 | 1.00 | 100.0 | 2.500 | 1000 | 50.0 | 97.0 | 2.0 | 3 |" in text
    assert "| fp8 | 65536 | 2000 | 2.00 | 200.0 |" in text


def test_missing_model_is_named(tmp_path):
    write_results(str(tmp_path / "res"), with_mllama=False)
    write_allocator_sweeps(str(tmp_path / "res"))
    with pytest.raises(ResultsError, match="llama-3.2-11b-vision.tp1.auto.json is missing"):
        gen.write_report(str(tmp_path / "res"), str(tmp_path / "dest"), "x", "y")


def test_missing_allocator_point_is_named(tmp_path):
    write_results(str(tmp_path / "res"))
    write_allocator_sweeps(str(tmp_path / "res"), skip=("ministral-8b", "vattention"))
    with pytest.raises(ResultsError, match="no point for model ministral-8b, allocator.kind vattention"):
        gen.write_report(str(tmp_path / "res"), str(tmp_path / "dest"), "x", "y")
