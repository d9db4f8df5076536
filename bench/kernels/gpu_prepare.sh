#!/usr/bin/env bash
# Prepares, on the development machine, what the one GPU device call carries besides the
# working tree (see gpu_run.sh for the call itself):
#   .gpu-deps/   Eigen 3 headers and GoogleTest sources for the standalone GPU build
#                (gpu_deps.sh; the GPU machine has neither), ~11 MB
#   .gpu-stage/  bin/pagesim and bin/pagesim-cuda built here with CUDA for sm_90a (the GPU
#                machine lacks yaml-cpp, fmt, CLI11, Boost, ... so they cannot be built there;
#                pagesim hands `validate --device cuda` and `profile` to the pagesim-cuda
#                beside it); kernels/ the standalone build's GPU tests and benchmark
#                (bench/kernels/gpu, built here too: compiling on the GPU machine spends
#                device time) and the profile's fused-MoE kernel test; lib/ the shared libraries they need that are neither glibc nor
#                the CUDA toolkit's (yaml-cpp, fmt, libstdc++, libgcc_s), batches/ the sampled
#                batch files of every allocator policy (gpu_batches.sh), commit.txt the commit
#                the run measures (the device tool copies no .git). ~20 MB.
# Both are ignored by git. Same x86-64 and nvcc 13.0 as the GPU machine; the binary needs
# glibc >= 2.34 there. PAGESIM_GPU_PAGESIM_BUILD: the build folder for pagesim (default
# build-gpu-pagesim; an existing CUDA-enabled build folder may be reused).
# Takes ~10 minutes on 2 cores from scratch (the CUDA kernels), less with ccache.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
build=${PAGESIM_GPU_PAGESIM_BUILD:-$root/build-gpu-pagesim}
stage=$root/.gpu-stage

echo "== .gpu-deps"
bash bench/kernels/gpu_deps.sh

echo "== pagesim with CUDA (sm_90a) in $build"
launchers=()
if command -v ccache >/dev/null 2>&1; then
  launchers=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
fi
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DPAGESIM_ENABLE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90a \
  "${launchers[@]}" >/dev/null
grep -q '^PAGESIM_ENABLE_CUDA:BOOL=ON' "$build/CMakeCache.txt" || { echo "gpu_prepare.sh: $build is not a CUDA build" >&2; exit 1; }
cmake --build "$build" -j "$(nproc)" --target pagesim pagesim-cuda sim_profile_moe_kernels_gpu_test

kbuild=${PAGESIM_GPU_KERNELS_BUILD:-$root/build-gpu}
echo "== kernels' GPU tests and benchmark (standalone build, sm_90a) in $kbuild"
cmake -S bench/kernels/gpu -B "$kbuild" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a \
  -DPAGESIM_GPU_DEPS="$root/.gpu-deps" "${launchers[@]}" >/dev/null
cmake --build "$kbuild" -j "$(nproc)" --target kernels_decode_gpu_test kernels_prefill_gpu_test \
  kernels_cache_ops_gpu_test kernels_wgmma_gpu_test kernels_latent_gpu_test pagesim_kernels_bench

echo "== .gpu-stage"
rm -rf "$stage"
mkdir -p "$stage/bin" "$stage/lib" "$stage/batches" "$stage/kernels"
cp "$build/pagesim" "$build/pagesim-cuda" "$stage/bin/"
cp "$kbuild"/tests/kernels/kernels_{decode,prefill,cache_ops,wgmma,latent}_gpu_test "$kbuild/bench/kernels/pagesim_kernels_bench" \
  "$stage/kernels/"
# The fused-MoE kernels of `pagesim profile` (the main build: they live in sim/profile).
cp "$build/tests/sim/sim_profile_moe_kernels_gpu_test" "$stage/kernels/"
# Shared libraries other than glibc's and the CUDA toolkit's (the GPU machine has both).
ldd "$stage"/bin/* "$stage"/kernels/* | awk '$2 == "=>" && $3 ~ /^\// {print $3}' | sort -u |
  while read -r lib; do
  case "$(basename "$lib")" in
    libc.so*|libm.so*|libdl.so*|libpthread.so*|librt.so*|ld-linux*) continue ;;
  esac
  case "$lib" in /usr/local/cuda*) continue ;; esac
  cp -L "$lib" "$stage/lib/"
done
ls "$stage/lib"
bash bench/kernels/gpu_batches.sh "$stage/bin/pagesim" "$stage/batches"
{
  git rev-parse HEAD
  if [ -n "$(git status --porcelain --untracked-files=no)" ]; then echo "uncommitted changes on top"; fi
} >"$stage/commit.txt"
echo "commit: $(tr '\n' ' ' <"$stage/commit.txt")"
du -sh "$root/.gpu-deps" "$stage"
