#!/usr/bin/env bash
# Records every vLLM scenario with one vLLM version: harness/record_all.sh 0.15.1
# (the venv .venv-vllm-<version>/ made by harness/setup.sh <version>). Writes recorded/<version>/.
# The vLLM scenarios are those with scheduler.kind vllm-v1 (scenarios/ also holds other engines').
set -euo pipefail
version=${1:?usage: harness/record_all.sh <vllm version>}
cd "$(dirname "$0")/.."
py=.venv-vllm-$version/bin/python
[ -x "$py" ] || { echo "no venv $py: run harness/setup.sh $version" >&2; exit 1; }
export PYTHONHASHSEED=0 VLLM_LOGGING_LEVEL=WARNING
mapfile -t scenarios < <(grep -l '^  kind: vllm-v1$' scenarios/*.yaml)
# One process for all scenarios (vLLM's import takes most of the time).
"$py" harness/record_vllm.py "${scenarios[@]}" --out "recorded/$version"
