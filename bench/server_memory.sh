#!/usr/bin/env bash
# The most the server keeps for repeated work: fills its caches on purpose (WORKLOADS distinct
# workloads, default 32, the number it keeps, x 4 budgets, its sets of pricing options per
# workload, x 3 objectives x with and without all regions) and prints its resident memory as it
# grows. Needs curl. Usage: bench/server_memory.sh [workloads]
set -euo pipefail
cd "$(dirname "$0")/.."
binary=${CLOUDFIT:-build/cloudfit}
workloads=${1:-32}
# Exit status 77 (a skip for CTest) without curl.
command -v curl >/dev/null || { echo "curl is not installed (apt-get install curl)" >&2; exit 77; }
source bench/start_server.sh
THREADS=2 start_server
echo "server RSS at start: $(rss_kib) KiB"
for w in $(seq "$workloads"); do
  for budget in 1e9 2e9 3e9 4e9; do
    for objective in cheapest fastest balanced; do
      for all_regions in false true; do
        body="{\"workload\": {\"kind\": \"lora\", \"model\": \"Llama-3.1-8B\", \"tokens\": ${w}e6},"
        body+=" \"options\": {\"top\": 5, \"budget\": $budget, \"objective\": \"$objective\","
        body+=" \"all_regions\": $all_regions}}"
        curl -sf -o /dev/null -X POST -H 'Content-Type: application/json' --data "$body" \
          "${url}v1/recommend"
      done
    done
  done
  if [ $((w % 8)) = 0 ] || [ "$w" = "$workloads" ]; then
    echo "after $w workload(s): $(rss_kib) KiB"
  fi
done
