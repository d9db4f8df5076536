#!/usr/bin/env bash
# One device call on a GPU machine: build kernels/ for sm_90, run every kernels test (GPU
# tests included), the benchmark grid, the PyTorch SDPA baseline and compute-sanitizer
# memcheck over the GPU tests; everything lands in $OUT (at most 8 files):
#   run.log               every step's output
#   tests.txt             ctest summary (all kernels tests)
#   memcheck.txt          compute-sanitizer summaries
#   kernels_bench.csv     full benchmark numbers;  sdpa_baseline.csv  the PyTorch baseline
#   kernels-<device>.md   the results page for experiments/results/ (device, date, command,
#                         tables, test and memcheck summaries)
#
# Prepare on the development machine:   bash bench/kernels/gpu_deps.sh
# Then run through the device tool:     carry [".gpu-deps"],
#                                       command "bash bench/kernels/gpu_run.sh"
# Budget: PAGESIM_GPU_BUDGET_S seconds in all (default 560, under the tool's 600 s limit);
# memcheck runs last on a representative subset (PAGESIM_MEMCHECK_FULL=1: every GPU test
# except the 10 GB large-offset one) and is cut off by the budget if need be.
set -u -o pipefail
export PYTHONUNBUFFERED=1
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
out=${OUT:-$root/out/gpu}
mkdir -p "$out"
budget=${PAGESIM_GPU_BUDGET_S:-560}
t0=$(date +%s)
left() { echo $((budget - ($(date +%s) - t0))); }
# cap SECONDS RESERVE: SECONDS, or less so that RESERVE seconds stay for the later steps.
cap() {
  local l=$(($(left) - $2))
  echo $((l < $1 ? l : $1))
}
log=$out/run.log
: >"$log"
step() { echo "== $* ($(left) s left)" | tee -a "$log"; }
# run_for SECONDS CMD...: runs CMD with a time limit, output appended to the log.
run_for() {
  local s=$1
  shift
  if [ "$s" -le 5 ]; then
    echo "skipped (out of time): $*" | tee -a "$log"
    return 124
  fi
  timeout "$s" "$@" >>"$log" 2>&1
}

step "device"
device=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
device=${device:-unknown}
slug=$(echo "$device" | tr 'A-Z' 'a-z' | sed -e 's/nvidia //' -e 's/[^a-z0-9]\+/-/g' -e 's/-$//')
nvidia-smi >>"$log" 2>&1
nvcc --version >>"$log" 2>&1

step "build (sm_90)"
jobs=$(nproc 2>/dev/null || echo 8)
if ! run_for $(($(left) - 300)) cmake -S bench/kernels/gpu -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_CUDA_ARCHITECTURES=90 -DPAGESIM_GPU_DEPS="$root/.gpu-deps" ||
   ! run_for $(($(left) - 240)) cmake --build build-gpu -j "$jobs"; then
  echo "build failed; see run.log" | tee -a "$log"
  tail -40 "$log"
  exit 1
fi

step "tests"
run_for "$(cap 240 220)" ctest --test-dir build-gpu -j 8 --output-on-failure --timeout 300
test_rc=$?
ctest --test-dir build-gpu -N 2>/dev/null | tail -1 >"$out/tests.txt"
grep -E "tests passed|tests failed|Failed|\(Failed\)|\(Timeout\)" "$log" | tail -40 >>"$out/tests.txt"
echo "ctest exit code: $test_rc" >>"$out/tests.txt"
cat "$out/tests.txt"

step "benchmark"
run_for "$(cap 150 130)" build-gpu/bench/kernels/pagesim_kernels_bench --csv "$out/kernels_bench.csv" \
  --md "$out/bench_table.md"
bench_rc=$?

step "PyTorch SDPA baseline"
run_for "$(cap 100 70)" python3 bench/kernels/sdpa_baseline.py --csv "$out/sdpa_baseline.csv" \
  --md "$out/sdpa_table.md"
sdpa_rc=$?

step "compute-sanitizer memcheck"
: >"$out/memcheck.txt"
if [ "${PAGESIM_MEMCHECK_FULL:-0}" = 1 ]; then
  filters=("decode:-*large*" "prefill:*" "cache_ops:*")
else
  filters=("decode:Grid/*d128_b16*:Grid/*d80_b8_g4*:*options*:*validation*"
           "prefill:Grid/*d128_b16*:Grid/*d80_b32_g4*:Grid/*d256_b8_g1*:*options*:*validation*"
           "cache_ops:Grid/*d80*:*validation*")
fi
for f in "${filters[@]}"; do
  name=${f%%:*}
  filter=${f#*:}
  s=$(($(left) - 25))
  echo "-- $name ($filter), limit ${s}s" >>"$out/memcheck.txt"
  if [ "$s" -le 5 ]; then
    echo "not run: out of time" >>"$out/memcheck.txt"
    continue
  fi
  timeout "$s" compute-sanitizer --tool memcheck --error-exitcode 3 --print-limit 20 \
    "build-gpu/tests/kernels/kernels_${name}_gpu_test" --gtest_filter="$filter" >"$out/mc_$name.txt" 2>&1
  rc=$?
  { grep -E "ERROR SUMMARY|PASSED|FAILED|tests ran" "$out/mc_$name.txt" | tail -4
    [ $rc = 124 ] && echo "cut off by the time budget"
    [ $rc = 3 ] && grep -m 20 -A6 "Invalid\|Error" "$out/mc_$name.txt"
    echo "exit code $rc"; } >>"$out/memcheck.txt"
  rm -f "$out/mc_$name.txt"
done
cat "$out/memcheck.txt"

step "results page"
page=$out/kernels-$slug.md
{
  echo "# Paged-attention kernels on $device"
  echo
  echo "- date: $(date -u +%Y-%m-%dT%H:%MZ)"
  echo "- commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo "- command: \`bash bench/kernels/gpu_run.sh\` (device tool, carry .gpu-deps); benchmark:"
  echo "  \`build-gpu/bench/kernels/pagesim_kernels_bench --csv kernels_bench.csv\`, baseline:"
  echo "  \`python3 bench/kernels/sdpa_baseline.py --csv sdpa_baseline.csv\`"
  echo "- decode metric: bytes of K and V read (every context token, every KV head) + Q read +"
  echo "  output written, over the median kernel time; prefill: 4 x head_dim x visible (query, key)"
  echo "  pairs x query heads (causal) over the median time. Targets from the issue: decode >= 2.8"
  echo "  TB/s (batch 64 x 4k, 32 heads), >= 80% of 3.35 TB/s (GQA 32/8; batch 1 x 64k); prefill"
  echo "  >= 300 TFLOP/s causal at 4k and paged >= 90% of identity (contiguous) tables."
  echo
  echo "## pagesim kernels (exit code $bench_rc)"
  echo
  [ -f "$out/bench_table.md" ] && cat "$out/bench_table.md" || echo "(no benchmark table)"
  echo
  echo "## PyTorch SDPA on contiguous KV (exit code $sdpa_rc)"
  echo
  [ -f "$out/sdpa_table.md" ] && cat "$out/sdpa_table.md" || echo "(no SDPA table; see run.log)"
  echo
  echo "## Tests"
  echo
  echo '```'
  cat "$out/tests.txt"
  echo '```'
  echo
  echo "## compute-sanitizer memcheck"
  echo
  echo '```'
  cat "$out/memcheck.txt"
  echo '```'
} >"$page"
rm -f "$out/bench_table.md" "$out/sdpa_table.md"
echo "results: $page ($(left) s left)"
tail -60 "$page"
