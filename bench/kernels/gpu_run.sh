#!/usr/bin/env bash
# The whole GPU run of the kernels (issue #10) in one device call, within ~8 minutes:
#   1. build kernels/, tests/kernels and bench/kernels for sm_90 (standalone build), while the
#      carried pagesim validates the sampled batches of every allocator policy on the CUDA
#      kernels (f32, f16, bf16);
#   2. every kernels test against the CPU reference (PAGESIM_REQUIRE_GPU=1: no device is a
#      failure, not a skip) and, at the same time, compute-sanitizer memcheck sharded over the
#      three GPU test binaries;
#   3. the benchmark grid (paged vs identity tables, targets relative to this device);
#   4. `pagesim profile --device cuda` for opt-13b and llama-3-8b;
#   5. the PyTorch SDPA baseline;
#   6. the results page.
# Every step has a time limit derived from what is left of PAGESIM_GPU_BUDGET_S (default
# 480 s = 8 min); a step cut off keeps what it wrote, and the page says so.
#
# Step by step:
#   a. Here (development machine), once per commit to measure (~10 min on 2 cores):
#        bash bench/kernels/gpu_prepare.sh
#      (writes .gpu-deps and .gpu-stage; both ignored by git, ~25 MB together), then
#        PAGESIM_GPU_DRY_RUN=1 bash bench/kernels/gpu_run.sh
#      (every step that needs no GPU, here: the standalone build, the CPU tests, the
#      no-device switch, the carried binary and batch files; the rest is printed).
#   b. One call of the device tool:
#        run(carry=[".gpu-deps", ".gpu-stage"], command="bash bench/kernels/gpu_run.sh",
#            timeout_s=600)
#   c. From the files it returns, commit kernels-<device>.md to experiments/results/ and
#      profiles/<model>-<device>.csv to experiments/profiles/.
#
# $OUT (at most 8 files come back):
#   kernels-<device>.md       the results page: device, date, commit, commands, every target
#                             with its measured value and pass/miss, tables, test, memcheck
#                             and validate summaries
#   kernels_bench.csv         benchmark numbers;  sdpa_baseline.csv  the PyTorch baseline
#   memcheck.txt  validate.txt  run.log (every step's output)
#   profiles/opt-13b-<device>.csv  profiles/llama-3-8b-<device>.csv
set -u -o pipefail
export PYTHONUNBUFFERED=1
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
dry=${PAGESIM_GPU_DRY_RUN:-0}
[ "$dry" = 0 ] || dry=1
out=${OUT:-$root/out/gpu$([ $dry = 1 ] && echo -dry)}
mkdir -p "$out/profiles"
scratch=$(mktemp -d /tmp/pagesim-gpu-run.XXXXXX)
budget=${PAGESIM_GPU_BUDGET_S:-480}
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
note() { echo "$*" | tee -a "$log"; }
# run_for SECONDS CMD...: CMD with a time limit, output appended to the log; 124 = cut off.
run_for() {
  local s=$1
  shift
  if [ "$s" -le 5 ]; then
    note "skipped (out of time): $*"
    return 124
  fi
  timeout "$s" "$@" >>"$log" 2>&1
}

# The CUDA toolkit and the carried libraries; the device requirement for every GPU test.
export PATH=/usr/local/cuda/bin:$PATH
stage=$root/.gpu-stage
pagesim_env=(env "LD_LIBRARY_PATH=$stage/lib:/usr/local/cuda/lib64:/usr/local/cuda/lib:${LD_LIBRARY_PATH:-}")
pagesim=("${pagesim_env[@]}" "$stage/bin/pagesim")
if [ $dry = 0 ]; then export PAGESIM_REQUIRE_GPU=1; else unset PAGESIM_REQUIRE_GPU; fi
jobs=$(nproc 2>/dev/null || echo 8)

