#!/usr/bin/env python3
"""Converts aiconfigurator's measured vLLM operator latencies into pagesim's operator tables.

ai-dynamo/aiconfigurator (Apache-2.0, NVIDIA) publishes per-operator latencies measured inside
vLLM as parquet files under
  aic-core/src/aiconfigurator_core/systems/data/<gpu>/{gemm,attention,mla,moe,comm}/vllm/<version>/
This script reads them (from a checkout, or straight from a bare git mirror with `git show`)
and writes, per GPU and engine version, one folder <out>/<gpu>/vllm-<version>/ holding
  gemm.csv                  dtype,m,n,k,latency_us
  context_attention.csv     kv_dtype,head_dim,num_heads,num_kv_heads,batch,isl,latency_us
  generation_attention.csv  kv_dtype,head_dim,num_heads,num_kv_heads,batch,kv_tokens,latency_us
  context_mla.csv           kv_dtype,num_heads,batch,isl,latency_us
  generation_mla.csv        kv_dtype,num_heads,batch,kv_tokens,latency_us
  moe.csv                   dtype,hidden,inter,topk,experts,moe_tp,moe_ep,num_tokens,latency_us
  allreduce.csv             num_gpus,message_elements,latency_us
(the column meanings are in sim/cost/operator_tables/README.md and sim/cost/operator_table.h).
Only the rows pagesim can use are kept, so the committed tables stay small:
  gemm: gemm_dtype bfloat16 and fp8 (fp8_block is DeepSeek-style block scaling, no preset uses it)
  attention: attn_dtype bfloat16 (the only one measured), kv_cache_dtype bfloat16 and fp8
  mla: mla_dtype bfloat16 (the only one measured), kv_cache_dtype bfloat16 and fp8; num_heads is
       per GPU (tp_size, the collector's provenance, is dropped: a head count measured under two
       tp sizes keeps its first row)
  moe: kernel_source vllm_fused_moe, moe_dtype bfloat16 and fp8, distribution power_law_1.2 —
       aiconfigurator's default workload (sdk/config.py: workload_distribution = "power_law";
       sdk/models/moe.py: _power_law_alpha = 1.2; sdk/models/helpers.py power_law_distribution
       joins them to "power_law_1.2")
  allreduce: backend vllm_graph (aiconfigurator skips the *_eager rows on every system but b60:
       rust/aiconfigurator-core/src/perf_database/communication.rs, load_custom_allreduce_parquet)
Where a parquet file holds the same key twice, the first row wins, as aiconfigurator's loaders
do (perf_database/attention.rs load_context_parquet and perf_database/moe.rs: "first-wins").
Latencies are converted from milliseconds (aiconfigurator's unit) to microseconds, written with
4 decimals; rows are sorted by every column but the latency, so the output is deterministic.

Usage:
  python3 python/operator_tables/import_aiconfigurator.py --aiconfigurator PATH \
      [--commit SHA] [--tables GPU:VERSION ...] --out sim/cost/operator_tables
"""
from __future__ import annotations

import argparse
import io
import os
import subprocess
import sys
from dataclasses import dataclass

DATA_ROOT = "aic-core/src/aiconfigurator_core/systems/data"

# (gpu folder, vLLM version) pairs committed under sim/cost/operator_tables. 0.14.0 is the
# version nearest the vLLM 0.15.1 of pagesim's measured runs. b200_sxm has no 0.14.0 (its
# oldest vLLM tables are 0.19.0, 3.4 MB converted): left out to keep the committed tables
# small and of one engine version; `--tables b200_sxm:0.19.0` converts it.
DEFAULT_TABLES = [
    ("a100_sxm", "0.14.0"),
    ("h100_sxm", "0.14.0"),
    ("h200_sxm", "0.14.0"),
    ("l40s", "0.14.0"),
]

GEMM_DTYPES = ("bfloat16", "fp8")
KV_DTYPES = ("bfloat16", "fp8")
MOE_DTYPES = ("bfloat16", "fp8")
MOE_KERNEL = "vllm_fused_moe"
MOE_DISTRIBUTION = "power_law_1.2"
ALLREDUCE_BACKEND = "vllm_graph"


@dataclass(frozen=True)
class Table:
    """One output table: its file, the parquet it comes from, and its columns."""

    name: str  # output file stem
    family: str  # aiconfigurator folder: gemm, attention, mla, moe, comm
    parquet: str  # file inside <family>/vllm/<version>/
    columns: tuple[str, ...]  # output columns before latency_us, also the sort order


