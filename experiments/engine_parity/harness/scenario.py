"""Reads an engine-parity scenario (a pagesim experiment YAML + its native CSV trace) into the
settings the vLLM harness can express, refusing every key it cannot (ScenarioError naming the
file and the key). Needs PyYAML (a vLLM dependency); nothing of vLLM.
"""
import csv
import json
import math
import os
from dataclasses import dataclass, field

import yaml


class ScenarioError(Exception):
    pass


# Keys that do not change a scheduling decision (outputs, measurement windows, pagesim's own
# engine shortcuts and self-checks, labels, the GPU, which only sizes the pool when kv.slots is 0).
IGNORED_PREFIXES = ("output.", "measure.", "engine.", "validate.")
IGNORED_KEYS = {"name", "seed", "model.name", "gpu", "lora.max_cpu_loras", "lora.target_modules",
                "lora.popularity", "lora.zipf_alpha", "calibration"}


@dataclass
class TraceRow:
    index: int
    arrival_s: float
    prompt_tokens: int
    output_tokens: int
    hash_ids: list = field(default_factory=list)
    adapter: int | None = None


@dataclass
class Scenario:
    path: str
    name: str
    model_dir: str
    model_config: dict
    max_model_len: int
    slots: int
    allocator: str  # paged | hybrid
    block_size: int
    prefix_cache: bool
    max_num_batched_tokens: int
    max_num_seqs: int
    async_steps: int
    long_prefill_token_threshold: int
    hash_block_tokens: int
    lora_max_loras: int = 0  # 0: no lora section
    lora_rank: int = 16
    spec_k: int = 0  # 0: no speculation
    spec_method: str = "none"
    spec_acceptance: list = field(default_factory=list)  # each 0 or 1
    rows: list = field(default_factory=list)


def _flatten(node, prefix=""):
    out = {}
    for k, v in node.items():
        key = f"{prefix}{k}"
        if isinstance(v, dict):
            out.update(_flatten(v, key + "."))
        else:
            out[key] = v
    return out


