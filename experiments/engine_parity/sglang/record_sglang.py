#!/usr/bin/env python3
"""Record the decisions of SGLang's real scheduler and RadixCache, on the CPU, with no model.

Drives a pagesim engine-parity scenario (../scenarios/<name>.yaml, FORMAT.md) through SGLang's
own `Scheduler.get_next_batch_to_run` (PrefillAdder, SchedulePolicy, update_running_batch /
retract_decode), its `TokenToKVPoolAllocator` + `ReqToTokenPool` and its `RadixCache`, and its
`SchedulerBatchResultProcessor` (which finishes requests and inserts their KV into the tree).
Only the forward pass is replaced: each scheduled request "samples" a token derived from
(request id, position). See README.md for what is stubbed and why.

Usage (from a venv made by setup.sh):
    .venv-sglang-0.5.18/bin/python sglang/record_sglang.py scenarios/sglang_lpm.yaml \
        --out recorded/sglang-0.5.18/sglang_lpm.jsonl.gz        (from experiments/engine_parity/)
"""
from __future__ import annotations

import argparse
from array import array
import csv
import gzip
import hashlib
import importlib.util
import json
import logging
import os
import sys
import types
from pathlib import Path

# SGLang reads these while importing (CPU-engine detection is cached at import time).
os.environ.setdefault("SGLANG_USE_CPU_ENGINE", "1")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

HERE = Path(__file__).resolve().parent
PARITY = HERE.parent
DEFAULT_MODEL_DIR = PARITY / "models" / "llama-3-8b"  # config.json only: no weights, no tokenizer


# --------------------------------------------------------------------------------------------
# Scenario (pagesim experiment YAML): only the keys this harness understands.
# --------------------------------------------------------------------------------------------
ALLOWED_KEYS = {
    "name",
    "seed",
    "model",
    "workload.kind",
    "workload.trace.path",
    "workload.trace.format",
    "workload.trace.hash_block_tokens",
    "kv.slots",
    "allocator.kind",
    "allocator.block_size",
    "scheduler.kind",
    "scheduler.max_num_batched_tokens",
    "scheduler.max_num_seqs",
    "scheduler.schedule_policy",
    "scheduler.preemption",
    "cost.kind",
    "cost.constant.seconds_per_iteration",
    "output.steps",
    "output.requests_csv",
}


def _flatten(d, prefix=""):
    out = {}
    for k, v in d.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict) and key not in ("model",):
            out.update(_flatten(v, key + "."))
        else:
            out[key] = v
    return out


def load_scenario(path: Path) -> dict:
    import yaml  # PyYAML

    raw = yaml.safe_load(path.read_text())
    flat = _flatten(raw)
    bad = sorted(k for k in flat if k not in ALLOWED_KEYS)
    if bad:
        raise SystemExit(f"{path}: keys the SGLang harness cannot express: {', '.join(bad)}")
    if flat.get("scheduler.kind") != "sglang":
        raise SystemExit(f"{path}: scheduler.kind must be sglang")
    if flat.get("allocator.kind", "radix") != "radix":
        raise SystemExit(f"{path}: allocator.kind must be radix")
    if int(flat.get("allocator.block_size", 1)) != 1:
        raise SystemExit(f"{path}: only SGLang's default page_size 1 (allocator.block_size: 1) is recorded")
    if flat.get("cost.kind") != "constant" or float(flat.get("cost.constant.seconds_per_iteration", 0)) != 1:
        raise SystemExit(f"{path}: cost must be constant, 1 s per iteration (FORMAT.md)")
    if flat.get("scheduler.preemption", "auto") not in ("auto", "recompute"):
        raise SystemExit(f"{path}: SGLang retracts by recompute only")
    trace = Path(flat["workload.trace.path"])
    if not trace.is_absolute():
        trace = path.parent / trace
    rows = []
    with trace.open() as f:
        for row in csv.DictReader(f):
            extra = set(row) - {"arrival_s", "prompt_tokens", "output_tokens", "hash_ids"}
            if extra:
                raise SystemExit(f"{trace}: columns the harness cannot express: {sorted(extra)}")
            rows.append(
                dict(
                    arrival=float(row["arrival_s"]),
                    prompt=int(row["prompt_tokens"]),
                    output=int(row["output_tokens"]),
                    hash_ids=[int(x) for x in (row.get("hash_ids") or "").split()],
                )
            )
    return dict(
        name=flat.get("name", path.stem),
        rows=rows,
        hash_block_tokens=int(flat.get("workload.trace.hash_block_tokens", 16) or 16),
        slots=int(flat["kv.slots"]),
        chunked_prefill_size=int(flat.get("scheduler.max_num_batched_tokens", 2560)),
        max_running_requests=int(flat.get("scheduler.max_num_seqs", 256)),
        policy=flat.get("scheduler.schedule_policy", "lpm"),
    )


