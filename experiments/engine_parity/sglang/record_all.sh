#!/usr/bin/env bash
# Records every scenarios/sglang_*.yaml with SGLang's real scheduler and RadixCache on the CPU:
#   sglang/record_all.sh [0.5.18]     -> recorded/sglang-<version>/<scenario>.jsonl.gz
# Needs the venv sglang/setup.sh makes. About 40 s per scenario (mostly importing SGLang).
set -euo pipefail
version=${1:-0.5.18}
cd "$(dirname "$0")/.."
py=".venv-sglang-$version/bin/python"
[ -x "$py" ] || { echo "no $py: run sglang/setup.sh $version first" >&2; exit 1; }
out="recorded/sglang-$version"
mkdir -p "$out"
export PYTHONHASHSEED=0 SGLANG_USE_CPU_ENGINE=1 CUDA_VISIBLE_DEVICES=
for yaml in scenarios/sglang_*.yaml; do
  name=$(basename "$yaml" .yaml)
  "$py" sglang/record_sglang.py "$yaml" --out "$out/$name.jsonl.gz" 2>"$out/.$name.log" ||
    { echo "failed: $name (log: $out/.$name.log)" >&2; exit 1; }
  rm -f "$out/.$name.log"
done