def load(path):
    path = os.path.abspath(path)
    with open(path) as f:
        doc = yaml.safe_load(f)
    if not isinstance(doc, dict):
        raise ScenarioError(f"{path}: expected a map of experiment keys")
    keys = _flatten(doc)
    used = set()

    def err(key, msg):
        return ScenarioError(f"{path}: key '{key}': {msg}")

    def get(key, default=None, required=False):
        if key in keys:
            used.add(key)
            return keys[key]
        if required:
            raise err(key, "required by the vLLM harness (no default it can mirror)")
        return default

    def expect(key, allowed, default):
        v = get(key, default)
        if v not in allowed:
            raise err(key, f"the harness can express only {sorted(map(str, allowed))}, found {v!r}")
        return v

    def integer(key, default=None, required=False, lo=None):
        v = get(key, default, required)
        if not isinstance(v, int) or isinstance(v, bool) or (lo is not None and v < lo):
            raise err(key, f"expected an integer{'' if lo is None else f' >= {lo}'}, found {v!r}")
        return v

    here = os.path.dirname(path)
    # Model: only a local config.json (hf_config), whose folder vLLM's ModelConfig reads.
    if "model" in keys:  # a preset name
        raise err("model", "the harness needs model.hf_config (a local config.json), not a preset name")
    hf = get("model.hf_config", required=True)
    hf_path = os.path.normpath(os.path.join(here, hf))
    with open(hf_path) as f:
        model_config = json.load(f)
    expect("tensor_parallel", {1}, 1)
    expect("kv_dtype", {"auto"}, "auto")
    mml = get("max_model_len", required=True)
    if not isinstance(mml, int) or isinstance(mml, bool) or mml < 1:
        raise err("max_model_len", f"the harness needs a number of tokens, found {mml!r}")

    expect("workload.kind", {"trace"}, None)
    trace = get("workload.trace.path", required=True)
    expect("workload.trace.format", {"native"}, "auto")
    hbt = integer("workload.trace.hash_block_tokens", 0, lo=0)
    expect("workload.trace.time_scale", {1, 1.0}, 1)

    slots = integer("kv.slots", required=True, lo=1)
    allocator = expect("allocator.kind", {"paged", "hybrid"}, "paged")
    block_size = integer("allocator.block_size", 16, lo=1)
    prefix_cache = get("allocator.prefix_cache", required=True)
    if not isinstance(prefix_cache, bool):
        raise err("allocator.prefix_cache", f"expected true or false, found {prefix_cache!r}")
    expect("allocator.eviction", {"lru"}, "lru")

    expect("scheduler.kind", {"vllm-v1"}, "vllm")
    mnbt = integer("scheduler.max_num_batched_tokens", 2560, lo=1)
    mns = integer("scheduler.max_num_seqs", 256, lo=1)
    async_steps = integer("scheduler.async_steps", 0, lo=0)
    if async_steps > 1:
        raise err("scheduler.async_steps", f"vLLM's async scheduling is a batch queue of depth 2 (async_steps 1); found {async_steps}")
    lpt = integer("scheduler.long_prefill_token_threshold", 0, lo=0)
    expect("scheduler.preemption", {"auto", "recompute"}, "auto")  # v1 preempts by recompute only

    expect("cost.kind", {"constant"}, "roofline")
    spi = get("cost.constant.seconds_per_iteration", 0)
    if spi != 1:
        raise err("cost.constant.seconds_per_iteration", f"FORMAT.md's clock needs 1 s per step, found {spi!r}")
    for k in [k for k in keys if k.startswith("cost.constant.") and k != "cost.constant.seconds_per_iteration"]:
        if get(k) != 0:
            raise err(k, "the harness's clock is 1 s per non-empty step; other costs must be 0")

    sc = Scenario(path=path, name=os.path.splitext(os.path.basename(path))[0], model_dir=os.path.dirname(hf_path),
                  model_config=model_config, max_model_len=mml, slots=slots, allocator=allocator,
                  block_size=block_size, prefix_cache=prefix_cache, max_num_batched_tokens=mnbt,
                  max_num_seqs=mns, async_steps=async_steps, long_prefill_token_threshold=lpt,
                  hash_block_tokens=hbt)

    if any(k.startswith("lora.") for k in keys):
        expect("lora.placement", {"vllm"}, "vllm")
        sc.lora_max_loras = integer("lora.max_loras", 1, lo=1)
        sc.lora_rank = integer("lora.rank", 16, lo=1)
        if get("lora.adapters", 0) != 0:
            raise err("lora.adapters", "synthetic adapter assignment is drawn by pagesim's RNG; give the trace an adapter column")

    if any(k.startswith("speculative.") for k in keys):
        sc.spec_method = expect("speculative.method", {"ngram", "none"}, "none")
        sc.spec_k = integer("speculative.num_speculative_tokens", 0, lo=0) if sc.spec_method != "none" else 0
        acc = get("speculative.acceptance", 0.7)
        acc = acc if isinstance(acc, list) else [acc]
        if not acc or any(a not in (0, 1) for a in acc):
            raise err("speculative.acceptance", f"the stand-in runner accepts deterministically: every value must be 0 or 1, found {acc!r}")
        sc.spec_acceptance = [int(a) for a in acc]
        expect("speculative.draft_kv", {"none"}, "none")

    for k in keys:
        if k in used or k in IGNORED_KEYS or k.startswith(IGNORED_PREFIXES):
            continue
        raise err(k, "the vLLM harness cannot express this key (refused; see harness/scenario.py)")

    sc.rows = read_trace(os.path.join(here, trace), hbt)
    if sc.lora_max_loras == 0 and any(r.adapter is not None for r in sc.rows):
        raise err("lora", "the trace names adapters but the scenario has no lora section")
    return sc