# --------------------------------------------------------------------------------------------
# Token ids (FORMAT.md): hash block j -> 16 tokens from the hash id alone; every other token
# from (request id, position). Ids stay clear of the low ids (BOS/EOS/specials).
# --------------------------------------------------------------------------------------------
VOCAB_LO, VOCAB_HI = 1000, 128000


def _tok(*parts) -> int:
    h = hashlib.blake2b(repr(parts).encode(), digest_size=8).digest()
    return VOCAB_LO + int.from_bytes(h, "little") % (VOCAB_HI - VOCAB_LO)


def prompt_ids(rid: int, row: dict, block: int) -> list[int]:
    ids = []
    for pos in range(row["prompt"]):
        j = pos // block
        if j < len(row["hash_ids"]):
            ids.append(_tok("hash", row["hash_ids"][j], pos % block))
        else:
            ids.append(_tok("req", rid, pos))
    return ids


def sampled_id(rid: int, position: int) -> int:
    return _tok("req", rid, position)


# --------------------------------------------------------------------------------------------
# SGLang, CPU only.
# --------------------------------------------------------------------------------------------
def stub_sgl_kernel():
    """sgl_kernel's __init__ loads its CUDA ops library (needs libcuda.so.1) at import time.

    As the SGLang simulator does (tools/sglang-simulator/.../sgl_kernel_hook.py,
    M_SGLangKernelLoadUtilHook), load sgl_kernel.load_utils first and make
    _load_architecture_specific_ops a no-op: no kernel is ever called here.
    """
    spec = importlib.util.find_spec("sgl_kernel")
    path = os.path.join(os.path.dirname(spec.origin), "load_utils.py")
    s = importlib.util.spec_from_file_location("sgl_kernel.load_utils", path)
    m = importlib.util.module_from_spec(s)
    sys.modules["sgl_kernel.load_utils"] = m
    s.loader.exec_module(m)
    m._load_architecture_specific_ops = lambda *a, **k: None


class _Null:
    """Stands for the scheduler's I/O and metrics components: every attribute is a no-op."""

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _Null()

    def __call__(self, *a, **k):
        return None

    def __bool__(self):
        return False


class _Metrics(_Null):
    """The metrics reporter: counters the result processor adds to; nothing is reported."""

    num_generated_tokens = 0
    num_retracted_reqs = 0
    forward_ct_decode = 0
    enable_metrics = False
    current_scheduler_metrics_enabled = False
    is_stats_logging_rank = False


