#!/usr/bin/env bash
# The wider set a change to the engine's hot paths is checked against (about 370 files, under
# a minute): run.sh's reference experiments; every YAML of experiments/cluster,
# modern_kv and heterogeneous_kv (cut to a minute of arrivals where the file allows it); and
# fleets that reach what those leave out: decode runs deferred in a fleet, routers that read
# free slots, decode runs off, every iteration's row, and disaggregated prefill/decode with
# three decode routers, thousands of preemptions, hand-offs that wait for room, parallel
# sampling and beam search. Compare two such folders with compare.sh A B.
#   experiments/reference/run_wide.sh PAGESIM [OUT]
set -euo pipefail
cd "$(dirname "$0")/../.."
pagesim=$1
out=${2:-out/reference-wide}
rm -rf "$out"
mkdir -p "$out"
experiments/reference/run.sh "$pagesim" "$out/reference" > /dev/null
run() { "$pagesim" run "$@" -q > /dev/null; }
for yaml in experiments/cluster/*.yaml experiments/modern_kv/*.yaml experiments/heterogeneous_kv/*.yaml; do
  name=$(basename "$(dirname "$yaml")")_$(basename "$yaml" .yaml)
  # A trace-driven file may refuse a duration; it then runs as written.
  run "$yaml" --out "$out/$name" --set workload.duration_s=60 2> /dev/null ||
    run "$yaml" --out "$out/$name" --overwrite
done
run experiments/bench/azure_conv_10_replicas.yaml --out "$out/azure_10_replicas"
fleet=experiments/bench/fleet_least_outstanding.yaml
run $fleet --out "$out/fleet_10" --set workload.duration_s=600
run $fleet --out "$out/fleet_50_rows" --set replicas.count=50 --set workload.arrival.rate=100 \
  --set workload.duration_s=30 --set output.iterations_stride=1 --set output.requests_csv=true
run $fleet --out "$out/fleet_200_least_kv" --set replicas.count=200 --set workload.arrival.rate=400 \
  --set workload.duration_s=30 --set replicas.router=least_kv
run $fleet --out "$out/fleet_200_no_runs" --set replicas.count=200 --set workload.arrival.rate=400 \
  --set workload.duration_s=30 --set engine.skip_decode_runs=false
link="--set replicas.disaggregated.transfer_gbps=200 --set replicas.disaggregated.transfer_latency_us=20"
run experiments/cluster/disagg_azure.yaml --out "$out/disagg_azure" --set replicas.disaggregated.prefill=2 $link \
  --set output.requests_csv=true
run $fleet --out "$out/disagg_100" --set replicas.count=100 --set workload.arrival.rate=200 \
  --set workload.duration_s=30 --set replicas.disaggregated.prefill=30 $link --set output.requests_csv=true
run $fleet --out "$out/disagg_40_least_kv_rows" --set replicas.count=40 --set workload.arrival.rate=80 \
  --set workload.duration_s=60 --set replicas.disaggregated.prefill=12 $link \
  --set replicas.disaggregated.decode_router=least_kv --set output.requests_csv=true --set output.iterations_stride=1
# A slow link: decode pools fill, thousands of preemptions.
run $fleet --out "$out/disagg_40_slow_link" --set replicas.count=40 --set workload.arrival.rate=120 \
  --set workload.duration_s=60 --set replicas.disaggregated.prefill=8 --set replicas.disaggregated.transfer_gbps=5 \
  --set replicas.disaggregated.transfer_latency_us=2000 --set output.requests_csv=true
# Overloaded decode pools: hand-offs wait for room (Simulation::undefer_runs).
run $fleet --out "$out/disagg_200_waits" --set replicas.count=200 --set workload.arrival.rate=900 \
  --set workload.duration_s=60 --set replicas.disaggregated.prefill=60 --set replicas.disaggregated.transfer_gbps=20 \
  --set replicas.disaggregated.transfer_latency_us=200 --set replicas.disaggregated.decode_router=least_kv \
  --set replicas.router=round_robin --set output.requests_csv=true
run $fleet --out "$out/disagg_12_sampling" --set replicas.count=12 --set workload.arrival.rate=30 \
  --set workload.duration_s=60 --set replicas.disaggregated.prefill=4 $link \
  --set "workload.sampling=[{weight: 1, n: 2}, {weight: 1, beam_width: 2}, {weight: 2, n: 1}]" \
  --set output.requests_csv=true --set output.iterations_stride=1
echo "wide reference outputs in $out: $(find "$out" -type f | wc -l) files"