TABLES = (
    Table("gemm", "gemm", "gemm_perf.parquet", ("dtype", "m", "n", "k")),
    Table("context_attention", "attention", "context_attention_perf.parquet",
          ("kv_dtype", "head_dim", "num_heads", "num_kv_heads", "batch", "isl")),
    Table("generation_attention", "attention", "generation_attention_perf.parquet",
          ("kv_dtype", "head_dim", "num_heads", "num_kv_heads", "batch", "kv_tokens")),
    Table("context_mla", "mla", "context_mla_perf.parquet", ("kv_dtype", "num_heads", "batch", "isl")),
    Table("generation_mla", "mla", "generation_mla_perf.parquet", ("kv_dtype", "num_heads", "batch", "kv_tokens")),
    Table("moe", "moe", "moe_perf.parquet",
          ("dtype", "hidden", "inter", "topk", "experts", "moe_tp", "moe_ep", "num_tokens")),
    Table("allreduce", "comm", "custom_allreduce_perf.parquet", ("num_gpus", "message_elements")),
)

DESCRIPTIONS = {
    "gemm": "latency of one GEMM of an m x k activation by a k x n weight (dtype: weights and "
            "activations)",
    "context_attention": "latency of one layer's prefill attention over `batch` sequences of "
                         "`isl` tokens each, causal, no cached prefix; num_heads / num_kv_heads "
                         "are per GPU",
    "generation_attention": "latency of one layer's decode attention for `batch` sequences, one "
                            "query token each, reading kv_tokens tokens of KV (aiconfigurator's "
                            "isl + step); num_heads / num_kv_heads are per GPU",
    "context_mla": "latency of one layer's MLA prefill in vLLM's MLA attention backend (forward of "
                   "the MLA impl: kv_b up-projection of the new tokens' latents, then attention with "
                   "192-wide query/key and 128-wide value heads) over `batch` sequences of `isl` "
                   "tokens each, causal, no cached prefix; DeepSeek-V3's MLA shape (kv_lora_rank 512, "
                   "qk_rope 64, qk_nope 128, v 128; collector/vllm/fake_mla_hf_model/config.json); "
                   "num_heads per GPU",
    "generation_mla": "latency of one layer's MLA decode in vLLM's MLA attention backend (forward of "
                      "the MLA impl: query absorption by W_UK, attention over the 576-wide latent cache, "
                      "W_UV) for `batch` sequences, one query token each, reading kv_tokens latents "
                      "(aiconfigurator's isl + step); DeepSeek-V3's MLA shape; num_heads per GPU",
    "moe": "latency of one MoE layer's fused expert computation (vLLM fused_moe) over num_tokens "
           "tokens; inter is one expert's intermediate width before moe_tp sharding",
    "allreduce": "latency of one vLLM custom all-reduce (CUDA-graph backend) of message_elements "
                 "bf16 elements over num_gpus GPUs",
}


def _convert(table: Table, frame):
    """The pandas frame of `table` in pagesim's columns (without latency formatting)."""
    import pandas as pd  # noqa: F401  (the frame is a pandas.DataFrame)

    f = frame
    if table.name == "gemm":
        f = f[f["gemm_dtype"].isin(GEMM_DTYPES)]
        out = f.rename(columns={"gemm_dtype": "dtype"})
        keys = ["dtype", "m", "n", "k"]
    elif table.name in ("context_attention", "generation_attention"):
        f = f[(f["attn_dtype"] == "bfloat16") & f["kv_cache_dtype"].isin(KV_DTYPES)]
        out = f.rename(columns={"kv_cache_dtype": "kv_dtype", "num_key_value_heads": "num_kv_heads",
                                "batch_size": "batch"})
        if table.name == "context_attention":
            if (out["step"] != 0).any():
                raise ValueError("context_attention_perf: expected step 0 on every row")
        else:
            # perf_database/attention.rs load_generation_parquet: sequence_tokens = isl + step,
            # the KV length the decode query attends over.
            out = out.assign(kv_tokens=out["isl"] + out["step"])
        keys = list(table.columns)
    elif table.name in ("context_mla", "generation_mla"):
        f = f[(f["mla_dtype"] == "bfloat16") & f["kv_cache_dtype"].isin(KV_DTYPES)]
        out = f.rename(columns={"kv_cache_dtype": "kv_dtype", "batch_size": "batch"})
        if table.name == "context_mla":
            if (out["step"] != 0).any():
                raise ValueError("context_mla_perf: expected step 0 on every row")
        else:
            # The collector logs a decode over input_len cached tokens as isl 1, step input_len
            # (collector/vllm/collect_mla.py); the KV length, as for generation_attention:
            out = out.assign(kv_tokens=out["isl"] + out["step"])
        keys = list(table.columns)
    elif table.name == "moe":
        f = f[(f["kernel_source"] == MOE_KERNEL) & f["moe_dtype"].isin(MOE_DTYPES)
              & (f["distribution"] == MOE_DISTRIBUTION)]
        out = f.rename(columns={"moe_dtype": "dtype", "hidden_size": "hidden", "inter_size": "inter",
                                "num_experts": "experts", "moe_tp_size": "moe_tp",
                                "moe_ep_size": "moe_ep"})
        keys = list(table.columns)
    elif table.name == "allreduce":
        f = f[f["backend"] == ALLREDUCE_BACKEND]
        # message_size counts elements, not bytes: aiconfigurator's collector shapes the tensor
        # as [size // 4096, 4096] (collector/network/collect_all_reduce.py,
        # get_input_shape_and_comm_size) and its CustomAllReduce op queries tokens x hidden
        # (rust/aiconfigurator-core/src/operators/communication.rs, CustomAllReduceOp::query).
        out = f.rename(columns={"message_size": "message_elements"})
        keys = list(table.columns)
    else:
        raise ValueError(f"unknown table {table.name}")
    out = out[keys + ["latency"]].drop_duplicates(subset=keys, keep="first")
    return out.sort_values(keys, kind="mergesort").reset_index(drop=True)


