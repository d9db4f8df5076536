#!/usr/bin/env bash
# Runs every prefix-cache experiment and regenerates REPORT.md and figures/ beside this file.
#   experiments/prefix_cache/run_all.sh            (results in out/prefix_cache/)
# PAGESIM=path/to/pagesim to use an existing binary; otherwise build-main/ is built.
# About 2.5 CPU-minutes of simulation (runs go two at a time) once built.
set -euo pipefail

# The schedulers of part (b), swept on the conversation trace and on the sessions workload:
# every scheduler.kind pagesim knows (kSchedulerKindNames) that runs with the paged prefix
# cache (sglang over its radix tree, pages of 16). Adding a scheduler is adding its name here.
SCHEDULERS="vllm, vllm-v0, vllm-v1, sarathi, sglang, orca, static"
# The pool sizes (kv.slots, tokens) of part (c), and the same capacities for the idealised
# cache curve: 1M, 3M (the Mooncake paper's local cache: 5,859 hash blocks of 512) and 10M.
CAPACITIES="1048576, 2999808, 9999872"

here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
out=${OUT:-out/prefix_cache}
trace=traces/data/mooncake_conversation_trace.jsonl
. experiments/pagesim_binary.sh
mkdir -p "$out"
# --overwrite: a rerun regenerates every folder (pagesim refuses a folder holding results).
run() { echo "== pagesim run $*"; "$PAGESIM" run "$@" -q --overwrite -j 2 >/dev/null; }

# (a) The trace's own statistics and the idealised curve: once with the trace's 512-token
# hash blocks, partial last block included (the paper's accounting), with fifo and lfu
# simulated at part (c)'s capacities and Fig. 9's 50M; once re-blocked to the simulator's full
# 16-token blocks, fifo and lfu at part (c)'s capacities only (each such pass over 9M blocks
# costs seconds; the LRU curve is one pass whatever the capacities).
echo "== pagesim trace stats / cache-curve $trace"
"$PAGESIM" trace stats "$trace" --json >"$out/trace_stats.json"
caps=${CAPACITIES// /}
"$PAGESIM" trace cache-curve "$trace" --capacity "$caps,50000000" --policy lru,fifo,lfu \
  --out "$out/cache_curve_512.csv" >/dev/null
"$PAGESIM" trace cache-curve "$trace" --block-size 16 --full-blocks-only --capacity "$caps" \
  --policy fifo,lfu --out "$out/cache_curve_16.csv" >/dev/null
run "$here/mooncake_unbounded.yaml" --out "$out/mooncake_unbounded"
# (b) Schedulers.
run "$here/schedulers_conversation.yaml" --out "$out/schedulers_conversation" --set "sweep.scheduler.kind=[$SCHEDULERS]"
run "$here/schedulers_sessions.yaml" --out "$out/schedulers_sessions" --set "sweep.scheduler.kind=[$SCHEDULERS]"
# sglang's waiting-queue order: lpm (its default, above) against fcfs, on both workloads.
for w in conversation sessions; do
  run "$here/schedulers_$w.yaml" --out "$out/sglang_fcfs_$w" --set "sweep.scheduler.kind=[sglang]" \
    --set scheduler.schedule_policy=fcfs
done
# (c) Eviction policies at the same three pool sizes.
run "$here/eviction.yaml" --out "$out/eviction" --set "sweep.kv.slots=[$CAPACITIES]"

bash .ci/python -m pagesim.reports.prefix_cache "$out" "$here"