def build_scheduler(sc: dict, model_dir: Path):
    stub_sgl_kernel()
    import torch
    from sglang.srt import runtime_context as rc
    from sglang.srt.configs.model_config import ModelConfig
    from sglang.srt.disaggregation.utils import DisaggregationMode
    from sglang.srt.managers.scheduler import Scheduler
    from sglang.srt.managers.scheduler_components.batch_result_processor import (
        SchedulerBatchResultProcessor,
    )
    from sglang.srt.mem_cache.allocator import TokenToKVPoolAllocator
    from sglang.srt.mem_cache.cache_init_params import CacheInitParams
    from sglang.srt.mem_cache.memory_pool import MHATokenToKVPool, ReqToTokenPool
    from sglang.srt.mem_cache.radix_cache import RadixCache
    from sglang.srt.server_args import ServerArgs
    from sglang.srt.speculative.spec_info import SpeculativeAlgorithm

    sa = ServerArgs(
        model_path=str(model_dir),
        skip_tokenizer_init=True,
        device="cpu",
        attention_backend="torch_native",
        disable_cuda_graph=True,
        disable_overlap_schedule=True,  # event_loop_normal (the simulator does the same)
        schedule_policy=sc["policy"],
        chunked_prefill_size=sc["chunked_prefill_size"],
        max_total_tokens=sc["slots"],
        max_running_requests=sc["max_running_requests"],
        page_size=1,
    )
    rc.publish(sa, role="scheduler")
    mc = ModelConfig.from_server_args(sa)

    size = sc["slots"]
    max_reqs = sc["max_running_requests"]
    # Same shapes as ModelRunner's pools (kv_cache_configurator.py), but a 1-layer, 1-head,
    # dim-1 KV buffer: the allocator only hands out slot indices.
    req_to_token_pool = ReqToTokenPool(
        size=max_reqs, max_context_len=mc.context_len + 4, device="cpu", enable_memory_saver=False
    )
    kv = MHATokenToKVPool(
        size, page_size=1, dtype=torch.float16, head_num=1, head_dim=1, layer_num=1,
        device="cpu", enable_memory_saver=False,
    )
    allocator = TokenToKVPoolAllocator(size, dtype=torch.float16, device="cpu", kvcache=kv, need_sort=False)
    params = CacheInitParams(
        disable=False,
        req_to_token_pool=req_to_token_pool,
        token_to_kv_pool_allocator=allocator,
        page_size=1,
        eviction_policy=sa.radix_eviction_policy,
        chunked_prefill_size=sc["chunked_prefill_size"],
    )
    tree = RadixCache(params)

    s = Scheduler.__new__(Scheduler)
    s.server_args = sa
    s.model_config = mc
    s.schedule_policy = sa.schedule_policy
    s.enable_priority_scheduling = False
    s.schedule_low_priority_values_first = False
    s.priority_scheduling_preemption_threshold = sa.priority_scheduling_preemption_threshold
    s.abort_on_priority_when_disabled = False
    s.enable_lora = False
    s.enable_overlap = False
    s.enable_overlap_mlx = False
    s.enable_hierarchical_cache = False
    s.enable_hicache_storage = False
    s.enable_hisparse = False
    s.enable_fpm = False
    s.enable_dynamic_chunking = False
    s.enable_priority_preemption = False
    s.is_hybrid_swa = False
    s.is_hybrid_ssm = False
    s.dllm_config = None
    s.spec_algorithm = SpeculativeAlgorithm.from_string(None)
    s.page_size = 1
    s.max_new_tokens_limit = None
    s.disaggregation_mode = DisaggregationMode.NULL
    s.require_mlp_sync = False
    s.is_generation = True
    s.req_to_token_pool = req_to_token_pool
    s.token_to_kv_pool_allocator = allocator
    s.tree_cache = tree
    s.disable_radix_cache = False
    s.max_total_num_tokens = size
    s.max_prefill_tokens = sa.max_prefill_tokens
    s.max_running_requests = max_reqs
    # TpModelWorker.get_worker_info and Scheduler.init_model_worker:
    s.max_req_len = min(mc.context_len - 1, size - 1)
    s.max_req_input_len = s.max_req_len - 5
    if not rc.get_parallel().pp_max_micro_batch_size:
        rc.get_context().override(
            "scheduler.pp_max_micro_batch_size_default", pp_max_micro_batch_size=max(max_reqs, 1)
        )
    s.truncation_align_size = None
    s.min_free_slots_delayer = None
    s.forward_ct = 0
    s._sched_idled = False
    s.ps = types.SimpleNamespace(pp_size=1, dp_size=1, attn_tp_size=1, tp_size=1, attn_tp_rank=0)

    # What the scheduler reaches through but that has no say in its decisions: I/O to the
    # tokenizer, metrics, grammar, DP attention, n-gram embeddings, the model runner.
    ident = lambda batch, *a, **k: batch  # noqa: E731
    s.ipc_channels = _Null()
    s.metrics_reporter = _Metrics()
    s.metrics_collector = _Null()
    s.grammar_manager = types.SimpleNamespace(has_waiting_grammars=lambda: False)
    s.dp_attn_adapter = types.SimpleNamespace(maybe_prepare_mlp_sync_batch=ident)
    s.ngram_embedding_manager = types.SimpleNamespace(prepare_for_forward=ident)
    s.load_inquirer = types.SimpleNamespace(_get_num_pending_tokens=lambda *a, **k: 0)
    s.tp_worker = types.SimpleNamespace(
        model_runner=types.SimpleNamespace(attn_backend=object(), prefill_aware_swa=False)
    )
    s.hisparse_coordinator = None
    s.decode_offload_manager = None
    s.max_queued_requests = rc.get_schedule().max_queued_requests
    s.lora_drainer = None
    s.forward_sleep_time = None
    s.pool_stats_observer = _Null()
    s.tp_cpu_group = None
    s.tp_group = None

    # Real SGLang initialisers for the state the decisions depend on.
    s.init_running_status()  # waiting_queue, running_batch, last_batch
    s.init_chunked_prefill()  # chunked_prefill_size, chunked_req, is_mixed_chunk
    s.init_schedule_policy()  # SchedulePolicy(lpm|fcfs), new_token_ratio tracker
    s.batch_result_processor = SchedulerBatchResultProcessor(
        is_generation=True,
        disaggregation_mode=DisaggregationMode.NULL,
        enable_overlap=False,
        enable_overlap_mlx=False,
        server_args=sa,
        model_config=mc,
        token_to_kv_pool_allocator=allocator,
        tree_cache=tree,
        hisparse_coordinator=None,
        req_to_token_pool=req_to_token_pool,
        decode_offload_manager=None,
        metrics_collector=_Null(),
        metrics_reporter=s.metrics_reporter,
        draft_worker=None,
        model_worker=None,
        logprob_result_processor=_Null(),
        output_streamer=_Null(),
        abort_request=_Null(),
    )
    return s


