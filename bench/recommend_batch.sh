#!/usr/bin/env bash
# Batch mode: N recommendation requests (default 10,000) of varied workloads through
# `cloudfit recommend --jsonl`, one process; prints the wall time and requests per second.
set -euo pipefail
cd "$(dirname "$0")/.."
binary=${CLOUDFIT:-build/cloudfit}
n=${1:-10000}
input=$(mktemp)
trap 'rm -f "$input"' EXIT
models=(Llama-3.1-8B Llama-2-13B ResNet-50 BERT-base-uncased Mistral-7B-v0.1)
kinds=(inference lora train train inference)
# A recommendation ranks whole jobs, so each request names the job's size.
sizes=('"tokens": 1e8' '"tokens": 5e7' '"samples": 1.28e8' '"samples": 1e7' '"tokens": 2e8')
for i in $(seq "$n"); do
  k=$((i % 5))
  printf '{"id": %d, "kind": "%s", "model": "%s", %s, "top": 1}\n' \
    "$i" "${kinds[$k]}" "${models[$k]}" "${sizes[$k]}"
done > "$input"
start=$(date +%s%N)
"$binary" recommend --jsonl "$input" > /dev/null
end=$(date +%s%N)
awk -v n="$n" -v ns=$((end - start)) 'BEGIN {
  printf "recommend --jsonl: %d requests in %.2f s (%.1f ms each, %.0f requests/s)\n",
         n, ns / 1e9, ns / 1e6 / n, n / (ns / 1e9) }'
