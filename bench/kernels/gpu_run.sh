#!/usr/bin/env bash
# The whole GPU run of the kernels (issue #22) in one device call, within 6 minutes of command
# time (PAGESIM_GPU_BUDGET_S, default 360 s), everything built beforehand on the development
# machine and carried (gpu_prepare.sh): nothing is compiled here. Most valuable first:
#   1. correctness, at once: the kernels' GPU tests against the CPU reference
#      (PAGESIM_REQUIRE_GPU=1: no device is a failure, not a skip), `pagesim validate --device
#      cuda` on the sampled batches of every allocator policy in f32, f16 and bf16, and
#      compute-sanitizer memcheck on a shard of each GPU test binary;
#   2. the benchmark, headline cases first (the targets': decode b64 x 4k MHA and GQA, b1 x 64k;
#      prefill 1 x 4k causal), then the grid, with the identity-table baselines;
#   3. `pagesim profile --device cuda` for llama-2-7b (the measured vLLM runs' dense model), the
#      MoE models mixtral-8x7b and llama-4-scout (fused-MoE layers timed as vLLM runs them, one
#      layer's weights at a time; contexts to 8192) and opt-13b, each with its operator check
#      against the published tables of this device kind;
#   4. the PyTorch SDPA baseline.
# The results page is rewritten after every step, so a run cut off anywhere brings back what it
# measured; each step's time limit is derived from what is left of the budget.
#
# Step by step:
#   a. Here (development machine), once per commit to measure (~10 min on 2 cores from
#      scratch, a minute or two with ccache):
#        bash bench/kernels/gpu_prepare.sh
#      (writes .gpu-deps and .gpu-stage; both ignored by git), then
#        PAGESIM_GPU_DRY_RUN=1 bash bench/kernels/gpu_run.sh
#      (every step that needs no GPU, here: the carried binaries, their libraries, the batch
#      files on the CPU reference, the no-device switch; the rest is printed).
#   b. One call of the device tool:
#        run(carry=[".gpu-stage"], command="bash bench/kernels/gpu_run.sh", timeout_s=420)
#   c. From the files it returns, commit kernels-<device>.md to experiments/results/,
#      profiles.tar's profiles/*.csv to experiments/profiles/ and operators/*.csv beside them.
#
# $OUT (the device tool brings back at most 8 files):
#   kernels-<device>.md   the results page: device, date, commit, commands, every target with its
#                         measured value and pass/miss, tables, tests, memcheck, validate,
#                         profile and operator-check summaries
#   run.log               every step's output
#   kernels_bench.csv     benchmark numbers;  sdpa_baseline.csv  the PyTorch baseline
#   profiles.tar          profiles/<model>-<device>.csv and operators/<model>-<device>.csv (the
#                         operator check) of the four models, in one file (the 8-file cap)
set -u -o pipefail
export PYTHONUNBUFFERED=1
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
dry=${PAGESIM_GPU_DRY_RUN:-0}
[ "$dry" = 0 ] || dry=1
out=${OUT:-$root/out/gpu$([ $dry = 1 ] && echo -dry)}
mkdir -p "$out"
scratch=$(mktemp -d /tmp/pagesim-gpu-run.XXXXXX)
budget=${PAGESIM_GPU_BUDGET_S:-360}
t0=$(date +%s)
elapsed() { echo $(($(date +%s) - t0)); }
left() { echo $((budget - $(elapsed))); }
# cap SECONDS RESERVE: SECONDS, or less so that RESERVE seconds stay for the later steps.
cap() {
  local l=$(($(left) - $2))
  echo $((l < $1 ? l : $1))
}
log=$out/run.log
: >"$log"
timings=()  # "step: N s" for the page
step_start=$t0
step() {
  local now
  now=$(date +%s)
  [ -z "${step_name:-}" ] || timings+=("$step_name: $((now - step_start)) s")
  step_name=$*
  step_start=$now
  echo "== $* ($(left) s left)" | tee -a "$log"
}
note() { echo "$*" | tee -a "$log"; }

# The CUDA toolkit and the carried libraries; the device requirement for every GPU test.
export PATH=/usr/local/cuda/bin:$PATH
stage=$root/.gpu-stage
libpath=$stage/lib:/usr/local/cuda/lib64:/usr/local/cuda/lib
if [ $dry = 0 ]; then export PAGESIM_REQUIRE_GPU=1; else unset PAGESIM_REQUIRE_GPU; fi

