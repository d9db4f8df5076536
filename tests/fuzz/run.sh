#!/usr/bin/env bash
# Builds the libFuzzer harnesses of tests/fuzz with Clang (ASan + UBSan, its own build
# folder) and runs each for a bounded time. Fails (exit 1) when a harness finds a crash, a
# leak, undefined behaviour, an uncaught exception, a timeout or an out-of-memory, and
# prints the reproducer; exit 2 when the harnesses cannot be built.
#
#   tests/fuzz/run.sh [SECONDS [HARNESS...]]     SECONDS per harness, default 30; all by default
#
# Environment: PAGESIM_FUZZ_BUILD (build folder, default build-fuzz; one configured with
# PAGESIM_FUZZ=ON already is used as it is), PAGESIM_FUZZ_JOBS
# (harnesses run at once, default nproc), PAGESIM_FUZZ_FLAGS (more libFuzzer flags, after
# the defaults, e.g. -seed=1 or -timeout=5). Each run starts by replaying the committed corpus
# (tests/fuzz/corpus/<harness>, reproducers of fixed bugs included), then mutates; inputs
# it finds go to $PAGESIM_FUZZ_BUILD/corpus/<harness>, never into the tree.
# Reproduce a finding: $PAGESIM_FUZZ_BUILD/tests/fuzz/<harness>_fuzz <reproducer>
set -euo pipefail
cd "$(dirname "$0")/../.."
seconds=${1:-30}
shift || true
build=${PAGESIM_FUZZ_BUILD:-build-fuzz}
jobs=${PAGESIM_FUZZ_JOBS:-$(nproc 2>/dev/null || echo 2)}
all=(native_csv_reader vidur_csv_reader azure_csv_reader mooncake_reader lengths_csv_reader trace_format
     experiment_config build_run)
harnesses=("$@")
[ ${#harnesses[@]} -gt 0 ] || harnesses=("${all[@]}")

# Longest input per harness: a few screens of a trace, a long experiment file.
max_len() {
  case $1 in
    experiment_config|build_run) echo 4096 ;;
    *) echo 8192 ;;
  esac
}

start=$(date +%s)
# A folder already configured with PAGESIM_FUZZ=ON is built as it is (CI's ASan build, whose
# tests then share the instrumented libraries: .ci/test); any other is configured here.
configure() {
  local launcher=()
  command -v ccache >/dev/null 2>&1 && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
    -DPAGESIM_FUZZ=ON -DPAGESIM_ENABLE_CUDA=OFF -DPAGESIM_BUILD_TESTS=OFF -DPAGESIM_BUILD_BENCH=OFF \
    "${launcher[@]}" >/dev/null
}
if grep -qs '^PAGESIM_FUZZ:BOOL=ON$' "$build/CMakeCache.txt"; then
  echo "fuzz: building in $build as it is configured"
elif ! configure; then
  echo "fuzz: cannot configure $build" >&2
  exit 2
fi
if ! cmake --build "$build" -j "$jobs" --target "${harnesses[@]/%/_fuzz}"; then
  echo "fuzz: the harnesses do not build" >&2
  exit 2
fi
built=$(date +%s)

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
logs=$build/fuzz-logs
mkdir -p "$logs"

run_one() {
  local h=$1 dict=()
  local work=$build/corpus/$h artifacts=$build/fuzz-artifacts/$h
  mkdir -p "$work" "$artifacts"
  case $h in experiment_config|build_run) dict=(-dict=tests/fuzz/experiment.dict) ;; esac
  "$build/tests/fuzz/${h}_fuzz" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -max_len="$(max_len "$h")" -print_final_stats=1 -artifact_prefix="$artifacts/" "${dict[@]}" ${PAGESIM_FUZZ_FLAGS:-} \
    "$work" "tests/fuzz/corpus/$h" >"$logs/$h.log" 2>&1
}

failed=()
report() {
  local h=$1 rc=$2 log=$logs/$1.log
  local execs rate
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  if [ "$rc" -eq 0 ]; then
    printf 'fuzz: %-20s ok   %8s execs  %6s/s\n' "$h" "${execs:-?}" "${rate:-?}"
  else
    failed+=("$h")
    printf 'fuzz: %-20s FAIL (exit %s), log %s\n' "$h" "$rc" "$log"
    grep -E '^(==[0-9]+==ERROR|SUMMARY|.*runtime error|ALARM|.*uncaught exception|==[0-9]+== ERROR)' "$log" | head -5 || true
    sed -n 's/^.*Test unit written to \(.*\)$/  reproducer: \1/p' "$log"
    echo "  reproduce: $build/tests/fuzz/${h}_fuzz <reproducer>"
  fi
}

# Run `jobs` harnesses at a time; report in the order given.
pending=("${harnesses[@]}")
while [ ${#pending[@]} -gt 0 ]; do
  batch=("${pending[@]:0:$jobs}")
  pending=("${pending[@]:$jobs}")
  pids=()
  for h in "${batch[@]}"; do
    run_one "$h" &
    pids+=($!)
  done
  for i in "${!batch[@]}"; do
    rc=0
    wait "${pids[$i]}" || rc=$?
    report "${batch[$i]}" "$rc"
  done
done

echo "fuzz: ${#harnesses[@]} harnesses, ${seconds} s each, $jobs at a time: built in $((built - start)) s," \
  "ran in $(($(date +%s) - built)) s"
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: findings in ${failed[*]}" >&2
  exit 1
fi
