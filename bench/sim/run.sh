#!/usr/bin/env bash
# Whole-simulator benchmark (issue #25): runs each workload with PAGESIM (and BASELINE, a
# second pagesim binary, in turn: new, baseline, new, baseline ...) under /usr/bin/time -v and
# prints, per workload, the medians of wall seconds, CPU seconds (user + system), peak RSS,
# simulator iterations (summary.json) per wall and per CPU second, and CPU microseconds per
# simulated request (requests_arrived) and per iteration, and the medians of the pairwise
# ratios PAGESIM / BASELINE of wall, CPU and peak RSS. On a shared machine quote CPU:
# wall time counts the other processes' turns. bench/sim/README.md describes the workloads.
#   bench/sim/run.sh [-n RUNS] [-N LONG_RUNS] [--only NAME,...] [--keep DIR] PAGESIM [BASELINE]
#   bench/sim/run.sh [...] --per-iteration PAGESIM
#     --per-iteration  the baseline is PAGESIM itself planning every iteration
#                    (--set engine.skip_decode_runs=false): the ratios are the decode-run
#                    engine's against the per-iteration engine, in the same run
#     -n RUNS        runs of each binary on the short workloads (default 3)
#     -N LONG_RUNS   runs on azure-x100, azure-x100-in-memory and synthetic-10m (default 1)
#     --only NAMES   a comma-separated subset of: azure-x1 azure-x10 azure-x100
#                    azure-x100-in-memory azure-x10-10rep synthetic-10m fleet-10 fleet-100
#                    fleet-1000 fleet-4096 fleet-10000 fleet-10-least-kv fleet-1000-least-kv
#                    fleet-10-disagg fleet-1000-disagg (default: all, in that order)
#     --keep DIR     also write the table (results.tsv) and each run's figures (runs.tsv) there
# Needs GNU time (/usr/bin/time) and awk. The concatenated Azure traces are generated under
# a temporary folder (removed at exit), never in the repository.
set -euo pipefail
cd "$(dirname "$0")/../.."

runs=3 long_runs=1 only="" keep="" per_iteration=""
while [ $# -gt 0 ]; do
  case $1 in
    -n) runs=$2; shift 2 ;;
    -N) long_runs=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    --keep) keep=$2; shift 2 ;;
    --per-iteration) per_iteration=1; shift ;;
    -h|--help) sed -n '2,/^set -e/{/^set -e/!p}' "$0"; exit 0 ;;
    -*) echo "run.sh: unknown option $1" >&2; exit 2 ;;
    *) break ;;
  esac