def read_trace(path, hash_block_tokens):
    rows = []
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        allowed = {"arrival_s", "prompt_tokens", "output_tokens", "hash_ids", "adapter"}
        bad = [c for c in reader.fieldnames if c not in allowed]
        if bad:
            raise ScenarioError(f"{path}: column '{bad[0]}': the harness reads only {sorted(allowed)}")
        last = 0.0
        for i, r in enumerate(reader):
            line = i + 2
            t = float(r["arrival_s"])
            if t < last:
                raise ScenarioError(f"{path}:{line}: column 'arrival_s': arrivals must not decrease")
            if t > 0 and t == int(t):
                raise ScenarioError(f"{path}:{line}: column 'arrival_s': {t} is a whole second (FORMAT.md: no tie with a step start)")
            last = t
            p, o = int(r["prompt_tokens"]), int(r["output_tokens"])
            if p < 1 or o < 1:
                raise ScenarioError(f"{path}:{line}: prompt_tokens and output_tokens must be >= 1 (vLLM's max_tokens >= 1)")
            ids = [int(x) for x in (r.get("hash_ids") or "").split()]
            if ids:
                if hash_block_tokens <= 0:
                    raise ScenarioError(f"{path}:{line}: column 'hash_ids' needs workload.trace.hash_block_tokens")
                if len(ids) != math.ceil(p / hash_block_tokens):
                    raise ScenarioError(f"{path}:{line}: column 'hash_ids': expected ceil({p}/{hash_block_tokens}) ids, found {len(ids)}")
            a = (r.get("adapter") or "").strip()
            rows.append(TraceRow(i, t, p, o, ids, int(a) if a else None))
    return rows


# ---- pool sizes (what pagesim's pool holds, so vLLM gets the same number of blocks) ----

def _layer_types(cfg):
    n = cfg["num_hidden_layers"]
    types = cfg.get("layer_types")
    if types is None:
        return ["full_attention"] * n
    return list(types)


def lora_region_blocks(sc):
    """Blocks pagesim's vLLM LoRA placement takes from the pool: max_loras slots of rank r over
    every LoRA-capable linear layer (sim/experiment/experiment.cpp configure_lora,
    sim/cost/lora_adapter_bytes.h), each rounded up to whole KV blocks."""
    c = sc.model_config
    h, L = c["hidden_size"], c["num_hidden_layers"]
    heads = c["num_attention_heads"]
    kvh = c.get("num_key_value_heads", heads)
    hd = c.get("head_dim") or h // heads
    f = c["intermediate_size"]
    q, k = heads * hd, kvh * hd
    widths = [h + q, h + k, h + k, q + h, h + f, h + f, h + f]  # q k v o gate up down
    slot_bytes = sum(sc.lora_rank * w for w in widths) * 2 * L
    block_bytes = 2 * L * kvh * hd * 2 * sc.block_size
    return sc.lora_max_loras * math.ceil(slot_bytes / block_bytes)


def kv_groups(sc):
    """vLLM's KV cache groups for the model: [(kind, window or None, layer names)], split as
    vllm/v1/core/kv_cache_utils.py _get_kv_cache_groups_uniform_page_size does (layers of each
    attention type cut into groups of the smallest type's layer count)."""
    types = _layer_types(sc.model_config)
    by_type = {}
    for i, t in enumerate(types):
        by_type.setdefault(t, []).append(f"model.layers.{i}.self_attn.attn")
    if len(by_type) == 1:
        (t, layers), = by_type.items()
        return [(t, layers)]
    group_size = min(len(v) for v in by_type.values())
    groups = []
    for t in sorted(by_type, key=lambda t: 0 if t == "full_attention" else 1):
        layers = by_type[t]
        for j in range(0, len(layers), group_size):
            groups.append((t, layers[j:j + group_size]))
    return groups


def pool_blocks(sc):
    """Blocks in pagesim's pool for this scenario (vLLM's num_gpu_blocks is this + 1)."""
    if sc.allocator == "paged":
        blocks = sc.slots // sc.block_size
        if sc.lora_max_loras:
            blocks -= lora_region_blocks(sc)
        return blocks
    # hybrid: kv.slots full-attention token equivalents (every layer), one page holds
    # block_size tokens of one group's layers (allocator/hetero/kv_layout.h).
    groups = kv_groups(sc)
    group_size = len(groups[0][1])
    layers = sc.model_config["num_hidden_layers"]
    return (sc.slots * layers) // (sc.block_size * group_size)
