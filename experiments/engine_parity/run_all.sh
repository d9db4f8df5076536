#!/usr/bin/env bash
# pagesim's decisions against the committed recordings of vLLM's and SGLang's own schedulers:
# replays every scenario through pagesim (output.steps), compares step by step, checks each
# divergence against divergences.yaml and regenerates REPORT.md beside this file.
#   experiments/engine_parity/run_all.sh     (PAGESIM=path/to/pagesim to use an existing binary)
# Needs no engine: recording is the harness's job (README.md). A few seconds once built.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
. experiments/pagesim_binary.sh
bash .ci/python -m pagesim.reports.engine_parity check --pagesim "$PAGESIM" --root "$here" --report
