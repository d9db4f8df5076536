#!/usr/bin/env bash
# gpu_batches.sh PAGESIM OUTDIR: sampled batch files of every allocator policy, for
# `pagesim validate --device cuda` on the GPU machine. The same eight simulations, workload
# and `validate:` settings as tests/sim/validate/validate_policies_test.cpp (the set CI validates on
# the CPU reference; keep the two in step), each writing OUTDIR/<case>.jsonl with 5 batches;
# then SGLang's radix cache on the prefix trace, and the layer-group pools (uniform, hybrid,
# jenga, vattention) on gpt-oss-120b with its 128-token sliding window as in
# tests/sim/validate/validate_layer_group_pools_test.cpp (8 batches each); then the MLA
# pools (mla_*: latent caches, validated with the latent kernel).
# Runs on the development machine (the GPU machine has no trace data or simulator build).
set -euo pipefail
pagesim=$(realpath "$1")
dst=$(realpath -m "$2")
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d /tmp/pagesim-gpu-batches.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p "$dst"

# The test's prefix trace: 80 requests whose prompts start with one of three shared
# documents (hash ids per 16 tokens). Numbers printed as C++'s default ostream does (%g).
python3 - "$work/prefix.csv" <<'PY'
import sys
with open(sys.argv[1], "w") as out:
    out.write("arrival_s,prompt_tokens,output_tokens,hash_ids\n")
    for i in range(80):
        prompt, doc = 40 + (i * 37) % 150, i % 3
        ids = " ".join(str(doc * 100 + b if b < 3 else 1000 + i * 20 + b) for b in range((prompt + 15) // 16))
        out.write(f"{i * 0.15:g},{prompt},{5 + (i * 13) % 60},{ids}\n")
PY
cat >"$work/exp.yaml" <<YAML
name: validate-policies
seed: 3
workload:
  kind: synthetic
  arrival: {kind: poisson, rate: 6.0}
  lengths: {kind: cycle_shuffle, path: $root/traces/data/sharegpt_opt_lengths.csv}
  max_total_tokens: 1024
  max_requests: 120
kv: {slots: 4096}
output: {iterations_stride: 0, requests_csv: false}
validate: {every_n_iterations: 40, max_batches: 5}
YAML
prefix=(workload.kind=trace "workload.trace.path=$work/prefix.csv" workload.trace.format=native
        workload.trace.hash_block_tokens=16 workload.max_total_tokens=0 workload.max_requests=0)
exp=exp.yaml
run_case() {
  local name=$1
  shift
  "$pagesim" run "$work/$exp" --out "$work/$name" --quiet --set "$@" >/dev/null
  cp "$work/$name/batches.jsonl" "$dst/$name.jsonl"
  echo "  $name: $(($(wc -l <"$dst/$name.jsonl") - 1)) batches"
}
run_case paged allocator.kind=paged scheduler.kind=vllm
run_case paged_parallel_sampling allocator.block_size=8 "workload.sampling=[{n: 3}]" scheduler.kind=vllm
run_case paged_beam_search allocator.block_size=4 "workload.sampling=[{beam_width: 4}]"
run_case paged_prefix_cache allocator.prefix_cache=true "${prefix[@]}"
run_case paged_prefix_sarathi allocator.prefix_cache=true scheduler.kind=sarathi scheduler.chunk_tokens=128 "${prefix[@]}"
run_case contiguous_buddy allocator.kind=contiguous allocator.placement=buddy allocator.reservation=pow2 \
  scheduler.kind=orca
run_case contiguous_first_fit_parallel allocator.kind=contiguous allocator.placement=first_fit \
  allocator.reservation=oracle "workload.sampling=[{n: 2}]" scheduler.kind=orca
run_case contiguous_best_fit allocator.kind=contiguous allocator.placement=best_fit allocator.reservation=max \
  allocator.max_seq_len=1024 scheduler.kind=orca
run_case radix_sglang allocator.kind=radix scheduler.kind=sglang "${prefix[@]}"
cat >"$work/pools.yaml" <<YAML
name: validate-pools
seed: 5
workload:
  kind: synthetic
  arrival: {kind: poisson, rate: 8.0}
  lengths: {prompt: {kind: uniform, lo: 100, hi: 600}, output: {kind: uniform, lo: 1, hi: 200}}
  max_requests: 40
model: gpt-oss-120b
gpu: h200
max_model_len: 1024
kv: {slots: 8192}
allocator: {block_size: 16}
scheduler: {kind: vllm-v1, max_num_batched_tokens: 256}
output: {iterations_stride: 0, requests_csv: false}
validate: {every_n_iterations: 9, max_batches: 8}
YAML
exp=pools.yaml
for kind in uniform hybrid jenga; do
  run_case "pool_$kind" allocator.kind=$kind
done
run_case pool_vattention allocator.kind=vattention allocator.vattention.max_batch_size=32
# MLA pools (the latent kernel, `validate` reads "attention": "latent" from the header):
# DeepSeek-V3 under vLLM v1 (FlashMLA's 64-token pages, chunked prefill: query chunks over
# history), DeepSeek-R1 under SGLang's radix cache, Kimi-K2 (same latent row, 64 heads).
cat >"$work/mla.yaml" <<YAML
name: validate-mla
seed: 5
workload:
  kind: synthetic
  arrival: {kind: poisson, rate: 8.0}
  lengths: {prompt: {kind: uniform, lo: 100, hi: 600}, output: {kind: uniform, lo: 1, hi: 200}}
  max_requests: 40
model: deepseek-v3
gpu: h200
max_model_len: 1024
kv: {slots: 8192}
allocator: {block_size: 64}
scheduler: {kind: vllm-v1, max_num_batched_tokens: 256}
output: {iterations_stride: 0, requests_csv: false}
validate: {every_n_iterations: 9, max_batches: 8}
YAML
exp=mla.yaml
run_case mla_deepseek_v3_paged allocator.kind=paged
run_case mla_deepseek_r1_radix model=deepseek-r1 allocator.kind=radix scheduler.kind=sglang
run_case mla_kimi_k2_paged model=kimi-k2 allocator.kind=paged
