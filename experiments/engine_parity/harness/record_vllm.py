#!/usr/bin/env python3
"""Records vLLM's real v1 scheduler decisions for engine-parity scenarios (../FORMAT.md).

    python harness/record_vllm.py scenarios/fcfs.yaml [more.yaml ...] [--out recorded/<vllm version>]

Builds vLLM's own Scheduler / AsyncScheduler (vllm/v1/core/sched/scheduler.py, async_scheduler.py)
and KVCacheManager with the scenario's settings, on the CPU with no model: a stand-in for the
model runner (StandInRunner) answers each SchedulerOutput with deterministic tokens. The engine
loop is a copy of EngineCore.step (synchronous) or EngineCore.step_with_batch_queue
(async_steps: 1), vllm/v1/engine/core.py, on the clock of FORMAT.md. Writes
<out>/<scenario>.jsonl.gz: a header line, then one line per step.
"""
import argparse
import gzip
import json
import os
import shlex
import sys
from collections import deque
from importlib import metadata

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import scenario as scen  # noqa: E402

os.environ.setdefault("VLLM_LOGGING_LEVEL", "WARNING")

import torch  # noqa: E402
import vllm  # noqa: E402
from vllm.config import (CacheConfig, DeviceConfig, LoRAConfig, ModelConfig,  # noqa: E402
                         SchedulerConfig, SpeculativeConfig, VllmConfig)
from vllm.lora.request import LoRARequest  # noqa: E402
from vllm.sampling_params import SamplingParams  # noqa: E402
from vllm.utils.hashing import get_hash_fn_by_name  # noqa: E402
from vllm.v1.core.kv_cache_utils import get_request_block_hasher, init_none_hash  # noqa: E402

try:
    from vllm.v1.core.kv_cache_utils import get_kv_cache_groups
except ImportError:  # 0.34.0: moved to kv_cache_planning
    from vllm.v1.core.kv_cache_planning import get_kv_cache_groups
from vllm.v1.kv_cache_interface import (FullAttentionSpec, KVCacheConfig,  # noqa: E402
                                        MLAAttentionSpec, SlidingWindowSpec)
from vllm.v1.outputs import DraftTokenIds, ModelRunnerOutput  # noqa: E402
from vllm.v1.request import Request  # noqa: E402
from vllm.v1.structured_output import StructuredOutputManager  # noqa: E402

VLLM_VERSION = vllm.__version__
MRO_FIELDS = set(ModelRunnerOutput.__dataclass_fields__)


def batch_queue_rule():
    """Which condition EngineCore.step_with_batch_queue (vllm/v1/engine/core.py) uses to return
    without blocking after queueing a step: read from the installed source, so the driver follows
    the version it runs. 'done' (0.15.1): the step scheduled tokens, the queue is not full and its
    oldest step is not done; 'has_requests' (0.34.0): the queue is not full and the step scheduled
    tokens or the scheduler still has requests."""
    import inspect
    from vllm.v1.engine.core import EngineCore
    src = inspect.getsource(EngineCore.step_with_batch_queue)
    if "model_executed or self.scheduler.has_requests()" in src:
        return "has_requests"
    if "not batch_queue[-1][0].done()" in src:
        return "done"
    raise RuntimeError("unknown EngineCore.step_with_batch_queue: read it and extend batch_queue_rule()")
TOKEN_SPACE = 1 << 24  # positions per request in the derived token ids


# ---- token ids (FORMAT.md "Token ids") ----

def hash_token(hash_id, k, hbt):
    """Token k of hash block `hash_id`: derived from the id alone (even numbers)."""
    return 2 * (hash_id * hbt + k) + 2


def own_token(req_index, pos):
    """Any other token: derived from (request, position) (odd numbers)."""
    return 2 * ((req_index + 1) * TOKEN_SPACE + pos) + 1


