#!/usr/bin/env bash
# Runs test executables of a ThreadSanitizer build, JOBS at a time; each one's output goes to
# BUILD_DIR/tsan-logs/<test>.log and is shown when it fails (a race report fails it).
#   scripts/tsan-tests.sh BUILD_DIR JOBS TEST...
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:?usage: tsan-tests.sh BUILD_DIR JOBS TEST...}
jobs=${2:?usage: tsan-tests.sh BUILD_DIR JOBS TEST...}
shift 2
logs="$build/tsan-logs"
rm -rf "$logs"
mkdir -p "$logs"
export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$PWD/cmake/tsan-suppressions.txt"

run_one() {
  local name=$1 bin start
  bin=$(find "$build/test" -name "$name" -type f -perm -u+x | head -1)
  if [ -z "$bin" ]; then
    echo "tsan-tests.sh: $name was not built in $build" >"$logs/$name.log"
    return 1
  fi
  start=$(date +%s)
  if "$bin" >"$logs/$name.log" 2>&1; then
    echo "tsan: $name passed ($(( $(date +%s) - start ))s)"
  else
    echo "tsan: $name FAILED ($(( $(date +%s) - start ))s)"
    return 1
  fi
}

failed=()
running=0
pids=()
names=()
for t in "$@"; do
  if [ "$running" -ge "$jobs" ]; then
    # Wait for the oldest; keeps at most JOBS running.
    if ! wait "${pids[0]}"; then failed+=("${names[0]}"); fi
    pids=("${pids[@]:1}")
    names=("${names[@]:1}")
    running=$((running - 1))
  fi
  run_one "$t" &
  pids+=($!)
  names+=("$t")
  running=$((running + 1))
done
for i in "${!pids[@]}"; do
  if ! wait "${pids[$i]}"; then failed+=("${names[$i]}"); fi
done
for t in "${failed[@]}"; do
  echo "===== $t ($logs/$t.log, last 80 lines)" >&2
  tail -n 80 "$logs/$t.log" >&2
done
[ "${#failed[@]}" -eq 0 ]
