#!/usr/bin/env bash
# Regenerates REPORT.md beside this file: the KV memory of 2025-2026 models and engines
# (pagesim issue #26), one part per mechanism:
#   mla   latent attention and DeepSeek-V3.2's indexer: every new preset's KV bytes per token
#         (`pagesim model`) beside its source's figure; paged / uniform / hybrid / jenga on
#         DeepSeek-V3 and V3.2 against Llama-3.1-405B (mla_allocators.yaml)
#   lora  LoRA adapters: KV capacity and throughput against the number of distinct adapters,
#         vLLM's max_loras slots against S-LoRA's unified paging (lora_placements.yaml)
#   speculative  speculative decoding: one request at a time against Leviathan et al.'s closed
#         form (speculative_leviathan.yaml); a loaded server's memory classes and speed-up
#         against k and acceptance, EAGLE and n-gram (speculative_load.yaml)
#   experiments/modern_kv/run_all.sh            (results in out/modern_kv/)
# PAGESIM=path/to/pagesim to use an existing binary; otherwise build-main/ is built.
# About 15 s of CPU once built.
set -euo pipefail

MLA_MODELS="deepseek-v3 deepseek-r1 deepseek-v3.2-exp deepseek-v2-lite kimi-k2 llama-3.1-405b"

here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
out=${OUT:-out/modern_kv}
. experiments/pagesim_binary.sh

# Part mla.
rm -rf "$out/mla"
mkdir -p "$out/mla/models"
for m in $MLA_MODELS; do
  for d in auto fp8; do "$PAGESIM" model "$m" --tp 8 --kv-dtype "$d" >"$out/mla/models/$m.tp8.$d.json"; done
done
echo "== pagesim run $here/mla_allocators.yaml"
"$PAGESIM" run "$here/mla_allocators.yaml" --out "$out/mla/allocators" -q --overwrite -j 2 >/dev/null

# Part lora.
echo "== pagesim run $here/lora_placements.yaml"
"$PAGESIM" run "$here/lora_placements.yaml" --out "$out/lora/placements" -q --overwrite -j 2 >/dev/null

# Part speculative.
rm -rf "$out/speculative"
mkdir -p "$out/speculative"
echo "== pagesim run $here/speculative_leviathan.yaml"
"$PAGESIM" run "$here/speculative_leviathan.yaml" --out "$out/speculative/alone" -q --overwrite -j 2 >/dev/null
echo "== pagesim run $here/speculative_load.yaml"
"$PAGESIM" run "$here/speculative_load.yaml" --out "$out/speculative/load" -q --overwrite -j 2 >/dev/null

bash .ci/python -m pagesim.reports.modern_kv "$out" "$here"
