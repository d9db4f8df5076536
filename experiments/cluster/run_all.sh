#!/usr/bin/env bash
# Runs every cluster experiment of issue #14 and regenerates REPORT.md and figures/ beside
# this file.
#   experiments/cluster/run_all.sh            (results in out/cluster/)
# PAGESIM=path/to/pagesim to use an existing binary; otherwise build-main/ is built.
# About 1 CPU-minute of simulation (sweep points go two at a time) once built: every run
# replays its whole trace (no subset or time window).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
out=${OUT:-out/cluster}
. experiments/pagesim_binary.sh
mkdir -p "$out"
# --overwrite: a rerun regenerates every folder (pagesim refuses a folder holding results).
run() { echo "== pagesim run $*"; "$PAGESIM" run "$@" -q --overwrite -j 2 >/dev/null 2>&1; }

# (a) Local caches against a global cache, 10 replicas of 3M tokens: prefix_aware and
# round_robin routing, each local-only and with the peers' caches fetchable over 200 Gbit/s
# (20 µs); and a shared pool as large as the ten local caches together (30M tokens of
# Llama-3-8B KV, 128 KiB a token: 3,662 GiB).
a=$here/mooncake_10x3m.yaml
net="--set replicas.global_cache.bandwidth_gbps=200 --set replicas.global_cache.latency_us=20"
for router in prefix_aware round_robin; do
  run "$a" --out "$out/a_local_$router" --set replicas.router=$router
  run "$a" --out "$out/a_peers_$router" --set replicas.router=$router $net
done
run "$a" --out "$out/a_pool_prefix_aware" $net --set replicas.global_cache.source=shared_pool \
  --set replicas.global_cache.shared_pool_gib=3662

# (b) Offload tiers on sessions: GPU only; CPU tiers of 1, 4, 16 and 64 GiB (transfers serial
# with compute, the default, and the 16 GiB one also overlapped); a 4 GiB CPU tier above
# disk tiers of 16 and 64 GiB.
b=$here/tiers_sessions.yaml
run "$b" --out "$out/b_gpu_only"
for gib in 1 4 16 64; do
  run "$b" --out "$out/b_cpu_$gib" --set "allocator.offload={tiers: [{kind: cpu, capacity_gib: $gib}]}"
done
run "$b" --out "$out/b_cpu_16_overlap" --set "allocator.offload={overlap: true, tiers: [{kind: cpu, capacity_gib: 16}]}"
for gib in 16 64; do
  run "$b" --out "$out/b_disk_$gib" --set "allocator.offload={tiers: [{kind: cpu, capacity_gib: 4}, \
{kind: disk, capacity_gib: $gib, read_gbps: 5, write_gbps: 2, latency_us: 100}]}"
done

# (c) Routers on the Azure conversation trace (the sweep lists all five).
run "$here/routers_azure.yaml" --out "$out/c_routers"

# (d) Co-located against disaggregated (2 prefill + 2 decode) at 4 GPUs, against the rate.
run "$here/disagg_azure.yaml" --out "$out/d_colocated"
run "$here/disagg_azure.yaml" --out "$out/d_disaggregated" --set replicas.disaggregated.prefill=2 \
  --set replicas.disaggregated.transfer_gbps=200 --set replicas.disaggregated.transfer_latency_us=20

bash .ci/python -m pagesim.reports.cluster "$out" "$here"
