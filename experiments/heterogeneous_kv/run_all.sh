#!/usr/bin/env bash
# Regenerates REPORT.md beside this file: the memory tables of parts (a) and (c) from the
# presets' layer groups (`pagesim model`), part (b)'s allocator runs (uniform, hybrid, jenga,
# vattention on ShareGPT lengths and the Azure conversation trace) and part (d)'s
# KV-precision runs.
#   experiments/heterogeneous_kv/run_all.sh            (results in out/heterogeneous_kv/)
# PAGESIM=path/to/pagesim to use an existing binary; otherwise build-main/ is built.
# About a minute of CPU once built (part (b): 32 runs of 60 simulated seconds).
set -euo pipefail

# Part (a): the RFC's three models and the other presets with layer groups; part (c): the
# vAttention paper's models at TP-1 and TP-2; part (d): llama-3-8b in each KV dtype.
HETERO="llama-3.2-11b-vision gemma-2-9b ministral-8b gemma-2-27b gemma-3-27b gpt-oss-120b llama-4-scout jamba-v0.1"
VATTENTION="yi-6b llama-3-8b yi-34b"

here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
out=${OUT:-out/heterogeneous_kv}
. experiments/pagesim_binary.sh
rm -rf "$out/models"
mkdir -p "$out/models"
model() { "$PAGESIM" model "$1" --tp "$2" --kv-dtype "$3" >"$out/models/$1.tp$2.$3.json"; }
for m in $HETERO; do model "$m" 1 auto; done
for m in $VATTENTION; do model "$m" 1 auto; model "$m" 2 auto; done
for d in fp8 int4; do model llama-3-8b 1 "$d"; done

for w in allocators_sharegpt allocators_azure; do
  echo "== pagesim run $here/$w.yaml"
  "$PAGESIM" run "$here/$w.yaml" --out "$out/$w" -q --overwrite -j 2 >/dev/null
done

echo "== pagesim run $here/kv_dtype.yaml"
"$PAGESIM" run "$here/kv_dtype.yaml" --out "$out/kv_dtype" -q --overwrite -j 2 >/dev/null

bash .ci/python -m pagesim.reports.heterogeneous_kv "$out" "$here"
