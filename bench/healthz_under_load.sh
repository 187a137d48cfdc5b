#!/usr/bin/env bash
# /healthz as a liveness probe sees it while the server is loaded: wrk keeps CONNECTIONS
# connections (default 256) busy with POST /v1/recommend (bench/server_load.sh's request) for
# DURATION seconds (default 20), while one client sends PROBES /healthz requests (default 500,
# one at a time, each on a new connection as a probe does) and prints their latency percentiles
# (curl's time_total: connect, request and response), and those of the TCP connect alone
# (time_connect: the kernel's handshake, in which no server code takes part). Needs wrk and
# curl (exit 77 without).
#
# PROBE_CLIENT says what sends the probes: `process` (default) starts one curl process per
# probe; `persistent` is one curl process that sends every probe on a new connection, PROBE_RATE
# a second (default 100; no more probes than fit in the load), as the kubelet, a long-running
# process, probes. On two cores shared
# with wrk the first also measures the probe's own process start and its wait for a core behind
# wrk (traced: the server had answered within 0.3 ms while curl waited up to 5 ms to read it).
# Usage: [PROBE_CLIENT=process|persistent] bench/healthz_under_load.sh [duration_s] [connections]
#        [probes]
set -euo pipefail
cd "$(dirname "$0")/.."
binary=${CLOUDFIT:-build/cloudfit}
duration=${1:-20}
connections=${2:-256}
probes=${3:-500}
client=${PROBE_CLIENT:-process}
case "$client" in
  process | persistent) ;;
  *) echo "PROBE_CLIENT must be process or persistent, not '$client'" >&2; exit 2 ;;
esac
rate=${PROBE_RATE:-100}
if [ "$client" = persistent ]; then
  [[ "$rate" =~ ^[1-9][0-9]{0,4}$ ]] ||
    { echo "PROBE_RATE must be a whole number of probes a second, 1-99999, not '$rate'" >&2; exit 2; }
  # The probes must end within the load: it runs 2 s before them, and 1 s is kept to spare.
  fit=$(( (duration - 3) * rate ))
  (( fit > 0 )) || { echo "persistent probes need a duration of 4 s or more" >&2; exit 2; }
  if (( probes > fit )); then
    echo "only $fit probes fit in ${duration} s at ${rate}/s: sending $fit" >&2
    probes=$fit
  fi
fi
command -v wrk >/dev/null || { echo "wrk is not installed: apt-get install wrk" >&2; exit 77; }
command -v curl >/dev/null || { echo "curl is not installed: apt-get install curl" >&2; exit 77; }
# grep reads the whole help (no -q), so that curl is never cut off by SIGPIPE under pipefail.
if [ "$client" = persistent ] && ! curl --help all | grep -- '--rate' > /dev/null; then
  echo "this curl has no --rate (7.84 or later has): no persistent prober" >&2
  exit 77
fi
times=$(mktemp)
source bench/start_server.sh
cleanup_files+=("$times")
start_server
# What the server, wrk and the probes each used of the shared cores is printed at the end.
wrk_times=$(mktemp)
probe_times=$(mktemp)
cleanup_files+=("$wrk_times" "$probe_times")
server_cpu=$(cpu_seconds "$server")
start=$(date +%s.%N)
( TIMEFORMAT='%U %S'
  time wrk -t 2 -c "$connections" -d "${duration}s" -s bench/recommend_request.lua \
    "${url}v1/recommend" > /dev/null ) 2> "$wrk_times" &
load=$!
sleep 2  # the load at full strength
format='%{http_code} %{time_total} %{time_connect}\n'
TIMEFORMAT='%U %S'
if [ "$client" = persistent ]; then
  # A new connection each time (the server closes it), the query only numbering the probes.
  { time curl -s -o /dev/null -H 'Connection: close' --rate "${rate}/s" -w "$format" \
      "${url}healthz?probe=[1-$probes]" >> "$times"; } 2> "$probe_times"
  kill -0 "$load" 2>/dev/null ||
    echo "warning: the load ended before the last probes (curl sent fewer than ${rate}/s)" >&2
  wait "$load"
else
  { time for _ in $(seq "$probes"); do
      kill -0 "$load" 2>/dev/null || break
      curl -s -o /dev/null -w "$format" "${url}healthz" >> "$times"
    done; } 2> "$probe_times"
  wait "$load"
fi
wall=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')
server_cpu=$(awk -v a="$server_cpu" -v b="$(cpu_seconds "$server")" 'BEGIN { print b - a }')
cpu_of() { tail -1 "$1" | awk '{ print $1 + $2 }'; }
shares="$(cpu_share server "$server_cpu" "$wall"), $(cpu_share "wrk (the load)" \
  "$(cpu_of "$wrk_times")" "$wall"), $(cpu_share probes "$(cpu_of "$probe_times")" "$wall")"
# The nearest-rank percentile of the sorted t[1..n].
pct='function pct(p,  i) { i = int(n * p); return t[i + (n * p > i)] }'
connects=$(sort -k3 -g "$times" | awk "$pct"'{ t[++n] = $3 * 1000 }
  END { if (n > 0) printf "p50 %.2f ms, p99 %.2f ms", pct(0.5), pct(0.99) }')
sort -k2 -g "$times" | awk -v c="$connections" -v client="$client" -v connects="$connects" \
  -v shares="$shares" "$pct"'
  { n++; ok += ($1 == 200); t[n] = $2 * 1000 }
  END {
    if (n == 0) { print "no probe ran"; exit 1 }
    printf "/healthz probes (%s client) under %d loaded connections: %d, %d answered 200; ",
           client, c, n, ok
    printf "p50 %.2f ms, p99 %.2f ms, max %.2f ms; TCP connect alone %s\n", pct(0.5), pct(0.99),
           t[n], connects
    printf "CPU over the run: %s\n", shares
    exit (ok == n ? 0 : 1)
  }'