step "device and inputs"
device=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
device=${device:-unknown}
[ $dry = 1 ] && device="dry-run"
slug=$(echo "$device" | tr 'A-Z' 'a-z' | sed -e 's/nvidia //' -e 's/[^a-z0-9]\+/-/g' -e 's/-$//')
nvidia-smi >>"$log" 2>&1 || note "nvidia-smi: no driver or device"
sanitizer=$(command -v compute-sanitizer || true)
note "compute-sanitizer: ${sanitizer:-not found}"
commit=$(head -2 "$stage/commit.txt" 2>/dev/null | tr '\n' ' ' | sed 's/ $//')
[ -n "$commit" ] || commit=$(git rev-parse HEAD 2>/dev/null || echo "unknown (run gpu_prepare.sh)")
inputs_ok=1
for need in bin/pagesim bin/pagesim-cuda kernels/kernels_decode_gpu_test kernels/kernels_prefill_gpu_test \
  kernels/kernels_cache_ops_gpu_test kernels/kernels_wgmma_gpu_test kernels/kernels_latent_gpu_test \
  kernels/sim_profile_moe_kernels_gpu_test kernels/pagesim_kernels_bench; do
  [ -x "$stage/$need" ] || { note "missing .gpu-stage/$need: run bench/kernels/gpu_prepare.sh and carry .gpu-stage"; inputs_ok=0; }