done
if [ $# -lt 1 ] || [ $# -gt 2 ]; then sed -n '2,/^set -e/{/^set -e/!p}' "$0" >&2; exit 2; fi
abs() { case $1 in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
new=$(abs "$1") base=${2:+$(abs "$2")} base_sets=()
if [ -n "$per_iteration" ]; then
  [ -z "$base" ] || { echo "run.sh: --per-iteration takes no BASELINE (its baseline is PAGESIM)" >&2; exit 2; }
  base=$new base_sets=(--set engine.skip_decode_runs=false)
fi
for b in "$new" ${base:+"$base"}; do [ -x "$b" ] || { echo "run.sh: $b is not an executable" >&2; exit 2; }; done
[ -x /usr/bin/time ] || { echo "run.sh: needs GNU time at /usr/bin/time (apt-get install time)" >&2; exit 2; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/pagesim-simbench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

azure=experiments/bench/azure_conv_vllm.yaml
azure10=experiments/bench/azure_conv_10_replicas.yaml
synthetic=experiments/bench/synthetic_1m.yaml
fleet=experiments/bench/fleet_least_outstanding.yaml

# The Azure conversation trace (19,366 requests over 3,502 s) as K copies back to back: copy
# k arrives k * (trace span + one mean gap) later, so the rate and the request mix stay those
# of the trace and only its length grows. Native CSV (traces/native_csv_reader.h).
azure_copies() {
  local k=$1 one="$tmp/azure_x1.csv" out="$tmp/azure_x$1.csv"
  [ -f "$out" ] && { echo "$out"; return; }
  [ -f "$one" ] || "$new" trace gen "$azure" -o "$one" >/dev/null </dev/null
  awk -F, -v k="$k" '
    NR == 1 { header = $0; next }
    { t[NR - 1] = $1; rest[NR - 1] = substr($0, length($1) + 1); n = NR - 1 }
    END {
      period = t[n] + t[n] / (n - 1)
      print header
      for (c = 0; c < k; ++c)
        for (i = 1; i <= n; ++i) printf "%.6f%s\n", t[i] + c * period, rest[i]
    }' "$one" > "$out"
  echo "$out"
}

# Everything in memory (the defaults before 2026-11-27): no latency sample nor backlog entry
# spills to a temporary file, so the run shows what the default bound costs.
in_memory="--set output.latency_samples_in_memory=16777216 --set engine.backlog_in_memory=0"

# name | runs | config | --set overrides (TRACE<k>: the trace x k, its path filled in at run time)
workloads() {
  echo "azure-x1|$runs|$azure|"
  echo "azure-x10|$runs|$azure|TRACE10"
  echo "azure-x100|$long_runs|$azure|TRACE100"
  echo "azure-x100-in-memory|$long_runs|$azure|TRACE100 $in_memory"
  echo "azure-x10-10rep|$runs|$azure10|TRACE10"
  echo "synthetic-10m|$long_runs|$synthetic|--set workload.max_requests=10000000"
  # One load per replica (2 req/s) and the same 72k requests at every size: CPU seconds per
  # request should not grow with the replica count (issue #40).
  echo "fleet-10|$runs|$fleet|"
  echo "fleet-100|$runs|$fleet|--set replicas.count=100 --set workload.arrival.rate=200 --set workload.duration_s=360"
  echo "fleet-1000|$runs|$fleet|--set replicas.count=1000 --set workload.arrival.rate=2000 --set workload.duration_s=36"
  echo "fleet-4096|$long_runs|$fleet|--set replicas.count=4096 --set workload.arrival.rate=8192 --set workload.duration_s=8.789"
  echo "fleet-10000|$long_runs|$fleet|--set replicas.count=10000 --set workload.arrival.rate=20000 --set workload.duration_s=3.6"
  # The same fleets behind the router that reads free KV slots (least_kv), and disaggregated
  # (a quarter prefill, hand-offs routed by least_kv, 400 Gbit/s).
  local kv="--set replicas.router=least_kv" pd="--set replicas.disaggregated.transfer_gbps=400 --set replicas.disaggregated.prefill"
  echo "fleet-10-least-kv|$runs|$fleet|$kv"
  echo "fleet-1000-least-kv|$runs|$fleet|--set replicas.count=1000 --set workload.arrival.rate=2000 --set workload.duration_s=36 $kv"
  echo "fleet-10-disagg|$runs|$fleet|$pd=2"
  echo "fleet-1000-disagg|$runs|$fleet|--set replicas.count=1000 --set workload.arrival.rate=2000 --set workload.duration_s=36 $pd=250"
}

# One run: prints "wall cpu rss_mib iterations requests" (the run's own totals: summary.json's
# top-level fields come before its per-replica ones).
measure() {
  local bin=$1 config=$2; shift 2
  /usr/bin/time -v -o "$tmp/time.txt" "$bin" run "$config" --out "$tmp/out" --overwrite -q "$@" >/dev/null </dev/null
  local iters requests
  iters=$(grep -m1 '"iterations"' "$tmp/out/summary.json" | tr -dc '0-9')
  requests=$(grep -m1 '"requests_arrived"' "$tmp/out/summary.json" | tr -dc '0-9')
  awk -v iters="$iters" -v requests="$requests" '
    /Elapsed \(wall clock\)/ { n = split($NF, p, ":"); wall = 0; for (i = 1; i <= n; ++i) wall = wall * 60 + p[i] }
    /User time/ { cpu += $NF }
    /System time/ { cpu += $NF }
    /Maximum resident set size/ { rss = $NF / 1024 }
    END { printf "%.3f %.3f %.1f %d %d\n", wall, cpu, rss, iters, requests }' "$tmp/time.txt"
}

col() { awk -v c="$2" '{ print $c }' "$1" | median; }
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "nan"; else if (NR % 2) print v[(NR + 1) / 2]; else printf "%.4f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

if [ -n "$keep" ]; then mkdir -p "$keep"; : > "$keep/runs.tsv"; : > "$keep/results.tsv"; fi
header=$(printf '%-16s %4s %9s %9s %8s %11s %11s %9s %8s' workload runs wall_s cpu_s rss_MiB iter/wall_s iter/cpu_s \
  us/req us/iter)
if [ -n "$base" ]; then header+=$(printf ' %9s %9s %9s' wall_ratio cpu_ratio rss_ratio); fi
echo "$header"
if [ -n "$keep" ]; then echo "$header" >> "$keep/results.tsv"; fi
while IFS='|' read -r name n config sets; do
  if [ -n "$only" ] && [[ ",$only," != *",$name,"* ]]; then continue; fi
  case $sets in
    TRACE*)
      trace=${sets%% *} rest=""
      [ "$trace" = "$sets" ] || rest=${sets#* }
      sets="--set workload.trace.path=$(azure_copies "${trace#TRACE}") --set workload.trace.format=native $rest" ;;
  esac
  : > "$tmp/a" ; : > "$tmp/b" ; : > "$tmp/r"
  for ((i = 0; i < n; ++i)); do
    # shellcheck disable=SC2086  # $sets is a list of options
    a=$(measure "$new" "$config" $sets)
    echo "$a" >> "$tmp/a"
    if [ -n "$keep" ]; then echo "$name new $a" >> "$keep/runs.tsv"; fi
    if [ -n "$base" ]; then
      # shellcheck disable=SC2086
      b=$(measure "$base" "$config" $sets "${base_sets[@]}")
      echo "$b" >> "$tmp/b"
      if [ -n "$keep" ]; then echo "$name baseline $b" >> "$keep/runs.tsv"; fi
      paste -d' ' <(echo "$a") <(echo "$b") |
        awk 'function q(x, y) { return y > 0 ? x / y : 0 } { printf "%.4f %.4f %.4f\n", q($1, $6), q($2, $7), q($3, $8) }' >> "$tmp/r"
    fi
  done
  wall=$(col "$tmp/a" 1) cpu=$(col "$tmp/a" 2) rss=$(col "$tmp/a" 3) iters=$(col "$tmp/a" 4) requests=$(col "$tmp/a" 5)
  per_wall=$(awk -v i="$iters" -v s="$wall" 'BEGIN { printf "%.0f", (s > 0 ? i / s : 0) }')
  per_cpu=$(awk -v i="$iters" -v s="$cpu" 'BEGIN { printf "%.0f", (s > 0 ? i / s : 0) }')
  us_req=$(awk -v r="$requests" -v s="$cpu" 'BEGIN { printf "%.2f", (r > 0 ? 1e6 * s / r : 0) }')
  us_iter=$(awk -v i="$iters" -v s="$cpu" 'BEGIN { printf "%.3f", (i > 0 ? 1e6 * s / i : 0) }')
  line=$(printf '%-16s %4d %9.2f %9.2f %8.1f %11s %11s %9s %8s' "$name" "$n" "$wall" "$cpu" "$rss" "$per_wall" "$per_cpu" \
    "$us_req" "$us_iter")
  if [ -n "$base" ]; then
    line+=$(printf ' %9.3f %9.3f %9.3f' "$(col "$tmp/r" 1)" "$(col "$tmp/r" 2)" "$(col "$tmp/r" 3)")
  fi
  echo "$line"
  if [ -n "$keep" ]; then echo "$line" >> "$keep/results.tsv"; fi
done < <(workloads)