def prompt_tokens(row, hbt):
    if not row.hash_ids:
        return [own_token(row.index, p) for p in range(row.prompt_tokens)]
    return [hash_token(row.hash_ids[p // hbt], p % hbt, hbt) for p in range(row.prompt_tokens)]


# ---- vLLM objects ----

def dtype_of(cfg):
    return {"float32": torch.float32, "float16": torch.float16}.get(
        cfg.get("torch_dtype") or cfg.get("dtype"), torch.bfloat16)


def layer_specs(sc, model_config):
    """{layer name: KVCacheSpec}, as the model's attention layers would report them
    (Attention.get_kv_cache_spec / MLAAttention.get_kv_cache_spec)."""
    c = sc.model_config
    dt = dtype_of(c)
    n = c["num_hidden_layers"]
    specs = {}
    if c.get("kv_lora_rank"):  # MLA: one latent vector of kv_lora_rank + rope dims per token
        head = c["kv_lora_rank"] + c["qk_rope_head_dim"]
        for i in range(n):
            specs[f"model.layers.{i}.self_attn.attn"] = MLAAttentionSpec(
                block_size=sc.block_size, num_kv_heads=1, head_size=head, dtype=dt)
        return specs
    heads = c["num_attention_heads"]
    kvh = c.get("num_key_value_heads", heads)
    hd = c.get("head_dim") or c["hidden_size"] // heads
    types = c.get("layer_types") or ["full_attention"] * n
    for i, t in enumerate(types):
        name = f"model.layers.{i}.self_attn.attn"
        if t == "sliding_attention":
            specs[name] = SlidingWindowSpec(block_size=sc.block_size, num_kv_heads=kvh, head_size=hd,
                                            dtype=dt, sliding_window=c["sliding_window"])
        elif t == "full_attention":
            specs[name] = FullAttentionSpec(block_size=sc.block_size, num_kv_heads=kvh, head_size=hd, dtype=dt)
        else:
            raise scen.ScenarioError(f"{sc.path}: model: layer type {t!r} is not expressed by the harness")
    return specs


def build_vllm_config(sc):
    mc = ModelConfig(model=sc.model_dir, skip_tokenizer_init=True, max_model_len=sc.max_model_len,
                     dtype="bfloat16" if dtype_of(sc.model_config) == torch.bfloat16 else "auto")
    sched_kw = dict(max_num_seqs=sc.max_num_seqs, max_num_batched_tokens=sc.max_num_batched_tokens,
                    max_model_len=sc.max_model_len, enable_chunked_prefill=True,
                    long_prefill_token_threshold=sc.long_prefill_token_threshold,
                    async_scheduling=sc.async_steps == 1, is_encoder_decoder=False)
    try:
        sched = SchedulerConfig(**sched_kw)
    except TypeError:
        sched_kw.pop("is_encoder_decoder")
        sched = SchedulerConfig(**sched_kw)
    cache = CacheConfig(block_size=sc.block_size, enable_prefix_caching=sc.prefix_cache)
    kw = dict(model_config=mc, cache_config=cache, scheduler_config=sched, device_config=DeviceConfig(device="cpu"))
    if sc.lora_max_loras:
        kw["lora_config"] = LoRAConfig(max_loras=sc.lora_max_loras, max_lora_rank=sc.lora_rank)
    if sc.spec_k:
        kw["speculative_config"] = SpeculativeConfig(method=sc.spec_method, num_speculative_tokens=sc.spec_k,
                                                     prompt_lookup_max=3, prompt_lookup_min=1)
    vc = VllmConfig(**kw)
    # VllmConfig may switch async scheduling on by default (vllm/config/vllm.py): the scenario decides.
    vc.scheduler_config.async_scheduling = sc.async_steps == 1
    vc.cache_config.block_size = sc.block_size
    # On a platform without CUDA, VllmConfig turns the hybrid KV cache manager off
    # (Platform.support_hybrid_kv_cache, vllm/config/vllm.py); a GPU platform keeps it on.
    vc.scheduler_config.disable_hybrid_kv_cache_manager = False
    if hasattr(vc.cache_config, "kv_cache_layout") and vc.cache_config.kv_cache_layout is None:
        # 0.34.0: the engine core resolves one layout from the workers' attention backends
        # (resolve_kv_cache_layout) before grouping layers; FlashAttention's default is NHD
        # (LBNHC). It only decides how mixed page sizes pack (not the case in any scenario).
        vc.cache_config.kv_cache_layout = "NHD"
    return vc


def build_scheduler(sc, vc):
    """The scheduler as EngineCore.__init__ builds it (vllm/v1/engine/core.py), given the
    KVCacheConfig the workers would report for a pool of num_blocks blocks."""
    import inspect
    from vllm.v1.core import kv_cache_utils as kcu
    num_blocks = scen.pool_blocks(sc) + 1  # + vLLM's null block (block 0)
    groups = get_kv_cache_groups(vc, layer_specs(sc, vc.model_config))
    kv_cfg = KVCacheConfig(num_blocks=num_blocks, kv_cache_tensors=[], kv_cache_groups=groups)
    vc.cache_config.num_gpu_blocks = num_blocks
    cls = vc.scheduler_config.get_scheduler_cls()  # Scheduler, or AsyncScheduler when async
    kw = dict(vllm_config=vc, kv_cache_config=kv_cfg, structured_output_manager=StructuredOutputManager(vc),
              block_size=sc.block_size, log_stats=True)
    hash_block_size = sc.block_size
    if hasattr(kcu, "resolve_kv_cache_block_sizes"):  # newer: (scheduler block size, hash block size)
        kw["block_size"], hash_block_size = kcu.resolve_kv_cache_block_sizes(kv_cfg, vc)
    if "hash_block_size" in inspect.signature(cls.__init__).parameters:
        kw["hash_block_size"] = hash_block_size
    scheduler = cls(**kw)
    if hasattr(vc.cache_config, "effective_attention_block_size"):
        # EngineCore._initialize_effective_attention_block_size
        sizes = {m.block_size for m in scheduler.kv_cache_manager.coordinator.single_type_managers
                 if kcu.is_full_attention_spec(m.kv_cache_spec)} if hasattr(kcu, "is_full_attention_spec") else set()
        vc.cache_config.effective_attention_block_size = sizes.pop() if len(sizes) == 1 else None
    return scheduler, kv_cfg, hash_block_size


def make_requests(sc, vc, hash_block_size):
    import inspect
    hasher = None
    if vc.cache_config.enable_prefix_caching:  # EngineCore.__init__: request_block_hasher
        hash_fn = get_hash_fn_by_name(vc.cache_config.prefix_caching_hash_algo)
        init_none_hash(hash_fn)
        args = [hash_block_size, hash_fn]
        if "num_hash_lookahead_tokens" in inspect.signature(get_request_block_hasher).parameters:
            args.append(getattr(vc, "num_hash_lookahead_tokens", 0))
        hasher = get_request_block_hasher(*args)
    request_params = inspect.signature(Request.__init__).parameters
    reqs = []
    for row in sc.rows:
        lora = None
        if row.adapter is not None:
            lora = LoRARequest(lora_name=f"adapter-{row.adapter}", lora_int_id=row.adapter + 1,
                               lora_path=f"/nonexistent/adapter-{row.adapter}")
        sp = SamplingParams(max_tokens=row.output_tokens, ignore_eos=True, temperature=0.0)
        kw = dict(request_id=str(row.index), prompt_token_ids=prompt_tokens(row, sc.hash_block_tokens),
                  sampling_params=sp, pooling_params=None, eos_token_id=None,
                  arrival_time=row.arrival_s, lora_request=lora, block_hasher=hasher)
        if "eos_token_id" not in request_params:  # 0.34.0: no eos_token_id argument
            kw.pop("eos_token_id")
        reqs.append(Request(**kw))
    return reqs


class StandInRunner:
    """The model runner's part, without a model: which scheduled requests sample a token this
    step (GPUModelRunner: a request whose scheduled tokens reach the end of its known tokens;
    a partial prefill samples nothing), the sampled tokens (derived from request and position),
    speculative verification (every proposal position with acceptance 1 accepted, stopping at
    the first 0) and the drafter's next proposals (k tokens for every request that sampled and is
    not finished: what an n-gram proposer that always matches would return)."""

    def __init__(self, scheduler, sc):
        self.scheduler = scheduler
        self.sc = sc

    def plan(self, so):
        """Called right after schedule(): the requests this step will sample for."""
        samples = set()
        for nr in so.scheduled_new_reqs:
            n = so.num_scheduled_tokens[nr.req_id]
            if nr.num_computed_tokens + n >= len(nr.prompt_token_ids):
                samples.add(nr.req_id)
        cr = so.scheduled_cached_reqs
        for i, rid in enumerate(cr.req_ids):
            req = self.scheduler.requests[rid]
            n = so.num_scheduled_tokens[rid]
            spec = len(so.scheduled_spec_decode_tokens.get(rid, ()))
            known = req.num_prompt_tokens + cr.num_output_tokens[i]  # outputs + placeholders
            if cr.num_computed_tokens[i] + n - spec >= known:
                samples.add(rid)
        return samples

    def accepted(self, proposals):
        acc = self.sc.spec_acceptance
        n = 0
        for i in range(1, proposals + 1):
            if acc[min(i, len(acc)) - 1] != 1:
                break
            n += 1
        return n

    def output(self, so, samples):
        req_ids = list(so.num_scheduled_tokens.keys())
        sampled = []
        for rid in req_ids:
            req = self.scheduler.requests.get(rid)
            if rid not in samples or req is None:
                sampled.append([])
                continue
            spec = len(so.scheduled_spec_decode_tokens.get(rid, ()))
            n = 1 + self.accepted(spec)
            base = req.num_tokens
            sampled.append([own_token(int(rid), base + j) for j in range(n)])
        kw = dict(req_ids=req_ids, req_id_to_index={r: i for i, r in enumerate(req_ids)},
                  sampled_token_ids=sampled)
        if "req_id_to_index" not in MRO_FIELDS:  # 0.34.0: the index is derived from req_ids
            kw.pop("req_id_to_index")
        return ModelRunnerOutput(**kw)

    def drafts(self, model_output):
        """EngineCore.post_step: take_draft_token_ids -> Scheduler.update_draft_token_ids."""
        ids, toks = [], []
        for rid, s in zip(model_output.req_ids, model_output.sampled_token_ids):
            req = self.scheduler.requests.get(rid)
            if not s or req is None or req.is_finished():
                continue
            ids.append(rid)
            toks.append([own_token(int(rid), req.num_tokens + j) for j in range(self.sc.spec_k)])
        return DraftTokenIds(req_ids=ids, draft_token_ids=toks)


class Recorder:
    def __init__(self, scheduler, kv_cfg):
        self.s = scheduler
        self.kv_cfg = kv_cfg
        self.preempted = []
        orig = scheduler._preempt_request

        def spy(request, *a, **k):  # preemption order (SchedulerOutput.preempted_req_ids is a set)
            self.preempted.append(int(request.request_id))
            return orig(request, *a, **k)

        scheduler._preempt_request = spy

    def after_schedule(self, so, t):
        s = self.s
        new = [[int(nr.req_id), nr.num_computed_tokens] for nr in so.scheduled_new_reqs]
        cr = so.scheduled_cached_reqs
        resumed = getattr(cr, "resumed_req_ids", None)
        if resumed is None:  # older layout: a flag per request
            flags = getattr(cr, "resumed_from_preemption", [])
            resumed = {r for r, f in zip(cr.req_ids, flags) if f}
        for i, rid in enumerate(cr.req_ids):
            if rid in resumed:
                new.append([int(rid), cr.num_computed_tokens[i]])
        blocks = []
        mgr = s.kv_cache_manager
        for req in s.running:
            per_group = mgr.get_blocks(req.request_id).blocks
            blocks.append([int(req.request_id)] + [sum(1 for b in g if not b.is_null) for g in per_group])
        rec = {
            "step": None,
            "t": t,
            "scheduled": sorted([int(r), n] for r, n in so.num_scheduled_tokens.items()),
            "new": sorted(new),
            "preempted": self.preempted,
            "finished": [],
            "free_blocks": mgr.block_pool.get_num_free_blocks(),
            "blocks": sorted(blocks),
        }
        assert set(self.preempted) == {int(r) for r in getattr(so, "preempted_req_ids", None) or self.preempted}
        self.preempted = []
        return rec

    @staticmethod
    def finished(engine_core_outputs):
        out = []
        for eco in (engine_core_outputs or {}).values():
            for o in eco.outputs:
                if o.finish_reason is not None:
                    out.append(int(o.request_id))
        return sorted(out)


def run(sc, command):
    vc = build_vllm_config(sc)
    scheduler, kv_cfg, hash_block_size = build_scheduler(sc, vc)
    requests = make_requests(sc, vc, hash_block_size)
    runner = StandInRunner(scheduler, sc)
    rec = Recorder(scheduler, kv_cfg)
    steps = []
    arrivals = deque(zip(sc.rows, requests))

    def add_arrivals(t):
        while arrivals and arrivals[0][0].arrival_s <= t:
            scheduler.add_request(arrivals.popleft()[1])

    def keep(r):
        return r["scheduled"] or r["preempted"] or r["finished"]

    if sc.async_steps == 0:
        # EngineCore.step + post_step (vllm/v1/engine/core.py), one step per loop.
        t = 0.0
        while True:
            add_arrivals(t)
            if not scheduler.has_requests():
                if not arrivals:
                    break
                t = arrivals[0][0].arrival_s
                continue
            so = scheduler.schedule()
            r = rec.after_schedule(so, t)
            samples = runner.plan(so)
            mo = runner.output(so, samples)
            outs = scheduler.update_from_output(so, mo)
            r["finished"] = rec.finished(outs)
            if sc.spec_k and so.total_num_scheduled_tokens > 0:
                scheduler.update_draft_token_ids(runner.drafts(mo))
            if keep(r):
                steps.append(r)
            if so.total_num_scheduled_tokens > 0:
                t += 1.0
            elif not keep(r) and scheduler.has_unfinished_requests():
                if not arrivals:
                    raise RuntimeError(f"{sc.path}: vLLM schedules nothing and no request is left to arrive (stuck)")
                t = max(t, arrivals[0][0].arrival_s)
    else:
        # EngineCore.step_with_batch_queue with batch_queue_size 2 (UniProcExecutor.max_concurrent_batches
        # under async scheduling): schedule step k+1, then block on step k's output and apply it.
        rule = batch_queue_rule()
        tau = 0.0  # the engine loop's clock
        busy_until = 0.0  # when the last launched batch ends
        queue = deque()  # (SchedulerOutput, samples, record, end time); newest on the left
        while True:
            add_arrivals(tau)  # EngineCore._process_input_queue before every step
            if not scheduler.has_requests() and not queue:
                if not arrivals:
                    break
                tau = arrivals[0][0].arrival_s
                continue
            if scheduler.has_requests():
                so = scheduler.schedule()
                start = max(tau, busy_until)
                end = start + (1.0 if so.total_num_scheduled_tokens > 0 else 0.0)
                busy_until = end
                r = rec.after_schedule(so, start)
                queue.appendleft((so, runner.plan(so), r, end))
                executed = so.total_num_scheduled_tokens > 0
                if rule == "done":
                    early = executed and len(queue) < 2 and not queue[-1][3] <= tau
                else:
                    early = len(queue) < 2 and (executed or scheduler.has_requests())
                if early:
                    continue  # don't block on the oldest step yet
            so, samples, r, end = queue.pop()
            tau = max(tau, end)
            outs = scheduler.update_from_output(so, runner.output(so, samples))
            r["finished"] = rec.finished(outs)
            if keep(r):
                steps.append(r)
            if (so.total_num_scheduled_tokens == 0 and not queue and not keep(r)
                    and scheduler.has_unfinished_requests() and not scheduler.has_finished_requests()):
                if not arrivals:
                    raise RuntimeError(f"{sc.path}: vLLM schedules nothing and no request is left to arrive (stuck)")
                tau = max(tau, arrivals[0][0].arrival_s)
        steps.sort(key=lambda r: r["t"])

    for i, r in enumerate(steps):
        r["step"] = i
    header = {
        "format": "pagesim-engine-steps", "format_version": 1, "engine": "vllm", "engine_version": VLLM_VERSION,
        "scenario": sc.name, "num_gpu_blocks": kv_cfg.num_blocks, "block_size": sc.block_size,
        "kv_cache_groups": [type(g.kv_cache_spec).__name__ + (
            f"(sliding_window={g.kv_cache_spec.sliding_window})" if hasattr(g.kv_cache_spec, "sliding_window")
            and g.kv_cache_spec.sliding_window else "") for g in kv_cfg.kv_cache_groups],
        "scheduler_class": type(scheduler).__name__,
        "command": command,
        "packages": {"vllm": metadata.version("vllm"), "torch": metadata.version("torch")},
    }
    return header, steps


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("scenarios", nargs="+")
    ap.add_argument("--out", default=None, help="folder (default: recorded/<vllm version>)")
    args = ap.parse_args()
    root = os.path.dirname(HERE)
    out = args.out or os.path.join(root, "recorded", VLLM_VERSION)
    os.makedirs(out, exist_ok=True)
    status = 0
    for path in args.scenarios:
        try:
            sc = scen.load(path)
        except scen.ScenarioError as e:
            print(f"error: {e}", file=sys.stderr)
            status = 2
            continue
        rel = os.path.relpath(os.path.abspath(path), root)
        command = (f"PYTHONHASHSEED=0 .venv-vllm-{VLLM_VERSION}/bin/python harness/record_vllm.py "
                   f"{shlex.quote(rel)}  # from experiments/engine_parity/")
        header, steps = run(sc, command)
        dest = os.path.join(out, sc.name + ".jsonl.gz")
        with gzip.GzipFile(dest, "wb", mtime=0) as f:
            f.write((json.dumps(header) + "\n").encode())
            for r in steps:
                f.write((json.dumps(r, separators=(",", ":")) + "\n").encode())
        print(f"{sc.name}: {len(steps)} steps -> {os.path.relpath(dest, root)}")
    return status


if __name__ == "__main__":
    sys.exit(main())
