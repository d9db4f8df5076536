#!/usr/bin/env bash
# Creates .venv-sglang-<version>/ (beside scenarios/) with SGLang and the packages its scheduler
# imports, from the pinned list sglang/requirements-<version>.txt:
#   sglang/setup.sh 0.5.18        (about 3 min on a fast link, 6.7 GB of disk; CPU only)
# Installed with --no-deps: SGLang's own requirements include CUDA-only kernel packages
# (flash-attn-4, flashinfer-python[cu13], sgl-deep-ep, ...) a scheduler-only run never imports.
# torch is PyPI's default (CUDA 13) wheel: it imports and runs on a machine without a GPU.
set -euo pipefail
version=${1:-0.5.18}
cd "$(dirname "$0")/.."
req=sglang/requirements-$version.txt
[ -f "$req" ] || { echo "no $req" >&2; exit 1; }
venv=".venv-sglang-$version"
python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --upgrade pip
"$venv/bin/pip" install --no-deps -r "$req"
# Check: SGLang's scheduler imports on this CPU (sgl_kernel's CUDA ops stubbed as record_sglang.py does).
"$venv/bin/python" - <<'PY'
import os, sys
sys.path.insert(0, "sglang")
os.environ["SGLANG_USE_CPU_ENGINE"] = "1"; os.environ["CUDA_VISIBLE_DEVICES"] = ""
import record_sglang
record_sglang.stub_sgl_kernel()
import sglang, sglang.srt.managers.scheduler  # noqa: F401
print("sglang", sglang.__version__, "scheduler imports on the CPU")
PY
