#!/usr/bin/env bash
# Process start to output for `cloudfit instances` on the full built-in catalog: runs it N times
# (default 50) and prints the mean and fastest wall time in milliseconds.
set -euo pipefail
cd "$(dirname "$0")/.."
binary=${CLOUDFIT:-build/cloudfit}
runs=${1:-50}
times=()
for _ in $(seq "$runs"); do
  start=$(date +%s%N)
  "$binary" instances >/dev/null
  end=$(date +%s%N)
  times+=($(( (end - start) / 1000 )))
done
printf '%s\n' "${times[@]}" | sort -n | awk -v runs="$runs" '
  { sum += $1; if (NR == 1) min = $1; a[NR] = $1 }
  END { printf "cloudfit instances (full built-in catalog), %d runs: mean %.2f ms, min %.2f ms, median %.2f ms\n",
        runs, sum / runs / 1000, min / 1000, a[int((NR + 1) / 2)] / 1000 }'