step "device and inputs"
device=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
device=${device:-unknown}
[ $dry = 1 ] && device="dry-run"
slug=$(echo "$device" | tr 'A-Z' 'a-z' | sed -e 's/nvidia //' -e 's/[^a-z0-9]\+/-/g' -e 's/-$//')
nvidia-smi >>"$log" 2>&1 || note "nvidia-smi: no driver or device"
nvcc --version >>"$log" 2>&1 || note "nvcc not found (PATH=$PATH)"
sanitizer=$(command -v compute-sanitizer || true)
note "compute-sanitizer: ${sanitizer:-not found}"
commit=$(head -2 "$stage/commit.txt" 2>/dev/null | tr '\n' ' ' | sed 's/ $//')
[ -n "$commit" ] || commit=$(git rev-parse HEAD 2>/dev/null || echo "unknown (run gpu_prepare.sh)")
inputs_ok=1
for need in .gpu-deps/eigen3/Eigen/Dense .gpu-deps/googletest/CMakeLists.txt .gpu-stage/bin/pagesim \
  .gpu-stage/bin/pagesim-cuda; do
  [ -e "$need" ] || { note "missing $need: run bench/kernels/gpu_prepare.sh and carry .gpu-deps and .gpu-stage"; inputs_ok=0; }
done
"${pagesim[@]}" --help >/dev/null 2>>"$log" || { note "the carried pagesim does not start (see run.log)"; inputs_ok=0; }
batches=("$stage"/batches/*.jsonl)
[ -e "${batches[0]}" ] || { note "no batch files in .gpu-stage/batches"; inputs_ok=0; batches=(); }
note "commit $commit; ${#batches[@]} batch files; inputs ok: $inputs_ok"

step "build (sm_90, -j$jobs) and, meanwhile, pagesim validate"
launchers=()
if [ $dry = 1 ] && command -v ccache >/dev/null 2>&1; then
  launchers=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
fi
# Each step's limit leaves the later steps their minimum useful time: tests 60 s, benchmark
# 60 s, two profiles 40 s each, SDPA 25 s, page 5 s.
build_s=$(cap 240 230)
[ $dry = 1 ] && build_s=1800  # 2 shared cores here
(
  timeout "$build_s" cmake -S bench/kernels/gpu -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CUDA_ARCHITECTURES=90 -DPAGESIM_GPU_DEPS="$root/.gpu-deps" "${launchers[@]}" &&
    timeout "$build_s" cmake --build build-gpu -j "$jobs"
) >"$scratch/build.log" 2>&1 &
build_pid=$!
validate_device=cuda
[ $dry = 1 ] && validate_device=cpu  # here: the binary, its libraries and the batch files
: >"$out/validate.txt"
validate_fail=0
for dt in f32 f16 bf16; do
  for f in "${batches[@]}"; do
    name=$(basename "$f" .jsonl)
    s=$(cap 30 260)
    if [ "$s" -le 5 ]; then
      echo "$dt $name: not run (out of time)" >>"$out/validate.txt"
      validate_fail=1
      continue
    fi
    timeout "$s" "${pagesim[@]}" validate "$f" --device $validate_device --dtype $dt >"$scratch/v.txt" 2>&1
    rc=$?
    [ $rc = 0 ] || validate_fail=1
    { echo "-- $dt $name (exit $rc)"; cat "$scratch/v.txt"; } >>"$log"
    echo "$dt $name: $(grep -m1 'summary' "$scratch/v.txt" || tail -1 "$scratch/v.txt") (exit $rc)" >>"$out/validate.txt"
  done
done
[ ${#batches[@]} -gt 0 ] || { echo "no batch files" >>"$out/validate.txt"; validate_fail=1; }
note "validate ($validate_device): $(grep -c 'exit 0' "$out/validate.txt") of $((3 * ${#batches[@]})) runs pass"
wait $build_pid
build_rc=$?
cat "$scratch/build.log" >>"$log"
note "build exit code $build_rc"
if [ $build_rc != 0 ]; then
  tail -40 "$scratch/build.log"
fi

step "tests (PAGESIM_REQUIRE_GPU=${PAGESIM_REQUIRE_GPU:-unset}) and, meanwhile, memcheck"
: >"$out/memcheck.txt"
if [ "${PAGESIM_MEMCHECK_FULL:-0}" = 1 ]; then
  filters=("decode:-*Large*" "prefill:-*Large*" "cache_ops:-*Large*")
else
  filters=("decode:Grid/*d128_b16*:Grid/*d80_b8_g4*:*Options*:*Validation*"
           "prefill:Grid/*d128_b16*:Grid/*d80_b32_g4*:Grid/*d256_b8_g1*:*Options*:*Validation*"
           "cache_ops:Grid/*d80*:*Validation*")
fi
test_s=$(cap 150 170)
mc_pids=()
declare -A mc_filter
if [ $build_rc = 0 ] && [ $dry = 0 ] && [ -n "$sanitizer" ]; then
  for f in "${filters[@]}"; do
    name=${f%%:*}
    mc_filter[$name]=${f#*:}
    timeout "$test_s" "$sanitizer" --tool memcheck --error-exitcode 3 --print-limit 20 \
      "build-gpu/tests/kernels/kernels_${name}_gpu_test" --gtest_filter="${f#*:}" >"$scratch/mc_$name.txt" 2>&1 &
    mc_pids+=("$name:$!")
  done
fi
test_rc=1
if [ $build_rc = 0 ]; then
  run_for "$test_s" ctest --test-dir build-gpu -j 8 --output-on-failure --timeout 240
  test_rc=$?
fi
{
  echo "ctest exit code: $test_rc"
  grep -E "tests passed|tests failed" "$log" | tail -1
  grep -E "\((Failed|Timeout|Not Run)\)" "$log" | head -40
} >"$scratch/tests.txt"
if [ $dry = 1 ] && [ $build_rc = 0 ]; then
  # The switch: without a device, a GPU test must fail when PAGESIM_REQUIRE_GPU=1.
  if PAGESIM_REQUIRE_GPU=1 build-gpu/tests/kernels/kernels_decode_gpu_test --gtest_filter='*Large*' >>"$log" 2>&1; then
    echo "PAGESIM_REQUIRE_GPU=1 without a device: GPU test PASSED (the switch is broken)" >>"$scratch/tests.txt"
    test_rc=1
  else
    echo "PAGESIM_REQUIRE_GPU=1 without a device: GPU tests fail, as they must" >>"$scratch/tests.txt"
  fi
fi
cat "$scratch/tests.txt" | tee -a "$log"
for entry in "${mc_pids[@]}"; do
  name=${entry%%:*}
  wait "${entry#*:}"
  rc=$?
  {
    echo "-- $name (${mc_filter[$name]})"
    grep -E "ERROR SUMMARY|PASSED|FAILED|tests ran" "$scratch/mc_$name.txt" | tail -4
    [ $rc = 124 ] && echo "cut off by the time budget"
    [ $rc = 3 ] && grep -m 20 -A6 "Invalid\|Error" "$scratch/mc_$name.txt"
    echo "exit code $rc"
  } >>"$out/memcheck.txt"
done
if [ ${#mc_pids[@]} = 0 ]; then
  if [ $dry = 1 ]; then
    echo "dry run: would run, in parallel, ${sanitizer:-compute-sanitizer (not found here)} --tool memcheck on" \
      "${filters[*]}" >>"$out/memcheck.txt"
  else
    echo "not run (build failed or compute-sanitizer not found)" >>"$out/memcheck.txt"
  fi
fi
cat "$out/memcheck.txt" >>"$log"

step "benchmark"
bench_rc=1
if [ $build_rc = 0 ]; then
  # Eager module loading: no kernel is loaded while the benchmark's stream gate spins.
  run_for "$(cap 100 110)" env CUDA_MODULE_LOADING=EAGER build-gpu/bench/kernels/pagesim_kernels_bench --csv "$out/kernels_bench.csv" \
    --md "$scratch/bench.md"
  bench_rc=$?
fi

step "pagesim profile"
profile_rc=()
for model in opt-13b llama-3-8b; do
  dest=$out/profiles/$model-$slug.csv
  if [ $dry = 1 ]; then
    # No device here: the command must stop with its no-device message (CUDA is compiled in).
    "${pagesim[@]}" profile --device cuda --model $model --out "$dest" >>"$log" 2>&1
    rc=$?
    rm -f "$dest"
    profile_rc+=("$model: dry run, exit $rc without a device")
    continue
  fi
  run_for "$(cap 90 $([ $model = opt-13b ] && echo 70 || echo 30))" "${pagesim[@]}" profile --device cuda \
    --model $model --out "$dest"
  profile_rc+=("$model: exit $?")
done
rmdir "$out/profiles" 2>/dev/null

step "PyTorch SDPA baseline"
run_for "$(cap 60 5)" python3 bench/kernels/sdpa_baseline.py --csv "$out/sdpa_baseline.csv" --md "$scratch/sdpa.md"
sdpa_rc=$?

step "results page"
page=$out/kernels-$slug.md
{
  echo "# Paged-attention kernels on $device"
  echo
  echo "- date: $(date -u +%Y-%m-%dT%H:%MZ)"
  echo "- commit: $commit"
  echo "- command: \`bash bench/kernels/gpu_run.sh\` (device tool, carry .gpu-deps and .gpu-stage from"
  echo "  \`bench/kernels/gpu_prepare.sh\`)$([ $dry = 1 ] && echo '; DRY RUN (no GPU): GPU steps not measured')"
  echo "- benchmark: \`build-gpu/bench/kernels/pagesim_kernels_bench --csv kernels_bench.csv\` (exit $bench_rc);"
  echo "  baseline: \`python3 bench/kernels/sdpa_baseline.py --csv sdpa_baseline.csv\` (exit $sdpa_rc)"
  echo "- decode metric: bytes of K and V read (every context token, every KV head) + Q read + output"
  echo "  written, over the median device time; prefill: 4 x head_dim x visible (query, key) pairs x"
  echo "  query heads (causal) over the median device time. Targets (fp16, head dim 128, block 16):"
  echo "  decode >= 90% of this run's copy bandwidth at batch 64 x 4k x 32 heads, >= 85% with GQA 32/8"
  echo "  and at batch 1 x 64k; paged prefill >= 95% of the identity table and >= 300 TFLOP/s causal at 4k."
  echo
  echo "## Targets"
  echo
  if [ -f "$scratch/bench.md" ] && grep -q '^### Targets' "$scratch/bench.md"; then
    sed -n '/^### Targets/,$p' "$scratch/bench.md" | tail -n +3
  else
    if [ $dry = 1 ]; then echo "(dry run: no device, nothing measured)"
    else echo "(no target summary: the benchmark did not finish, exit $bench_rc; see the table and run.log)"; fi
  fi
  echo
  echo "## pagesim kernels"
  echo
  if [ -f "$scratch/bench.md" ]; then sed '/^### Targets/,$d' "$scratch/bench.md"; else echo "(no benchmark table)"; fi
  echo
  echo "## PyTorch SDPA on contiguous KV"
  echo
  [ -f "$scratch/sdpa.md" ] && cat "$scratch/sdpa.md" || echo "(no SDPA table; see run.log)"
  echo
  echo "## Tests"
  echo
  echo '```'
  cat "$scratch/tests.txt"
  echo '```'
  echo
  echo "## compute-sanitizer memcheck"
  echo
  echo '```'
  cat "$out/memcheck.txt"
  echo '```'
  echo
  echo "## pagesim validate --device $validate_device (sampled batches of every allocator policy)"
  echo
  echo "Batches from \`bench/kernels/gpu_batches.sh\` (the simulations of tests/sim/validate/validate_policies_test.cpp);"
  echo "\`pagesim validate FILE --device $validate_device --dtype T\` with its defaults (4 query / 2 KV heads, head_dim 64)."
  echo
  echo '```'
  cat "$out/validate.txt"
  echo '```'
  echo
  echo "## pagesim profile --device cuda"
  echo
  for p in "${profile_rc[@]}"; do echo "- $p"; done
  ls "$out"/profiles/*.csv 2>/dev/null | sed "s|^$out/|- written: |"
} >"$page"
rm -rf "$scratch"
echo "results: $page ($(left) s left)" | tee -a "$log"
cat "$page"
ok=1
[ $inputs_ok = 1 ] && [ $build_rc = 0 ] && [ $test_rc = 0 ] && [ $validate_fail = 0 ] || ok=0
[ $dry = 1 ] || { [ $bench_rc = 0 ] || ok=0; }
[ $ok = 1 ] && echo "gpu_run.sh: completed$([ $dry = 1 ] && echo ' (dry run)')" || echo "gpu_run.sh: completed with failures"
[ $ok = 1 ]
