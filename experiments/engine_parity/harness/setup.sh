#!/usr/bin/env bash
# Creates .venv-vllm-<version>/ and installs the pinned packages of harness/requirements-<version>.txt:
#   harness/setup.sh 0.15.1      (about 3 min, 11 GB of disk)
# vLLM itself is installed without its dependency resolution (--no-deps) from the pinned list,
# which leaves out the CUDA-only kernels packages that PyPI cannot serve (0.34.0 pins
# flashinfer-python==0.7.3, not on PyPI) and that a CPU-only scheduler run never imports.
set -euo pipefail
version=${1:?usage: harness/setup.sh <vllm version>}
cd "$(dirname "$0")/.."
req=harness/requirements-$version.txt
[ -f "$req" ] || { echo "no $req" >&2; exit 1; }
python3 -m venv ".venv-vllm-$version"
".venv-vllm-$version/bin/pip" install --no-deps -r "$req"
".venv-vllm-$version/bin/python" -c "import vllm; print('vllm', vllm.__version__)"
