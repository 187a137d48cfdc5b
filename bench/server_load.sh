#!/usr/bin/env bash
# Load test of `cloudfit serve`: POST /v1/recommend with wrk for DURATION seconds (default 60)
# over CONNECTIONS connections (default 8), then prints requests/s, latency percentiles,
# non-2xx responses, the CPU time the server and wrk each used (they share the machine's cores)
# and the server's resident memory before and after.
# Needs wrk and curl (exit 77 without them). Fails when any response is not a 2xx or a socket
# fails. Usage: bench/server_load.sh [duration_s] [connections]
set -euo pipefail
cd "$(dirname "$0")/.."
binary=${CLOUDFIT:-build/cloudfit}
duration=${1:-60}
connections=${2:-8}
command -v wrk >/dev/null || { echo "wrk is not installed: apt-get install wrk" >&2; exit 77; }
command -v curl >/dev/null || { echo "curl is not installed: apt-get install curl" >&2; exit 77; }

script=$(mktemp --suffix=.lua)
source bench/start_server.sh
cleanup_files+=("$script")
start_server

# bench/recommend_request.lua's request, and the figures printed at the end.
cat bench/recommend_request.lua - > "$script" <<'LUA'
done = function(summary, latency, requests)
  local non2xx = summary.errors.status
  io.write(string.format("requests %d, non-2xx %d, socket errors %d\n", summary.requests, non2xx,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))
  io.write(string.format("latency p50 %.1f ms, p99 %.1f ms, max %.1f ms\n",
    latency:percentile(50) / 1000, latency:percentile(99) / 1000, latency.max / 1000))
end
LUA

curl -s -o /dev/null -X POST -H 'Content-Type: application/json' \
  --data '{"workload": {"kind": "lora", "model": "Llama-3.1-8B"}}' "${url}v1/recommend"
before=$(rss_kib)
# The load generator shares the cores: what each side used is printed beside the figures.
wrk_times=$(mktemp)
cleanup_files+=("$wrk_times")
server_cpu=$(cpu_seconds "$server")
start=$(date +%s.%N)
report=$( { TIMEFORMAT='%U %S'; time wrk -t 2 -c "$connections" -d "${duration}s" -s "$script" \
  "${url}v1/recommend"; } 2> "$wrk_times")
wall=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')
server_cpu=$(awk -v a="$server_cpu" -v b="$(cpu_seconds "$server")" 'BEGIN { print b - a }')
wrk_cpu=$(tail -1 "$wrk_times" | awk '{ print $1 + $2 }')
after=$(rss_kib)
echo "$report"
echo "CPU over the run: $(cpu_share server "$server_cpu" "$wall"), $(cpu_share "wrk (the load)" \
  "$wrk_cpu" "$wall")"
echo "server RSS: ${before} KiB after warm-up, ${after} KiB after the run"
# A fast failure is not a fast server.
grep -q 'non-2xx 0, socket errors 0' <<<"$report" || { echo "server_load: failed requests" >&2; exit 1; }
