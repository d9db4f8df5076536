#!/usr/bin/env bash
# The reference experiments of a refactor ("a refactor changes no result"): runs each into
# OUT (default out/reference) with the given pagesim binary. Compare two such folders with
# experiments/reference/compare.sh A B: every output file must be byte-identical, except
# the host timings (wall_s, *_per_wall_second) in summary.json.
#   experiments/reference/run.sh PAGESIM [OUT]
set -euo pipefail
cd "$(dirname "$0")/../.."
pagesim=$1
out=${2:-out/reference}
rm -rf "$out"
mkdir -p "$out"
"$pagesim" run experiments/vllm_paper/fig2.yaml --out "$out/fig2" -q
"$pagesim" run experiments/vllm_paper/fig15.yaml --out "$out/fig15" -q
"$pagesim" run experiments/reference/mooncake_prefix_cache.yaml --out "$out/mooncake" -q
"$pagesim" run experiments/bench/azure_conv_vllm.yaml --out "$out/azure" -q \
  --set output.iterations_stride=50 --set output.requests_csv=true
echo "reference outputs in $out"
