#!/usr/bin/env bash
# Hardware counters of the headline kernel launches, for tuning (issue #22): Nsight Compute on
# one launch of each of decode b64 x 4k MHA, decode b64 x 4k GQA 32/8, decode b1 x 64k MHA and
# prefill 1 x 4k causal, as pagesim_kernels_bench --quick runs them (the first, identity-table
# launch of each case: a warm-up launch, before the benchmark's stream gate is used).
# Sections: speed of light, memory workload, occupancy, launch statistics, warp states,
# scheduler. Clocks left alone (--clock-control none, METHOD.md).
#   here:    bash bench/kernels/gpu_tune.sh build  (stages the benchmark in .gpu-stage/kernels)
#   device:  run(carry=[".gpu-stage"], command="bash bench/kernels/gpu_ncu.sh", timeout_s=200)
# $OUT: ncu-<case>.txt, one per launch, and ncu.log. Without ncu or a GPU it says so and exits 1.
set -u -o pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
out=${OUT:-$root/out/ncu}
mkdir -p "$out"
export PATH=/usr/local/cuda/bin:$PATH
export LD_LIBRARY_PATH=$root/.gpu-stage/lib:/usr/local/cuda/lib64:/usr/local/cuda/lib:${LD_LIBRARY_PATH:-}
bench=$root/.gpu-stage/kernels/pagesim_kernels_bench
ncu=$(command -v ncu || true)
[ -n "$ncu" ] || { echo "gpu_ncu.sh: ncu not found" | tee "$out/ncu.log"; exit 1; }
[ -x "$bench" ] || { echo "gpu_ncu.sh: no $bench (bash bench/kernels/gpu_tune.sh build)" | tee "$out/ncu.log"; exit 1; }
"$ncu" --version >"$out/ncu.log" 2>&1
sections=(--section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --section LaunchStats
          --section WarpStateStats --section SchedulerStats)
# Launches of one kernel per --quick decode case: 3 warm-ups + 30 timed, identity then paged
# table: 66. The cases run in order MHA (CUDA cores), GQA (tensor cores), 1 x 64k (CUDA cores).
export CUDA_MODULE_LOADING=EAGER  # no module loads while the benchmark's stream gate spins
status=0
for spec in decode-mha:decode:paged_decode_kernel:0 decode-gqa:decode:paged_decode_mma_kernel:0 \
  decode-64k:decode:paged_decode_kernel:66 prefill-4k:prefill:paged_prefill_mma_kernel:0; do
  IFS=: read -r name only kernel skip <<<"$spec"
  timeout 90 "$ncu" --clock-control none -k "regex:$kernel" --launch-skip "$skip" --launch-count 1 "${sections[@]}" \
    "$bench" --quick --only "$only" --repeats 30 >"$out/ncu-$name.txt" 2>>"$out/ncu.log"
  rc=$?
  echo "$name: exit $rc" | tee -a "$out/ncu.log"
  [ $rc = 0 ] || status=1
done
exit $status
