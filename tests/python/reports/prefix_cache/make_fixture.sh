#!/usr/bin/env bash
# Regenerates fixtures/results: a miniature of what experiments/prefix_cache/run_all.sh writes,
# small enough to commit. The same YAMLs and commands, on the first 60 requests of the
# conversation trace (40 s of sessions), with run_all.sh's lists shortened to two schedulers
# and two capacities; requests.csv kept only where the report reads it, iterations.csv cut to
# its first 40 rows.
#   tests/python/reports/prefix_cache/make_fixture.sh path/to/pagesim
set -euo pipefail
pagesim=$(realpath "$1")
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
exp=$root/experiments/prefix_cache
out=$here/fixtures/results
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$root"
rm -rf "$out"
mkdir -p "$out"
head -n 60 traces/data/mooncake_conversation_trace.jsonl >"$tmp/trace.jsonl"
"$pagesim" trace stats "$tmp/trace.jsonl" --json >"$out/trace_stats.json"
caps=1048576,2999808
"$pagesim" trace cache-curve "$tmp/trace.jsonl" --capacity $caps,50000000 --policy lru,fifo,lfu \
  --points-per-decade 2 --out "$out/cache_curve_512.csv" >/dev/null
"$pagesim" trace cache-curve "$tmp/trace.jsonl" --block-size 16 --full-blocks-only --capacity $caps \
  --policy fifo,lfu --points-per-decade 2 --out "$out/cache_curve_16.csv" >/dev/null
small=(--set workload.max_requests=60 -q --overwrite)
"$pagesim" run "$exp/mooncake_unbounded.yaml" --out "$out/mooncake_unbounded" "${small[@]}" --set kv.slots=2000000 >/dev/null
"$pagesim" run "$exp/schedulers_conversation.yaml" --out "$out/schedulers_conversation" "${small[@]}" \
  --set 'sweep.scheduler.kind=[vllm, sarathi]' >/dev/null
"$pagesim" run "$exp/schedulers_sessions.yaml" --out "$out/schedulers_sessions" -q --overwrite \
  --set workload.duration_s=40 --set 'sweep.scheduler.kind=[vllm, static]' >/dev/null
"$pagesim" run "$exp/eviction.yaml" --out "$out/eviction" "${small[@]}" --set 'sweep.kv.slots=[1048576, 2999808]' >/dev/null
find "$out" -name requests.csv ! -path '*mooncake_unbounded/00-*' -delete
find "$out" -name iterations.csv | while read -r f; do head -n 41 "$f" >"$f.cut" && mv "$f.cut" "$f"; done
# Warnings name the YAML by absolute path: keep the fixture free of this checkout's location.
find "$out" -name summary.json -exec sed -i "s|$root/||g" {} +
echo "fixture: $out ($(du -sh "$out" | cut -f1))"