done
# A library the image lacks where the toolkit usually is (cuBLAS is the likeliest): look for it
# in the other places a CUDA image keeps one (PyTorch's nvidia wheels).
missing=$(LD_LIBRARY_PATH=$libpath ldd "$stage"/bin/* "$stage"/kernels/* 2>/dev/null | awk '/not found/ {print $1}' | sort -u)
for lib in $missing; do
  found=$(find /usr/local /opt /usr/lib -name "$lib" -print -quit 2>/dev/null)
  if [ -n "$found" ]; then
    libpath=$libpath:$(dirname "$found")
    note "library $lib: $found"
  else
    note "library $lib: not found on this machine"
    inputs_ok=0
  fi
done
export LD_LIBRARY_PATH=$libpath:${LD_LIBRARY_PATH:-}
pagesim=$stage/bin/pagesim
"$pagesim" --help >/dev/null 2>>"$log" || { note "the carried pagesim does not start (see run.log)"; inputs_ok=0; }
batches=("$stage"/batches/*.jsonl)
[ -e "${batches[0]}" ] || { note "no batch files in .gpu-stage/batches"; inputs_ok=0; batches=(); }
note "commit $commit; ${#batches[@]} batch files; inputs ok: $inputs_ok"

# The results page from whatever the steps have written so far.
write_page() {
  local page=$out/kernels-$slug.md
  {
    echo "# Paged-attention kernels on $device"
    echo
    echo "- date: $(date -u +%Y-%m-%dT%H:%MZ)"
    echo "- commit: $commit"
    echo "- command: \`bash bench/kernels/gpu_run.sh\` (device tool, carrying .gpu-stage from"
    echo "  \`bench/kernels/gpu_prepare.sh\`)$([ $dry = 1 ] && echo '; DRY RUN (no GPU): GPU steps not measured')"
    echo "- benchmark: \`pagesim_kernels_bench --csv kernels_bench.csv\` (${bench_state:-not run});"
    echo "  baseline: \`python3 bench/kernels/sdpa_baseline.py --csv sdpa_baseline.csv\` (${sdpa_state:-not run})"
    echo "- decode metric: bytes of K and V read (every context token, every KV head) + Q read + output"
    echo "  written, over the median device time; prefill: 4 x head_dim x visible (query, key) pairs x"
    echo "  query heads (causal) over the median device time. Targets (fp16, head dim 128, block 16):"
    echo "  decode >= 90% of this run's copy bandwidth at batch 64 x 4k x 32 heads, >= 85% with GQA 32/8"
    echo "  and at batch 1 x 64k; paged prefill >= 95% of the identity table and >= 300 TFLOP/s causal at 4k."
    echo "- step times (s): ${timings[*]:-none yet}$([ -n "${step_name:-}" ] && echo "; in progress: $step_name")"
    echo
    echo "## Targets"
    echo
    if [ -f "$scratch/bench.md" ] && grep -q '^### Targets' "$scratch/bench.md"; then
      sed -n '/^### Targets/,$p' "$scratch/bench.md" | tail -n +3
    elif [ $dry = 1 ]; then
      echo "(dry run: no device, nothing measured)"
    else
      echo "(no target summary: the benchmark did not finish (${bench_state:-not run}); the cases it measured are below)"
    fi
    echo
    echo "## Tests against the CPU reference"
    echo
    echo '```'
    [ -f "$scratch/tests.txt" ] && cat "$scratch/tests.txt" || echo "(not run yet)"
    echo '```'
    echo
    echo "## pagesim validate --device $validate_device (sampled batches of every allocator policy)"
    echo
    echo "Batches from \`bench/kernels/gpu_batches.sh\`; \`pagesim validate FILE --device $validate_device --dtype T --head-dim D\`"
    echo "with 4 query / 2 KV heads; D = 64 (labels f32, f16, bf16), and 128 in f16 (label f16-d128: the"
    echo "wgmma prefill kernel on a Hopper GPU). MLA pools (mla_*): the latent kernel, 16 query heads over"
    echo "576-wide latent rows (value 512) in bf16, f16, and fp8 (bf16 queries, cache scale 1/16)."
    echo
    echo '```'
    [ -f "$scratch/validate.txt" ] && sort "$scratch/validate.txt" || echo "(not run yet)"
    echo '```'
    echo
    echo "## compute-sanitizer memcheck"
    echo
    echo '```'
    [ -f "$scratch/memcheck.txt" ] && cat "$scratch/memcheck.txt" || echo "(not run yet)"
    echo '```'
    echo
    echo "## pagesim kernels"
    echo
    if [ -f "$scratch/bench.md" ]; then sed '/^### Targets/,$d' "$scratch/bench.md"; else echo "(no benchmark table)"; fi
    echo
    echo "## pagesim profile --device cuda, and the operator check"
    echo
    [ -f "$scratch/profile.txt" ] && cat "$scratch/profile.txt" || echo "(not run yet)"
    echo
    echo "## PyTorch SDPA on contiguous KV"
    echo
    [ -f "$scratch/sdpa.md" ] && cat "$scratch/sdpa.md" || echo "(no SDPA table)"
  } >"$page.tmp" && mv "$page.tmp" "$page"
}

validate_device=cuda
[ $dry = 1 ] && validate_device=cpu  # here: the binaries, their libraries and the batch files
write_page

step "correctness: GPU tests, validate every policy, memcheck (in parallel)"
correct_s=$(cap 90 200)
# GPU tests: the four binaries at once, each in gtest shards (their CPU reference is the slow
# part, ~580 CPU-seconds for prefill on an H200 machine, which has 16 cores): the wgmma
# layout 1, decode 3, prefill 12, cache ops 1, latent (MLA) 2, the profile's fused-MoE kernels 1.
test_pids=()
for spec in kernels_wgmma_gpu_test:1 kernels_decode_gpu_test:3 kernels_prefill_gpu_test:12 \
  kernels_cache_ops_gpu_test:1 kernels_latent_gpu_test:2 sim_profile_moe_kernels_gpu_test:1; do
  t=${spec%%:*}
  n=${spec#*:}
  for ((i = 0; i < n; i++)); do
    GTEST_TOTAL_SHARDS=$n GTEST_SHARD_INDEX=$i timeout "$correct_s" "$stage/kernels/$t" >"$scratch/test_${t}_$i.txt" 2>&1 &
    test_pids+=("${t}_$i:$!")
  done
done
# memcheck: one shard of each binary (every test under memcheck takes minutes).
filters=("decode:Grid/*d128_b16*:Grid/*d80_b8_g4*:*Options*:*Validation*:Masks/*window7:Masks/*chunk7"
         "prefill:Grid/*d128_b16*:Grid/*d80_b32_g4*:Grid/*d256_b8_g1*:*Options*:*Validation*:Masks/*window7:Masks/*chunk7"
         "cache_ops:Grid/*d80*:*Validation*"
         "latent:*decode_fp8_f16_h16*:*chunk_bf16_h16*:*Validation*")
mc_pids=()
if [ $dry = 0 ] && [ -n "$sanitizer" ]; then
  for f in "${filters[@]}"; do
    name=${f%%:*}
    timeout "$((correct_s - 15))" "$sanitizer" --tool memcheck --error-exitcode 3 --print-limit 20 \
      "$stage/kernels/kernels_${name}_gpu_test" --gtest_filter="${f#*:}" >"$scratch/mc_$name.txt" 2>&1 &
    mc_pids+=("$name:$!")
  done
fi
# validate: every batch file in every dtype at validate's default head_dim (64), and in f16 at
# head_dim 128, where a Hopper GPU runs the wgmma prefill kernel; four at a time.
: >"$scratch/validate.txt"
validate_one() {  # FILE DTYPE HEAD_DIM
  local name rc label
  name=$(basename "$1" .jsonl)
  label=$2$([ "$3" = 64 ] || echo "-d$3")
  local heads=()
  case "$name" in mla_*) heads=(--heads 16) ;; esac
  timeout "$correct_s" "$pagesim" validate "$1" --device "$validate_device" --dtype "$2" --head-dim "$3" "${heads[@]}" \
    >"$scratch/v_${name}_$label.txt" 2>&1
  rc=$?
  echo "$label $name: $(grep -m1 'summary' "$scratch/v_${name}_$label.txt" || tail -1 "$scratch/v_${name}_$label.txt") (exit $rc)" \
    >>"$scratch/validate.txt"
}
export -f validate_one
export scratch correct_s pagesim validate_device
# MLA pools (mla_*.jsonl, latent caches): the latent kernel in bf16, f16 and fp8 (bf16 queries),
# 16 query heads (its rows are token x head: 4 tokens per CTA in a chunk).
validate_total=0
for f in "${batches[@]}"; do
  case "$(basename "$f")" in
    mla_*) for run in "bf16 64" "f16 64" "fp8 64"; do echo "$f $run"; done ;;
    *) for run in "f32 64" "f16 64" "bf16 64" "f16 128"; do echo "$f $run"; done ;;
  esac
done >"$scratch/validate_runs.txt"
validate_total=$(wc -l <"$scratch/validate_runs.txt")
xargs -P 4 -n 3 bash -c 'validate_one "$0" "$1" "$2"' <"$scratch/validate_runs.txt"
validate_pass=$(grep -c 'PASS (exit 0)' "$scratch/validate.txt")
note "validate ($validate_device): $validate_pass of $validate_total runs pass"
cat "$scratch"/v_*.txt >>"$log" 2>/dev/null
test_rc=0
: >"$scratch/tests.txt"
for entry in "${test_pids[@]}"; do
  name=${entry%%:*}
  wait "${entry#*:}"
  rc=$?
  [ $rc = 0 ] || test_rc=1
  {
    echo "-- ${name%_*} shard ${name##*_}: exit $rc$([ $rc = 124 ] && echo ' (cut off by the time budget)')"
    grep -m1 "no CUDA device" "$scratch/test_$name.txt"
    grep -E "tests? from .* ran|^\[  PASSED  \]|^\[  SKIPPED \] [0-9]+ tests?,|^\[  FAILED  \]" \
      "$scratch/test_$name.txt" | head -40
  } >>"$scratch/tests.txt"
  cat "$scratch/test_$name.txt" >>"$log"
done
if [ $dry = 1 ]; then
  # The switch: without a device, a GPU test must fail when PAGESIM_REQUIRE_GPU=1.
  if PAGESIM_REQUIRE_GPU=1 "$stage/kernels/kernels_decode_gpu_test" --gtest_filter='*Large*' >>"$log" 2>&1; then
    echo "PAGESIM_REQUIRE_GPU=1 without a device: GPU test PASSED (the switch is broken)" >>"$scratch/tests.txt"
    test_rc=1
  else
    echo "PAGESIM_REQUIRE_GPU=1 without a device: GPU tests fail, as they must" >>"$scratch/tests.txt"
  fi
fi
: >"$scratch/memcheck.txt"
for entry in "${mc_pids[@]}"; do
  name=${entry%%:*}
  wait "${entry#*:}"
  rc=$?
  {
    echo "-- $name"
    grep -E "ERROR SUMMARY|PASSED|FAILED|tests ran" "$scratch/mc_$name.txt" | tail -4
    [ $rc = 124 ] && echo "cut off by the time budget"
    if [ $rc = 3 ]; then
      awk '/^\[ RUN/ {t = $0} /^========= [A-Z]/ && !seen && t != "" {print "first error in: " t; seen = 1}' \
        "$scratch/mc_$name.txt"
      grep -m 20 -A6 "Invalid\|Error" "$scratch/mc_$name.txt"
    fi
    echo "exit code $rc"
  } >>"$scratch/memcheck.txt"
done
if [ ${#mc_pids[@]} = 0 ]; then
  if [ $dry = 1 ]; then
    echo "dry run: would run ${sanitizer:-compute-sanitizer (not found here)} --tool memcheck on ${filters[*]}" \
      >>"$scratch/memcheck.txt"
  else
    echo "not run (compute-sanitizer not found)" >>"$scratch/memcheck.txt"
  fi
fi
cat "$scratch/tests.txt" "$scratch/memcheck.txt" >>"$log"
write_page

step "benchmark (headline cases first)"
bench_rc=1
# Eager module loading: no kernel is loaded while the benchmark's stream gate spins.
timeout "$(cap 110 95)" env CUDA_MODULE_LOADING=EAGER "$stage/kernels/pagesim_kernels_bench" \
  --csv "$out/kernels_bench.csv" --md "$scratch/bench.md" >>"$log" 2>&1
bench_rc=$?
bench_state="exit $bench_rc$([ $bench_rc = 124 ] && echo ', cut off by the time budget')"
write_page

step "pagesim profile and operator check"
: >"$scratch/profile.txt"
mkdir -p "$scratch/tar/profiles" "$scratch/tar/operators"
# MODEL:CAP:RESERVE (seconds: at most CAP, leaving RESERVE for the steps after it).
for spec in llama-2-7b:60:130 mixtral-8x7b:50:85 llama-4-scout:50:45 opt-13b:45:5; do
  IFS=: read -r model cap_s reserve_s <<<"$spec"
  dest=$scratch/tar/profiles/$model-$slug.csv
  ops=$scratch/tar/operators/$model-$slug.csv
  s=$(cap "$cap_s" "$reserve_s")
  # 64 swap blocks at most: vLLM's swap loop is one copy per block, layer and K/V, and the
  # default 256 would spend most of the profile there; the profile's swap is linear beyond.
  args=(profile --device cuda --model $model --out "$dest" --operators-out "$ops"
        --operator-tables "$root/sim/cost/operator_tables" --max-swap-blocks 64)
  # The MoE models: contexts to 8192 (llama-4-scout's chunked-local layers attend 8192-token
  # chunks, so its profile's full attention is exact there; its 10M context needs no table).
  case $model in mixtral-8x7b|llama-4-scout) args+=(--max-context 8192) ;; esac
  if [ "$s" -le 5 ]; then
    echo "- $model: not run (out of time)" >>"$scratch/profile.txt"
    continue
  fi
  timeout "$s" "$pagesim" "${args[@]}" >"$scratch/p_$model.txt" 2>&1
  rc=$?
  cat "$scratch/p_$model.txt" >>"$log"
  {
    echo "### $model (exit $rc$([ $rc = 124 ] && echo ', cut off by the time budget'))"
    echo
    echo '```'
    cat "$scratch/p_$model.txt"
    echo '```'
    echo
  } >>"$scratch/profile.txt"
  [ $dry = 1 ] && rm -f "$dest" "$ops"
  # After every model: a run cut off later still brings back what was measured.
  if [ -n "$(find "$scratch/tar" -type f -print -quit)" ]; then
    tar -C "$scratch/tar" -cf "$out/profiles.tar.tmp" profiles operators && mv "$out/profiles.tar.tmp" "$out/profiles.tar"
  fi
done
write_page

step "PyTorch SDPA baseline"
timeout "$(cap 40 5)" python3 bench/kernels/sdpa_baseline.py --csv "$out/sdpa_baseline.csv" --md "$scratch/sdpa.md" \
  >>"$log" 2>&1
sdpa_rc=$?
sdpa_state="exit $sdpa_rc"
step "done"
step_name=""
write_page
page=$out/kernels-$slug.md
rm -rf "$scratch"
echo "results: $page ($(elapsed) s of $budget)" | tee -a "$log"
cat "$page"
ok=1
[ $inputs_ok = 1 ] && [ $test_rc = 0 ] && [ "$validate_pass" = "$validate_total" ] || ok=0
[ $dry = 1 ] || { [ $bench_rc = 0 ] || ok=0; }
[ $ok = 1 ] && echo "gpu_run.sh: completed$([ $dry = 1 ] && echo ' (dry run)')" || echo "gpu_run.sh: completed with failures"
[ $ok = 1 ]
