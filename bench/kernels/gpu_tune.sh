#!/usr/bin/env bash
# One tuning round of the paged-attention kernels in a short device call (issue #22): after
# the full run (gpu_run.sh), change a kernel, then
#   here:    bash bench/kernels/gpu_tune.sh build
#              rebuilds only the kernels' GPU tests and benchmark (standalone build, sm_90a;
#              ~20 s on 2 cores) and stages them in .gpu-stage/kernels (gpu_prepare.sh must
#              have run once: it made .gpu-deps and .gpu-stage)
#            PAGESIM_GPU_DRY_RUN=1 bash bench/kernels/gpu_tune.sh run
#              the run without a GPU: the carried binaries start, the GPU tests skip
#   device:  run(carry=[".gpu-stage"], command="bash bench/kernels/gpu_tune.sh run", timeout_s=200)
#              the GPU tests against the CPU reference (wgmma layout, decode, prefill, cache ops
#              at once, PAGESIM_REQUIRE_GPU=1; PAGESIM_TUNE_SUITES="decode:3" runs only the decode
#              tests in 3 shards, when only decode changed), then the headline benchmark cases alone
#              on the GPU (pagesim_kernels_bench --quick: the copy ceiling, decode b64 x 4k MHA and
#              GQA, b1 x 64k, the kernel comparisons, prefill 1 x 4k and 8k causal on the planned
#              kernel and on mma.sync, with the identity table), within
#              PAGESIM_GPU_BUDGET_S (default 150 s).
# $OUT: tune.md (tests, the headline table and its targets), tune_bench.csv, tune.log.
set -u -o pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
stage=$root/.gpu-stage
mode=${1:-}

if [ "$mode" = build ]; then
  set -e
  kbuild=${PAGESIM_GPU_KERNELS_BUILD:-$root/build-gpu}
  [ -d "$stage/kernels" ] || { echo "gpu_tune.sh: no .gpu-stage/kernels: run bench/kernels/gpu_prepare.sh first" >&2; exit 1; }
  launchers=()
  if command -v ccache >/dev/null 2>&1; then
    launchers=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
  fi
  cmake -S bench/kernels/gpu -B "$kbuild" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a \
    -DPAGESIM_GPU_DEPS="$root/.gpu-deps" "${launchers[@]}" >/dev/null
  cmake --build "$kbuild" -j "$(nproc)" --target kernels_decode_gpu_test kernels_prefill_gpu_test \
    kernels_cache_ops_gpu_test kernels_wgmma_gpu_test pagesim_kernels_bench
  cp "$kbuild"/tests/kernels/kernels_{decode,prefill,cache_ops,wgmma}_gpu_test "$kbuild/bench/kernels/pagesim_kernels_bench" \
    "$stage/kernels/"
  {
    git rev-parse HEAD
    if [ -n "$(git status --porcelain --untracked-files=no)" ]; then echo "uncommitted changes on top"; fi
  } >"$stage/commit.txt"
  echo "staged in $stage/kernels: $(tr '\n' ' ' <"$stage/commit.txt")"
  exit 0
fi
if [ "$mode" != run ]; then
  echo "usage: gpu_tune.sh build | run (got '${mode}')" >&2
  exit 2
fi

dry=${PAGESIM_GPU_DRY_RUN:-0}
[ "$dry" = 0 ] || dry=1
out=${OUT:-$root/out/tune$([ $dry = 1 ] && echo -dry)}
mkdir -p "$out"
budget=${PAGESIM_GPU_BUDGET_S:-150}
t0=$(date +%s)
left() { echo $((budget - ($(date +%s) - t0))); }
export PATH=/usr/local/cuda/bin:$PATH
export LD_LIBRARY_PATH=$stage/lib:/usr/local/cuda/lib64:/usr/local/cuda/lib:${LD_LIBRARY_PATH:-}
if [ $dry = 0 ]; then export PAGESIM_REQUIRE_GPU=1; else unset PAGESIM_REQUIRE_GPU; fi
log=$out/tune.log
: >"$log"
commit=$(head -2 "$stage/commit.txt" 2>/dev/null | tr '\n' ' ')
device=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
[ $dry = 1 ] && device="dry-run"

# Tests: the four binaries at once in gtest shards (wgmma 1, decode 3, prefill 12, cache ops 1: the CPU
# reference is the slow part), at most two thirds of the budget.
test_s=$(($(left) * 2 / 3))
pids=()
for spec in ${PAGESIM_TUNE_SUITES:-wgmma:1 decode:3 prefill:12 cache_ops:1}; do
  t=${spec%%:*}
  n=${spec#*:}
  for ((i = 0; i < n; i++)); do
    GTEST_TOTAL_SHARDS=$n GTEST_SHARD_INDEX=$i timeout "$test_s" "$stage/kernels/kernels_${t}_gpu_test" \
      >"$out/test_${t}_$i.tmp" 2>&1 &
    pids+=("${t}_$i:$!")
  done
done
tests_ok=1
tests=""
for entry in "${pids[@]}"; do
  name=${entry%%:*}
  wait "${entry#*:}"
  rc=$?
  [ $rc = 0 ] || tests_ok=0
  tests+="-- kernels_${name%_*}_gpu_test shard ${name##*_}: exit $rc$([ $rc = 124 ] && echo ' (cut off)')"$'\n'
  tests+=$(grep -E "tests? from .* ran|^\[  PASSED  \]|^\[  SKIPPED \] [0-9]+ tests?,|^\[  FAILED  \]" "$out/test_$name.tmp" | head -30)$'\n'
  cat "$out/test_$name.tmp" >>"$log"
  rm -f "$out/test_$name.tmp"
done

# The headline cases, alone on the GPU.
timeout "$(($(left) - 5))" env CUDA_MODULE_LOADING=EAGER "$stage/kernels/pagesim_kernels_bench" --quick \
  --csv "$out/tune_bench.csv" --md "$out/bench.tmp" >>"$log" 2>&1
bench_rc=$?
{
  echo "# Kernel tuning round on $device"
  echo
  echo "- date: $(date -u +%Y-%m-%dT%H:%MZ); commit: $commit"
  echo "- command: \`bash bench/kernels/gpu_tune.sh run\`; benchmark \`pagesim_kernels_bench --quick\` exit $bench_rc"
  echo "- time: $(($(date +%s) - t0)) s of $budget"
  echo
  echo "## Tests against the CPU reference"
  echo
  echo '```'
  printf '%s' "$tests"
  echo '```'
  echo
  echo "## Headline cases"
  echo
  [ -f "$out/bench.tmp" ] && cat "$out/bench.tmp" || echo "(no benchmark output)"
} >"$out/tune.md"
rm -f "$out/bench.tmp"
cat "$out/tune.md"
[ $tests_ok = 1 ] && { [ $dry = 1 ] || [ $bench_rc = 0 ]; }
