# Tests of python/operator_tables/import_aiconfigurator.py: the conversion of aiconfigurator's
# parquet frames into pagesim's operator tables (always), and that the committed tables under
# sim/cost/operator_tables are exactly what the importer writes from aiconfigurator's mirror
# (when the mirror is on this machine: PAGESIM_AICONFIGURATOR, default the workplace's path).
import filecmp
import importlib.util
import os
import re
import sys

import pandas as pd
import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), os.pardir, os.pardir, os.pardir))
TABLES = os.path.join(ROOT, "sim", "cost", "operator_tables")
MIRROR = os.environ.get("PAGESIM_AICONFIGURATOR", "/work/.mirror/ai-dynamo+aiconfigurator/repo")


def load_importer():
    path = os.path.join(ROOT, "python", "operator_tables", "import_aiconfigurator.py")
    spec = importlib.util.spec_from_file_location("import_aiconfigurator", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


imp = load_importer()


def table(name):
    return next(t for t in imp.TABLES if t.name == name)


def test_generation_attention_keeps_bf16_attention_and_adds_isl_to_step():
    frame = pd.DataFrame({
        "batch_size": [2, 1, 1, 1],
        "isl": [1, 1, 1, 1],
        "num_heads": [32, 32, 32, 32],
        "num_key_value_heads": [8, 8, 8, 8],
        "head_dim": [128, 128, 128, 128],
        "attn_dtype": ["bfloat16", "bfloat16", "bfloat16", "bfloat16"],
        "kv_cache_dtype": ["bfloat16", "bfloat16", "int8", "bfloat16"],
        "step": [7, 3, 3, 7],
        "latency": [0.0125, 0.011, 0.5, 0.0123456789],
    })
    text = imp.to_csv_text(table("generation_attention"), frame, ["note"])
    assert text == (
        "# note\n"
        "kv_dtype,head_dim,num_heads,num_kv_heads,batch,kv_tokens,latency_us\n"
        "bfloat16,128,32,8,1,4,11.0000\n"
        "bfloat16,128,32,8,1,8,12.3457\n"
        "bfloat16,128,32,8,2,8,12.5000\n"
    )


def test_mla_tables_drop_tp_keep_the_first_head_count_and_add_isl_to_step():
    frame = pd.DataFrame({
        "kernel_source": ["vllm_flashmla", "vllm_flashmla", "vllm_flashmla", "vllm_flash_attn_mla"],
        "mla_dtype": ["bfloat16"] * 4,
        "kv_cache_dtype": ["fp8", "fp8", "int4", "bfloat16"],
        "num_heads": [16, 16, 16, 16],
        "batch_size": [4, 4, 4, 4],
        "isl": [1, 1, 1, 1],
        "tp_size": [8, 4, 8, 8],  # 16 heads a GPU of 128 (tp 8) or of 64 (tp 4): the same key
        "step": [1023, 1023, 1023, 1023],
        "latency": [0.2, 0.3, 0.4, 0.25],
    })
    text = imp.to_csv_text(table("generation_mla"), frame, [])
    assert text == ("kv_dtype,num_heads,batch,kv_tokens,latency_us\n"
                    "bfloat16,16,4,1024,250.0000\n"
                    "fp8,16,4,1024,200.0000\n")
    context = frame.assign(step=0, isl=512)
    assert imp.to_csv_text(table("context_mla"), context, []).splitlines()[1] == "bfloat16,16,4,512,250.0000"
    with pytest.raises(ValueError, match="step 0"):
        imp.to_csv_text(table("context_mla"), frame, [])


def test_gemm_drops_block_fp8_and_keeps_the_first_of_a_repeated_key():
    frame = pd.DataFrame({
        "gemm_dtype": ["fp8_block", "bfloat16", "bfloat16", "fp8"],
        "m": [1, 1, 1, 2],
        "n": [64, 64, 64, 32],
        "k": [32, 32, 32, 32],
        "latency": [9.0, 0.002, 0.003, 0.0015],
    })
    text = imp.to_csv_text(table("gemm"), frame, [])
    assert text == "dtype,m,n,k,latency_us\nbfloat16,1,64,32,2.0000\nfp8,2,32,32,1.5000\n"


def test_allreduce_keeps_the_graph_backend_in_elements():
    frame = pd.DataFrame({
        "num_gpus": [2, 2, 2],
        "message_size": [256, 128, 128],
        "backend": ["vllm_graph", "vllm_graph", "vllm_eager"],
        "latency": [0.0043, 0.0042, 0.02],
    })
    text = imp.to_csv_text(table("allreduce"), frame, [])
    assert text == "num_gpus,message_elements,latency_us\n2,128,4.2000\n2,256,4.3000\n"


def test_moe_keeps_fused_bf16_fp8_at_the_default_distribution():
    rows = []
    for dist in ("balanced", "power_law_1.2"):
        for dtype, kernel in (("bfloat16", "vllm_fused_moe"), ("int4_wo", "vllm_marlin_moe")):
            rows.append({"kernel_source": kernel, "moe_dtype": dtype, "num_tokens": 4, "hidden_size": 4096,
                         "inter_size": 14336, "topk": 2, "num_experts": 8, "moe_tp_size": 2, "moe_ep_size": 1,
                         "distribution": dist, "latency": 0.25 if dist == "balanced" else 0.3})
    text = imp.to_csv_text(table("moe"), pd.DataFrame(rows), [])
    assert text == ("dtype,hidden,inter,topk,experts,moe_tp,moe_ep,num_tokens,latency_us\n"
                    "bfloat16,4096,14336,2,8,2,1,4,300.0000\n")


def committed_commit():
    with open(os.path.join(TABLES, "h100_sxm", "vllm-0.14.0", "gemm.csv")) as fh:
        for line in fh:
            m = re.match(r"# From ai-dynamo/aiconfigurator ([0-9a-f]{40})", line)
            if m:
                return m.group(1)
    raise AssertionError("gemm.csv names no aiconfigurator commit")


def test_committed_tables_regenerate_byte_for_byte(tmp_path):
    if not os.path.isdir(MIRROR):
        pytest.skip(f"aiconfigurator mirror {MIRROR} not on this machine (set PAGESIM_AICONFIGURATOR)")
    pytest.importorskip("pyarrow", reason="reading parquet needs pyarrow (python/requirements.txt)")
    try:
        source = imp.Source(MIRROR, committed_commit())
    except ValueError as e:
        pytest.skip(f"the mirror lacks the tables' commit: {e}")
    written = imp.import_tables(source, str(tmp_path))
    assert len(written) == len(imp.TABLES) * len(imp.DEFAULT_TABLES)
    for path in written:
        rel = os.path.relpath(path, tmp_path)
        assert filecmp.cmp(path, os.path.join(TABLES, rel), shallow=False), f"{rel} differs from the committed table"
    committed = sorted(os.path.relpath(os.path.join(d, f), TABLES)
                       for d, _, files in os.walk(TABLES) for f in files if f.endswith(".csv"))
    assert committed == sorted(os.path.relpath(p, tmp_path) for p in written)
