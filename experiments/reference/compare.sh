#!/usr/bin/env bash
# Compares two folders written by experiments/reference/run.sh: the same files, each
# byte-identical, except the host timings in summary.json and the pagesim version and commit
# that wrote it (pagesim_version, pagesim_commit: folders of two builds differ there by
# design), which are dropped before the comparison; folders written before those fields
# existed compare equal to newer ones. Exit 0 when identical, 1 with the differing files listed otherwise.
#   experiments/reference/compare.sh A B
set -euo pipefail
a=$1 b=$2
strip() { grep -vE '"(wall_s|[a-z_]+_per_wall_second|pagesim_version|pagesim_commit)"' "$1"; }
status=0
if ! diff <(cd "$a" && find . -type f | sort) <(cd "$b" && find . -type f | sort); then
  echo "compare: the two folders hold different files" >&2
  status=1
fi
while IFS= read -r f; do
  [ -f "$b/$f" ] || continue
  if [[ $f == */summary.json ]]; then
    cmp -s <(strip "$a/$f") <(strip "$b/$f") || { echo "differs: $f"; status=1; }
  else
    cmp -s "$a/$f" "$b/$f" || { echo "differs: $f"; status=1; }
  fi
done < <(cd "$a" && find . -type f | sort)
n=$(cd "$a" && find . -type f | wc -l)
[ $status = 0 ] && echo "identical: $n files (host timings and pagesim version/commit in summary.json excluded)"
exit $status