def to_csv_text(table: Table, frame, header_lines: list[str]) -> str:
    """The CSV text of `table` from aiconfigurator's parquet `frame` (latency in ms)."""
    out = _convert(table, frame)
    buf = io.StringIO()
    for line in header_lines:
        buf.write(f"# {line}\n" if line else "#\n")
    buf.write(",".join(table.columns) + ",latency_us\n")
    for row in out.itertuples(index=False):
        values = [str(v) for v in row[:-1]]
        values.append(f"{float(row[-1]) * 1000.0:.4f}")
        buf.write(",".join(values) + "\n")
    return buf.getvalue()


class Source:
    """Reads files of an aiconfigurator checkout or bare mirror: at `revision` (default HEAD)
    when `root` is a git repository, else the files as they are."""

    def __init__(self, root: str, revision: str = "HEAD"):
        self.root = root
        probe = subprocess.run(["git", "-C", root, "rev-parse", "--verify", f"{revision}^{{commit}}"],
                               capture_output=True, text=True)
        if probe.returncode != 0 and revision != "HEAD":
            raise ValueError(f"{root}: no commit {revision} ({probe.stderr.strip()})")
        self.commit = probe.stdout.strip() if probe.returncode == 0 else None

    def read(self, path: str) -> bytes | None:
        if self.commit:
            r = subprocess.run(["git", "-C", self.root, "show", f"{self.commit}:{path}"], capture_output=True)
            return r.stdout if r.returncode == 0 else None
        full = os.path.join(self.root, path)
        if not os.path.exists(full):
            return None
        with open(full, "rb") as fh:
            return fh.read()


def spdx_lines(meta_text: str) -> list[str]:
    """NVIDIA's SPDX copyright and licence lines of a collection_meta.yaml."""
    return [line.lstrip("# ").rstrip() for line in meta_text.splitlines() if line.startswith("# SPDX-")]


def import_tables(source: Source, out_dir: str, tables=DEFAULT_TABLES) -> list[str]:
    """Writes every table of `tables`; returns the files written."""
    import pandas as pd

    written = []
    for gpu, version in tables:
        folder = os.path.join(out_dir, gpu, f"vllm-{version}")
        os.makedirs(folder, exist_ok=True)
        for table in TABLES:
            base = f"{DATA_ROOT}/{gpu}/{table.family}/vllm/{version}"
            data = source.read(f"{base}/{table.parquet}")
            if data is None:
                raise FileNotFoundError(f"{source.root}: no {base}/{table.parquet}")
            meta = source.read(f"{base}/collection_meta.yaml")
            notice = spdx_lines(meta.decode()) if meta else []
            frame = pd.read_parquet(io.BytesIO(data))
            header = notice + [
                f"pagesim operator table: {DESCRIPTIONS[table.name]}; latency_us in microseconds.",
                f"From ai-dynamo/aiconfigurator {source.commit or '(not a git checkout)'}",
                f"  {base}/{table.parquet}",
                "Converted by python/operator_tables/import_aiconfigurator.py (see "
                "sim/cost/operator_tables/README.md).",
            ]
            path = os.path.join(folder, f"{table.name}.csv")
            with open(path, "w", newline="\n") as fh:
                fh.write(to_csv_text(table, frame, header))
            written.append(path)
    return written


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--aiconfigurator", required=True,
                   help="aiconfigurator checkout or bare git mirror")
    p.add_argument("--commit", default="HEAD",
                   help="the commit to read from a git checkout or mirror (default HEAD)")
    p.add_argument("--out", required=True, help="output folder (sim/cost/operator_tables)")
    p.add_argument("--tables", nargs="*", metavar="GPU:VERSION",
                   help="GPU folders and vLLM versions to convert (default: "
                   + " ".join(f"{g}:{v}" for g, v in DEFAULT_TABLES) + ")")
    args = p.parse_args(argv)
    tables = DEFAULT_TABLES
    if args.tables:
        tables = []
        for spec in args.tables:
            gpu, sep, version = spec.partition(":")
            if not sep or not gpu or not version:
                p.error(f"--tables {spec}: expected GPU:VERSION, e.g. h100_sxm:0.14.0")
            tables.append((gpu, version))
    for path in import_tables(Source(args.aiconfigurator, args.commit), args.out, tables):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
