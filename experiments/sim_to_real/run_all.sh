#!/usr/bin/env bash
# pagesim's latency against measured vLLM servers: regenerates REPORT.md beside this file.
#   experiments/sim_to_real/run_all.sh        (simulations in out/sim_to_real/)
# PAGESIM=path/to/pagesim to use an existing binary; otherwise build-main/ is built.
# MEASURED=file to use another measured-runs file of the same schema (default: the bundled
# measured/measured_runs.json); every run in it is configured, fitted and reported.
# Steps: (1) each run's experiment from its record (runs/<run>.yaml; one config per run);
# (2) the calibrations: on all runs (calibration/all.yaml); for each model, on the other models'
# runs (calibration/lomo/<model>.yaml, the headline: transfer to a model never fitted); for
# each TP degree, on the others' (calibration/lotp/tp<N>.yaml, only where the TP degrees do not
# split the runs as the models do); for each run, on the others (calibration/loo/<run>.yaml);
# and the ablations of the terms, leave one model out (calibration/ablation/<term>/<model>.yaml);
# (3) every run under each variant; (4) REPORT.md.
# About 15-20 CPU-minutes once built (simulations go two at a time).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
rel=experiments/sim_to_real
measured=${MEASURED:-$rel/measured/measured_runs.json}
out=${OUT:-out/sim_to_real}
. experiments/pagesim_binary.sh
export PAGESIM
py() { bash .ci/python -m pagesim.reports.sim_to_real "$@"; }
runs=$(bash .ci/python -c 'import json,sys; print(" ".join(r["run"] for r in json.load(open(sys.argv[1]))["runs"]))' "$measured")
models=$(py groups "$measured" --by model)
tps=$(py groups "$measured" --by tp)
# The TP degrees split the runs as the models do (each model ran at one degree): leaving one
# TP degree out is then leaving one model out, and is not fitted twice.
same_split=$([ "$(cut -d' ' -f2 <<<"$models" | sort)" = "$(cut -d' ' -f2 <<<"$tps" | sort)" ] && echo 1 || echo 0)
group_of() {  # groups-listing run -> the group holding the run
  awk -v r="$2" '{ n = split($2, a, ","); for (i = 1; i <= n; i++) if (a[i] == r) print $1 }' <<<"$1"
}

echo "== (1) configs: $rel/runs/"
py config "$measured" --out "$rel/runs" --calibration "$rel/calibration/all.yaml" >/dev/null

rm -rf "$out"
mkdir -p "$out/logs"
calibrate() {  # out-file log-name [calibrate args...]
  local file=$1 log=$2; shift 2
  "$PAGESIM" calibrate --measured "$measured" --configs "$rel/runs" --out "$file" "$@" >"$out/logs/$log.log" 2>&1 ||
    { cat "$out/logs/$log.log"; exit 1; }
}
echo "== (2) calibration on all runs: $rel/calibration/all.yaml"
calibrate "$rel/calibration/all.yaml" calibrate-all
cat "$out/logs/calibrate-all.log"
# Ablations: each term removed (or the old method restored), fitted again without it.
declare -A ablation_fit=(
  [no-memory-ops]="--set cost.operators.memory_ops=false"
  [gpu-scale-fitted]="--fit cost.host.step_s,cost.host.per_seq_s,cost.operators.gpu_scale"
  [fit-to-means]="--statistic mean"
)
declare -A ablation_sim=([no-memory-ops]="--set cost.operators.memory_ops=false" [gpu-scale-fitted]="" [fit-to-means]="")
rm -rf "$rel/calibration/lomo" "$rel/calibration/lotp" "$rel/calibration/loo" "$rel/calibration/ablation"
while read -r group members; do
  echo "== (2) calibration without model $group"
  calibrate "$rel/calibration/lomo/$group.yaml" "calibrate-without-$group" --exclude "$members"
  for a in "${!ablation_fit[@]}"; do
    # shellcheck disable=SC2086
    calibrate "$rel/calibration/ablation/$a/$group.yaml" "calibrate-$a-without-$group" --exclude "$members" ${ablation_fit[$a]}
  done
done <<<"$models"
if [ "$same_split" = 0 ]; then
  while read -r group members; do
    echo "== (2) calibration without $group"
    calibrate "$rel/calibration/lotp/$group.yaml" "calibrate-without-$group" --exclude "$members"
  done <<<"$tps"
fi
for r in $runs; do
  echo "== (2) calibration without $r"
  calibrate "$rel/calibration/loo/$r.yaml" "calibrate-without-$r" --exclude "$r"
done

echo "== (3) simulations: $out/"
events=$(bash .ci/python -c 'import yaml,sys; print(yaml.safe_load(open(sys.argv[1]))["values"]["client.stream_events_per_token"])' \
  "$rel/calibration/all.yaml")
sim() {  # variant run [--set ...]
  local v=$1 r=$2; shift 2
  "$PAGESIM" run "$rel/runs/$r.yaml" --out "$out/$v/$r" -q "$@"
}
for r in $runs; do  # two at a time; a failure of either stops the script
  m=$(group_of "$models" "$r")
  sim roofline "$r" --set calibration=none --set cost.kind=roofline --set client.stream_events_per_token="$events" &
  pid=$!
  sim operators "$r" --set calibration=none --set client.stream_events_per_token="$events"
  wait "$pid"
  sim calibrated-in "$r" &
  pid=$!
  sim calibrated-loo "$r" --set calibration="$rel/calibration/loo/$r.yaml"
  wait "$pid"
  sim calibrated-lomo "$r" --set calibration="$rel/calibration/lomo/$m.yaml" &
  pid=$!
  sim lomo-kv-pagesim "$r" --set calibration="$rel/calibration/lomo/$m.yaml" --set kv.engine=pagesim
  wait "$pid"
  if [ "$same_split" = 0 ]; then
    sim calibrated-lotp "$r" --set calibration="$rel/calibration/lotp/$(group_of "$tps" "$r").yaml"
  fi
  pids=()
  for a in "${!ablation_fit[@]}"; do
    # shellcheck disable=SC2086
    sim "lomo-$a" "$r" --set calibration="$rel/calibration/ablation/$a/$m.yaml" ${ablation_sim[$a]} &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p"; done
done

echo "== (4) $rel/REPORT.md"
py report "$measured" "$out" --calibration "$rel/calibration/all.yaml" --out "$rel/REPORT.md" \
  --operator-checks experiments/profiles --peers "$rel/peers/error_records.csv"