# --------------------------------------------------------------------------------------------
# The loop: Scheduler.event_loop_normal with the forward pass replaced.
# --------------------------------------------------------------------------------------------
def fake_forward(s, batch):
    """Scheduler.run_batch without a model: one sampled token per request of the batch."""
    import torch
    from sglang.srt.managers.utils import GenerationBatchResult

    s.forward_ct += 1
    batch.forward_iter = s.forward_ct
    ids = []
    for req in batch.reqs:
        rid = int(req.rid)
        ids.append(sampled_id(rid, len(req.origin_input_ids) + len(req.output_ids)))
    next_ids = torch.tensor(ids, dtype=torch.int64)
    batch.input_ids = None  # next-iteration input is relayed, as run_batch does
    return GenerationBatchResult(next_token_ids=next_ids)


def held_tokens(s, req) -> int:
    """KV slots req holds (its row of req_to_token, cached prefix included)."""
    return int(req.kv.kv_allocated_len) if req.kv is not None else 0


def run(sc: dict, model_dir: Path, out: Path, command: str):
    s = build_scheduler(sc, model_dir)
    from sglang.srt.managers.schedule_batch import Req
    from sglang.srt.sampling.sampling_params import SamplingParams
    import sglang

    # Retractions: update_running_batch re-queues each retracted request through
    # _add_request_to_queue(req, is_retracted=True), in retraction order.
    retracted: list[int] = []
    orig_add = s._add_request_to_queue

    def add_to_queue(req, is_retracted=False):
        if is_retracted:
            retracted.append(int(req.rid))
        return orig_add(req, is_retracted=is_retracted)

    s._add_request_to_queue = add_to_queue

    rows = sc["rows"]
    block = sc["hash_block_tokens"]
    reqs = {}
    nxt = 0
    t = 0.0
    step = 0
    lines = []
    pkgs = {}
    for name in ("sglang", "torch", "sglang-kernel"):
        try:
            from importlib.metadata import version

            pkgs[name] = version(name)
        except Exception:
            pass
    header = {
        "format": "pagesim-engine-steps",
        "format_version": 1,
        "engine": "sglang",
        "engine_version": sglang.__version__,
        "scenario": sc["name"],
        "pool_blocks": sc["slots"],
        "block_size": 1,
        "command": command,
        "packages": pkgs,
        "notes": (
            "pool_blocks = max_total_num_tokens = kv.slots token slots (page_size 1; the "
            "allocator's padding slot 0 is outside them, TokenToKVPoolAllocator.clear). free_blocks = token_to_kv_pool_allocator.available_size() + "
            "tree_cache.evictable_size() after scheduling. blocks = KV slots each running "
            "request holds (req.kv.kv_allocated_len, its radix-cached prefix included). "
            "preempted = requests retracted by update_running_batch (retract_decode). "
            "new = requests admitted this step (first time, or again after a retraction) with "
            "len(req.prefix_indices), the radix-cache hit, at admission."
        ),
    }

    def busy():
        return bool(s.waiting_queue) or not s.running_batch.is_empty() or s.chunked_req is not None or (
            s.last_batch is not None and not s.last_batch.is_empty()
        )

    idle_guard = 0
    while True:
        while nxt < len(rows) and rows[nxt]["arrival"] <= t:
            r = rows[nxt]
            sp = SamplingParams(max_new_tokens=r["output"], ignore_eos=True)
            sp.normalize(None)
            req = Req(str(nxt), "", array("q", prompt_ids(nxt, r, block)), sp, eos_token_ids=None)
            s.init_req_max_new_tokens(req)  # Scheduler.handle_generate_request does this
            reqs[nxt] = req
            s._add_request_to_queue(req)
            nxt += 1
        if not busy():
            if nxt >= len(rows):
                break
            t = rows[nxt]["arrival"]
            continue

        retracted.clear()
        waiting_before = {int(r.rid) for r in s.waiting_queue}
        plan = s.get_next_batch_to_run(running_batch=s.running_batch, last_batch=s.last_batch)
        s.running_batch = plan.running_batch
        batch = plan.batch_to_run

        rec = {"step": step, "t": t, "scheduled": [], "new": [], "preempted": list(retracted), "finished": []}
        if batch is not None:
            if batch.forward_mode.is_extend():
                for req in batch.reqs:
                    rec["scheduled"].append([int(req.rid), int(req.extend_range.length)])
                    rid = int(req.rid)
                    if rid in waiting_before:
                        rec["new"].append([rid, len(req.prefix_indices)])
            else:
                for req in batch.reqs:
                    rec["scheduled"].append([int(req.rid), 1])
        # Memory after scheduling (allocation for this step done, nothing freed yet).
        rec["free_blocks"] = int(s.token_to_kv_pool_allocator.available_size() + s.tree_cache.evictable_size())
        running = {}
        for req in list(s.running_batch.reqs) + (list(batch.reqs) if batch is not None else []):
            if req.finished():
                continue
            running[int(req.rid)] = held_tokens(s, req)
        rec["blocks"] = sorted([k, v] for k, v in running.items())

        if batch is not None:
            result = fake_forward(s, batch)
            if batch.forward_mode.is_decode():
                s.batch_result_processor.process_batch_result_decode(batch, result)
            else:
                s.batch_result_processor.process_batch_result_prefill(batch, result)
            rec["finished"] = sorted(int(r.rid) for r in batch.reqs if r.finished())
        s.last_batch = batch

        rec["scheduled"].sort()
        rec["new"].sort()
        if rec["scheduled"] or rec["preempted"]:
            lines.append(rec)
            step += 1
        if batch is not None and rec["scheduled"]:
            t += 1.0
            idle_guard = 0
        else:
            idle_guard += 1
            if idle_guard > 3:
                if nxt < len(rows):
                    t = max(t, rows[nxt]["arrival"])
                    idle_guard = 0
                else:
                    raise SystemExit(f"stuck at t={t}: waiting={[r.rid for r in s.waiting_queue]}")

    not_done = [i for i, r in reqs.items() if not r.finished()]
    if not_done:
        raise SystemExit(f"requests never finished: {not_done}")
    out.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(header) + "\n" + "".join(json.dumps(rec) + "\n" for rec in lines)
    if out.suffix == ".gz":
        with open(out, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0, filename="") as f:
            f.write(text.encode())  # mtime 0: a rerun is byte-identical
    else:
        out.write_text(text)
    print(f"{sc['name']}: {len(lines)} steps, {len(reqs)} requests, final t={t} -> {out}")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("scenario", type=Path)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--model-dir", type=Path, default=DEFAULT_MODEL_DIR,
                    help="a directory with a Hugging Face config.json (no weights are read)")
    args = ap.parse_args()
    logging.basicConfig(level=logging.ERROR)
    sc = load_scenario(args.scenario)
    command = "python sglang/record_sglang.py " + " ".join(sys.argv[1:])
    run(sc, args.model_dir, args.out, command)


if __name__ == "__main__":
    main()
