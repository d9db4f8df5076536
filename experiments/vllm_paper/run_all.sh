#!/usr/bin/env bash
# Runs every vLLM-paper experiment and regenerates REPORT.md and figures/ beside this file.
#   experiments/vllm_paper/run_all.sh            (results in out/vllm_paper/)
# PAGESIM=path/to/pagesim to use an existing binary; otherwise build-main/ is built.
# About 40 s of simulation on 2 cores once built.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
out=${OUT:-out/vllm_paper}
. experiments/pagesim_binary.sh
# --overwrite: a rerun regenerates every folder (pagesim refuses a folder holding results).
run() { echo "== pagesim run $*"; "$PAGESIM" run "$@" -q --overwrite >/dev/null; }

for f in fig2 fig13a fig15 fig15_beam_sensitivity fig12 ablation_block_size ablation_preemption calibration; do
  run "$here/$f.yaml" --out "$out/$f"
done
# The same figures over seeds 0-4, and the calibration cases at the offered loads of
# Fig. 2 (4 req/s) and Fig. 13a (2 req/s, with its 3600-s protocol).
run "$here/fig2.yaml" --out "$out/fig2_seeds" --set 'sweep.seed=[0, 1, 2, 3, 4]' --set output.iterations_stride=0
run "$here/fig13a.yaml" --out "$out/fig13a_seeds" --set 'sweep.seed=[0, 1, 2, 3, 4]' --set output.iterations_stride=0
# Fig. 15 at other offered loads: the artifact gives no rate for its ShareGPT sharing runs.
for rate in 0.5 2 4; do
  run "$here/fig15.yaml" --out "$out/fig15_rate_$rate" --set workload.arrival.rate=$rate
done
run "$here/calibration.yaml" --out "$out/calibration_4rps" --set workload.arrival.rate=4
run "$here/calibration.yaml" --out "$out/calibration_2rps" --set workload.arrival.rate=2 \
  --set workload.duration_s=3600 --set measure.window_start_s=600 --set measure.window_end_s=3600

bash .ci/python -m pagesim.reports.vllm_paper "$out" "$here"
