"""One measured run's settings as a pagesim experiment.

Everything here comes from the run's own record (server, hardware, client, stages) and from
what vLLM v0.15's V1 engine does by default; nothing is fitted. The fitted coefficients live
in a calibration file that the experiment names (`calibration:`), written by `pagesim
calibrate`.

Server: vLLM's V1 engine (chunked prefill within max_num_batched_tokens, at most
max_num_seqs running, prefix caching on by default, paged KV in blocks of 16 tokens, 90% of
GPU memory: vllm/config/cache.py, CacheConfig.gpu_memory_utilization = 0.9) is pagesim's
`vllm-v1` scheduler over a paged pool with a prefix cache, the pool sized as vLLM v0.15.1
sizes it at start-up (kv.engine vllm, the default, with vllm_version 0.15.1:
sim/cost/vllm_kv_budget.h). Client: inference-perf's
shared_prefix data and load stages (workload.kind inference_perf) and its streamed-response
metrics (client.kind inference_perf).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from .measured import MeasuredRunsError

# The server's release, read from its record's server.engine ("vLLM (v0.15.1 per ...)"): the
# KV pool as it sizes it and its scheduler's behaviour where releases differ
# (sim/core/vllm_version.h).
VLLM_RELEASE = re.compile(r"\bv(\d+\.\d+(?:\.\d+)?)\b")


def vllm_version(server: dict, where: str) -> str:
    m = VLLM_RELEASE.search(str(server.get("engine", "")))
    if not m:
        raise MeasuredRunsError(f"{where}.server.engine: expected the vLLM release as vMAJOR.MINOR[.PATCH] "
                                f"(e.g. 'vLLM (v0.15.1)'), found {server.get('engine')!r}")
    return m.group(1)
# vLLM's asynchronous scheduling, on by default since v0.14 (vllm/config/scheduler.py,
# SchedulerConfig.async_scheduling; vllm-project/vllm#31998 extends the default to speculative
# decoding): a request arriving during a step joins the step after the one already planned.
ASYNC_STEPS = 1
# inference-perf starts a stage only after every request of the previous one finished
# (loadgen/load_generator.py, run_stage) plus load.interval (1 s): 30 s of simulated time
# drains these servers (pagesim warns when a stage is still in flight as the next begins).
STAGE_GAP_S = 30.0

# Hugging Face model ids -> pagesim model presets (sim/cost/presets.cpp cites each config).
MODEL_PRESETS = {
    "meta-llama/Llama-2-7b-hf": "llama-2-7b",
    "meta-llama/Llama-2-13b-hf": "llama-2-13b",
    "meta-llama/Llama-2-70b-hf": "llama-2-70b",
    "meta-llama/Meta-Llama-3-8B": "llama-3-8b",
    "meta-llama/Meta-Llama-3-70B": "llama-3-70b",
    "01-ai/Yi-6B": "yi-6b",
    "01-ai/Yi-34B": "yi-34b",
    "meta-llama/Llama-4-Scout-17B-16E-Instruct": "llama-4-scout",
    "meta-llama/Llama-3.1-8B": "llama-3.1-8b",
    "meta-llama/Llama-3.1-8B-Instruct": "llama-3.1-8b",
    "meta-llama/Llama-3.1-70B": "llama-3.1-70b",
    "meta-llama/Llama-3.1-70B-Instruct": "llama-3.1-70b",
    "mistralai/Mixtral-8x7B-v0.1": "mixtral-8x7b",
    "mistralai/Mixtral-8x7B-Instruct-v0.1": "mixtral-8x7b",
    "mistralai/Mixtral-8x22B-v0.1": "mixtral-8x22b",
    "mistralai/Mixtral-8x22B-Instruct-v0.1": "mixtral-8x22b",
    "codellama/CodeLlama-34b-hf": "codellama-34b",
    "codellama/CodeLlama-34b-Instruct-hf": "codellama-34b",
    "mistralai/Mistral-Nemo-Base-2407": "mistral-nemo-12b",
    "mistralai/Mistral-Nemo-Instruct-2407": "mistral-nemo-12b",
    "Qwen/Qwen2.5-7B": "qwen2.5-7b",
    "Qwen/Qwen2.5-7B-Instruct": "qwen2.5-7b",
    "Qwen/Qwen3-14B": "qwen3-14b",
    "meta-llama/Llama-4-Scout-17B-16E-Instruct-FP8": "llama-4-scout-fp8",
    "RedHatAI/Llama-4-Scout-17B-16E-Instruct-FP8-dynamic": "llama-4-scout-fp8",
}

# Hardware names as the collection writes them (nvidia-smi's) -> pagesim GPU presets.
GPU_PATTERNS = (
    (re.compile(r"H100.*(SXM|HBM3)", re.I), "h100-sxm"),
    (re.compile(r"H200", re.I), "h200"),
    (re.compile(r"A100.*80", re.I), "a100-80gb"),
    (re.compile(r"A100", re.I), "a100-40gb"),
    (re.compile(r"L40S", re.I), "l40s"),
)


def model_preset(model: str, where: str) -> str:
    try:
        return MODEL_PRESETS[model]
    except KeyError:
        raise MeasuredRunsError(f"{where}.server.model: no pagesim preset for '{model}' "
                                f"(known: {', '.join(sorted(MODEL_PRESETS))})") from None


def gpu_preset(hardware: str, where: str) -> str:
    for pattern, preset in GPU_PATTERNS:
        if pattern.search(hardware):
            return preset
    raise MeasuredRunsError(f"{where}.hardware: no pagesim GPU preset matches '{hardware}' "
                            f"(known: H100 SXM, H200, A100 40/80GB, L40S)")


def experiment(run: dict[str, Any], calibration: str | None = None) -> dict[str, Any]:
    """The pagesim experiment (as a dict, in key order) that replays `run`."""
    name = run["run"]
    where = f"run '{name}'"
    server = run["server"]
    client = run["client"]
    shared = client["data_resolved"]["shared_prefix"]
    if not client.get("ignore_eos", False):
        raise MeasuredRunsError(f"{where}.client.ignore_eos: expected true (without it the outputs' lengths are "
                                f"the model's, which a simulator cannot know)")
    stages = [{"rate": float(s["rate_per_s"]), "duration_s": float(s["duration_s"])}
              for s in sorted(run["stages"], key=lambda s: s["stage"])]
    cfg: dict[str, Any] = {
        "name": name,
        "seed": 0,
        "model": model_preset(server["model"], where),
        "gpu": gpu_preset(run["hardware"], where),
        "tensor_parallel": int(server["tensor_parallel"]),
        "max_model_len": int(server["max_model_len"]),
        "vllm_version": vllm_version(server, where),
        "kv": {"slots": 0, "gpu_memory_utilization": 0.9},
        "allocator": {"kind": "paged", "block_size": 16, "prefix_cache": True},
        "scheduler": {"kind": "vllm-v1", "max_num_batched_tokens": int(server["max_num_batched_tokens"]),
                      "max_num_seqs": int(server["max_num_seqs"]), "async_steps": ASYNC_STEPS},
        "cost": {"kind": "operators"},
        "workload": {
            "kind": "inference_perf",
            "inference_perf": {
                "shared_prefix": {k: int(shared[k]) for k in ("num_groups", "num_prompts_per_group",
                                                              "system_prompt_len", "question_len", "output_len")},
                "load_type": client["load_type"],
                "stages": stages,
                "stage_gap_s": STAGE_GAP_S,
            },
        },
        "client": {"kind": "inference_perf"},
        "output": {"iterations_stride": 0, "requests_csv": False},
    }
    if calibration is not None:
        cfg["calibration"] = calibration
    return cfg


HEADER = """# {name}: pagesim's replay of a measured vLLM run (experiments/sim_to_real/).
# Generated from its record in {measured} by
#   python -m pagesim.reports.sim_to_real config {measured} {name}
# Server: {model}, TP {tp}, on {hardware}; client: inference-perf shared_prefix, {load} stages.
# The coefficients the operator tables cannot give come from `calibration:`.
"""


def write(run: dict[str, Any], measured: str, out: Path, calibration: str | None) -> Path:
    """Writes the experiment of `run` to out/<run>.yaml (atomically) and returns its path."""
    cfg = experiment(run, calibration)
    text = HEADER.format(name=run["run"], measured=measured, model=run["server"]["model"],
                         tp=run["server"]["tensor_parallel"], hardware=run["hardware"],
                         load=run["client"]["load_type"])
    text += yaml.safe_dump(cfg, sort_keys=False, default_flow_style=None, width=100)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{run['run']}.yaml"
    tmp = path.with_suffix(".yaml.tmp")
    tmp.write_text(text)
    tmp.replace(path)
    return path
