#!/usr/bin/env bash
# pagesim's latency against measured vLLM servers: regenerates REPORT.md beside this file.
#   experiments/sim_to_real/run_all.sh        (simulations in out/sim_to_real/)
# PAGESIM=path/to/pagesim to use an existing binary; otherwise build-main/ is built.
# MEASURED=file to use another measured-runs file of the same schema (default: the bundled
# measured/measured_runs.json); every run in it is configured, fitted and reported.
# Steps: (1) each run's experiment from its record (runs/<run>.yaml; one config per run);
# (2) the calibration on all runs (calibration/all.yaml) and, for each run, on the others
# (calibration/loo/<run>.yaml); (3) every run under roofline, operators uncalibrated,
# operators calibrated in sample and out of sample; (4) REPORT.md.
# About 10-15 CPU-minutes once built (simulations go two at a time).
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

echo "== (1) configs: $rel/runs/"
py config "$measured" --out "$rel/runs" --calibration "$rel/calibration/all.yaml" >/dev/null

echo "== (2) calibration on all runs: $rel/calibration/all.yaml"
"$PAGESIM" calibrate --measured "$measured" --configs "$rel/runs" --out "$rel/calibration/all.yaml"
rm -rf "$out"
mkdir -p "$out/logs"
for r in $runs; do
  echo "== (2) calibration without $r"
  "$PAGESIM" calibrate --measured "$measured" --configs "$rel/runs" --exclude "$r" \
    --out "$rel/calibration/loo/$r.yaml" >"$out/logs/calibrate-without-$r.log" 2>&1 ||
    { cat "$out/logs/calibrate-without-$r.log"; exit 1; }
done

echo "== (3) simulations: $out/"
events=$(bash .ci/python -c 'import yaml,sys; print(yaml.safe_load(open(sys.argv[1]))["values"]["client.stream_events_per_token"])' \
  "$rel/calibration/all.yaml")
sim() {  # variant run [--set ...]
  local v=$1 r=$2; shift 2
  "$PAGESIM" run "$rel/runs/$r.yaml" --out "$out/$v/$r" -q "$@"
}
for r in $runs; do  # two at a time; a failure of either stops the script
  sim roofline "$r" --set calibration=none --set cost.kind=roofline --set client.stream_events_per_token="$events" &
  pid=$!
  sim operators "$r" --set calibration=none --set client.stream_events_per_token="$events"
  wait "$pid"
  sim calibrated-in "$r" &
  pid=$!
  sim calibrated-loo "$r" --set calibration="$rel/calibration/loo/$r.yaml"
  wait "$pid"
done

echo "== (4) $rel/REPORT.md"
py report "$measured" "$out" --calibration "$rel/calibration/all.yaml" --out "$rel/REPORT.md" \
  --operator-checks experiments/profiles
