#!/usr/bin/env bash
# Copies the header/source dependencies of the standalone GPU build (Eigen 3 headers and
# GoogleTest sources, from this machine's Debian packages) into <repo>/.gpu-deps, ignored by
# git (.gitignore), so a device run can carry them (gpu_prepare.sh, gpu_run.sh). About 11 MB.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
dst=$root/.gpu-deps
[ -f /usr/include/eigen3/Eigen/Dense ] || { echo "gpu_deps.sh: /usr/include/eigen3 missing (apt-get install libeigen3-dev)" >&2; exit 1; }
[ -f /usr/src/googletest/CMakeLists.txt ] || { echo "gpu_deps.sh: /usr/src/googletest missing (apt-get install libgtest-dev)" >&2; exit 1; }
rm -rf "$dst"
mkdir -p "$dst/eigen3"
cp -r /usr/include/eigen3/Eigen "$dst/eigen3/"
cp -r /usr/src/googletest "$dst/googletest"
du -sh "$dst"
