# Sourced by the server benchmarks: starts `$binary serve` on a free port with THREADS workers
# (default 4) and SERVE_ARGS (more `serve` options, e.g. `--worker-priority idle`), waits until
# it listens, and sets `server` (its pid), `url` and rss_kib (its resident memory); the server
# is stopped, and the files in `cleanup_files` removed, on exit.
start_server() {
  local log
  log=$(mktemp)
  cleanup_files+=("$log")
  # shellcheck disable=SC2086 # SERVE_ARGS is a list of options
  "$binary" serve --port 0 --threads "${THREADS:-4}" ${SERVE_ARGS:-} > "$log" 2>&1 &
  server=$!
  trap 'kill "$server" 2>/dev/null || true; rm -f "${cleanup_files[@]}"' EXIT
  for _ in $(seq 50); do
    grep -q 'serving http' "$log" && break
    sleep 0.1
  done
  url=$(grep -o 'http://[0-9.]*:[0-9]*/' "$log" | head -1)
  [ -n "$url" ] || { echo "server did not start:"; cat "$log"; exit 1; } >&2
}
cleanup_files=()
rss_kib() { awk '/VmRSS/ {print $2}' "/proc/$server/status"; }
# CPU seconds (user and system, all threads) process $1 has used so far.
cpu_seconds() { awk -v hz="$(getconf CLK_TCK)" '{ printf "%.2f", ($14 + $15) / hz }' "/proc/$1/stat"; }
# "NAME X s (Y% of the machine's cores)" for X CPU seconds over $3 seconds of wall time.
cpu_share() { awk -v n="$1" -v s="$2" -v t="$3" -v c="$(nproc)" \
  'BEGIN { printf "%s %.1f s (%.0f%% of %d cores)", n, s, 100 * s / (t * c), c }'; }

