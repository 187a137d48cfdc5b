#!/usr/bin/env bash
# The one-shot commands of issue 14, process start to exit: README's `recommend` job (target
# 8 ms), `instances` over the whole built-in catalog and an `estimate` (5 ms each).
#   bench/oneshot.sh [RUNS]    RUNS per command (default 20)
# Prints, per command, the CPU time per run from `perf stat -e task-clock` (what the issue
# measures; wall time where perf cannot count) with the page faults per run (each first touch
# of a page costs the kernel ~1-2 us here: a start-up's faults are a large part of its time)
# and, with INSTRUCTIONS=1, the instructions of one run under `valgrind --tool=callgrind`
# (deterministic on a loaded machine). State the load average (printed first) with the
# figures. CI runs it with RUNS=2 so it cannot rot; the figures come from full runs.
set -euo pipefail
cd "$(dirname "$0")/.."
binary=${CLOUDFIT:-build/cloudfit}
runs=${1:-20}
commands=(
  "recommend --kind lora --model Llama-3.1-8B --seq-len 2048 --recompute full --tokens 50e6 --deadline-hours 24"
  "instances"
  "estimate --kind lora --model Llama-3.1-8B --gpu H100"
)
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
use_perf=0
if command -v perf >/dev/null 2>&1 && perf stat -x, -e task-clock true >/dev/null 2>&1; then
  use_perf=1
fi
for c in "${commands[@]}"; do
  read -ra words <<<"$c"
  # A command that fails is a failure of the benchmark, not a fast run.
  "$binary" "${words[@]}" >/dev/null
  if [ "$use_perf" = 1 ]; then
    # CSV output: the first field of the task-clock line is milliseconds per run.
    stats=$(perf stat -x, -r "$runs" -e task-clock,page-faults "$binary" "${words[@]}" 2>&1 >/dev/null)
    ms=$(awk -F, '/task-clock/ { print $1 }' <<<"$stats")
    faults=$(awk -F, '/page-faults/ { print $1 }' <<<"$stats")
    printf '%-24s task-clock %.2f ms (mean of %d runs), %s page faults' "${words[0]}" "$ms" \
      "$runs" "$faults"
  else
    times=()
    for _ in $(seq "$runs"); do
      start=$(date +%s%N)
      "$binary" "${words[@]}" >/dev/null
      end=$(date +%s%N)
      times+=($(((end - start) / 1000)))
    done
    ms=$(printf '%s\n' "${times[@]}" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] / 1000 }')
    printf '%-24s wall %.2f ms (median of %d runs; perf unavailable)' "${words[0]}" "$ms" "$runs"
  fi
  if [ "${INSTRUCTIONS:-0}" = 1 ] && command -v valgrind >/dev/null 2>&1; then
    out=$(mktemp)
    valgrind --tool=callgrind --callgrind-out-file=/dev/null "$binary" "${words[@]}" \
      >/dev/null 2>"$out"
    printf ', %s instructions' "$(awk '/Collected/ { print $4 }' "$out")"
    rm -f "$out"
  fi
  printf '\n'
done
