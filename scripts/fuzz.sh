#!/usr/bin/env bash
# Builds the libFuzzer harnesses (clang, ASan + UBSan) into build-fuzz/ and runs each one.
#
#   scripts/fuzz.sh                      every harness for 10 minutes, one at a time
#   scripts/fuzz.sh --seconds 5          every harness over its seeds and 5 s more (what CI runs)
#   scripts/fuzz.sh --seconds 3600 http  one harness for an hour
#   scripts/fuzz.sh --jobs 16 ...        16 fuzzing processes per harness (a machine to spare)
#   scripts/fuzz.sh --runs 10000000 csv  one harness until 10 M executions (no time limit;
#                                        one process: libFuzzer's -runs does not apply to -fork)
#   scripts/fuzz.sh --max-len 65536 ...  longer inputs (default 8192: faster, and enough to reach
#                                        every branch the parsers have)
#
# The seeds (fuzz/corpus/NAME) are copied into build-fuzz/corpus/NAME, which grows and is kept
# between runs; crashes, leaks and timeouts go to build-fuzz/findings/NAME/. Ends with a table
# of executions and findings per harness, and exit status 1 when anything was found. Runs under
# nice -n 19: the machine may be shared.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=600
runs_limit=
jobs=1
max_len=8192
names=()
while [ $# -gt 0 ]; do
  case "$1" in
    --seconds) seconds="$2"; shift 2 ;;
    --jobs) jobs="$2"; shift 2 ;;
    --runs) runs_limit="$2"; seconds=0; shift 2 ;;
    --max-len) max_len="$2"; shift 2 ;;
    --no-build) no_build=1; shift ;;
    -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
    *) names+=("$1"); shift ;;
  esac
done
all=(csv python_literal skypilot_import skypilot_task workload hf_config measured price_list calibration catalog http)
[ ${#names[@]} -eq 0 ] && names=("${all[@]}")

dir=build-fuzz
if [ -z "${no_build:-}" ]; then
  command -v clang++ >/dev/null || { echo "fuzz.sh: clang++ is needed (apt-get install clang)" >&2; exit 2; }
  launcher=()
  command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  generator=()
  command -v ninja >/dev/null && generator=(-G Ninja)
  [ -f "$dir/CMakeCache.txt" ] ||
    CXX=clang++ cmake -S . -B "$dir" "${generator[@]}" "${launcher[@]}" \
      -DCMAKE_BUILD_TYPE=Fuzz -DCMAKE_CXX_FLAGS_FUZZ="-O1 -gline-tables-only" \
      -DCLOUDFIT_FUZZ=ON -DCLOUDFIT_BUILD_TESTS=OFF \
      -DCLOUDFIT_BUILD_BENCHMARKS=OFF >/dev/null
  nice -n 19 cmake --build "$dir" -j "$(nproc)" --target fuzzers
fi

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:symbolize=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
summary=()
found=0
for name in "${names[@]}"; do
  corpus="$dir/corpus/$name"
  findings="$dir/findings/$name"
  log="$dir/logs/$name.log"
  mkdir -p "$corpus" "$findings" "$dir/logs"
  cp -n fuzz/corpus/"$name"/* "$corpus"/ 2>/dev/null || true
  args=(-max_total_time="$seconds" ${runs_limit:+-runs="$runs_limit"} -dict=fuzz/dict/"$name".dict -artifact_prefix="$findings/"
        -max_len="$max_len" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1)
  if [ -n "$runs_limit" ]; then limit="$runs_limit executions"; else limit="$seconds s"; fi
  echo "== $name: $limit, $jobs job(s)"
  status=0
  if [ "$jobs" -gt 1 ]; then
    # -fork keeps going after a finding and merges new coverage into the corpus.
    nice -n 19 "$dir/fuzz/${name}_fuzzer" "${args[@]}" -fork="$jobs" -ignore_crashes=1 \
      -ignore_timeouts=1 -ignore_ooms=1 "$corpus" >"$log" 2>&1 || status=$?
  else
    nice -n 19 "$dir/fuzz/${name}_fuzzer" "${args[@]}" "$corpus" >"$log" 2>&1 || status=$?
  fi
  # Executions: the final stats of a single process, or the sum the fork mode reports.
  # (fork mode prints no final stats: the greps find nothing, which must not end the script)
  runs=$(grep -oE 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -oE '[0-9]+$' |
         awk '{s+=$1} END {print s+0}' || true)
  if [ "$runs" = "0" ]; then
    runs=$(grep -oE '#[0-9]+' "$log" | tail -1 | tr -d '#' || true)
  fi
  crashes=$(find "$findings" -type f | wc -l)
  [ "$status" -ne 0 ] && [ "$crashes" -eq 0 ] && crashes="exit $status"
  [ "$crashes" != "0" ] && found=1
  summary+=("$(printf '%-16s %14s executions  %s finding(s)  corpus %s files' "$name" "${runs:-0}" \
              "$crashes" "$(find "$corpus" -type f | wc -l)")")
done
echo
printf '%s\n' "${summary[@]}"
[ "$found" -eq 0 ] || { echo "findings under $dir/findings/ (logs under $dir/logs/)"; exit 1; }
