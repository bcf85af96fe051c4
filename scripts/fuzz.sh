#!/usr/bin/env bash
# Runs every libFuzzer target of a build for a bounded time; fails on the first crash, leak,
# sanitizer report or timeout.
#   scripts/fuzz.sh [BUILD_DIR] [SECONDS_PER_TARGET] [JOBS]      (defaults: build-asan 60 1)
# A target's seeds are fuzz/seeds/<target>/ when that exists (HTTP requests), otherwise cut from
# test/fixtures/training (a few lines each, behind a control byte); generated seeds, corpora
# and crash artifacts live under BUILD_DIR/fuzz/, never in the source tree.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-asan}
seconds=${2:-60}
jobs=${3:-1}
fuzz_dir="$build/fuzz"
fixtures=test/fixtures/training

targets=("$fuzz_dir"/*_fuzzer)
if [ ! -x "${targets[0]}" ]; then
  echo "fuzz.sh: no fuzzer in $fuzz_dir (configure with clang and -DLENS_BUILD_FUZZERS=ON)" >&2
  exit 1
fi

seeds="$fuzz_dir/seeds"
rm -rf "$seeds" "$fuzz_dir"/corpus*
mkdir -p "$seeds" "$fuzz_dir/artifacts"
# The fuzzer reads byte 0 as its control byte (chunk size, options): vary it across seeds.
control=1
for f in "$fixtures"/*.log "$fixtures"/*.jsonl; do
  name=$(basename "$f")
  split -l 6 -a 3 -d "$f" "$seeds/$name."
  for piece in "$seeds/$name".*; do
    { printf "\\$(printf '%03o' $((control % 256)))"; cat "$piece"; } >"$piece.seed"
    rm "$piece"
    control=$((control + 37))
  done
done

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# One fuzzer per core at a time (JOBS); each writes its own log, corpus and artifacts.
fuzz_one() {
  local target=$1 name dict=() target_seeds corpus
  name=$(basename "$target")
  [ -f "fuzz/${name%_fuzzer}.dict" ] && dict=("-dict=fuzz/${name%_fuzzer}.dict")
  target_seeds=$seeds
  [ -d "fuzz/seeds/$name" ] && target_seeds="fuzz/seeds/$name"
  corpus="$fuzz_dir/corpus-$name"
  mkdir -p "$corpus"
  echo "fuzz.sh: $name for ${seconds}s ($(ls "$target_seeds" | wc -l) seeds)"
  if ! "$target" "${dict[@]}" -max_total_time="$seconds" -max_len=16384 -timeout=10 \
      -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$fuzz_dir/artifacts/$name-" \
      "$corpus" "$target_seeds" 2>"$fuzz_dir/$name.log"; then
    tail -n 60 "$fuzz_dir/$name.log" >&2
    echo "fuzz.sh: $name FAILED; reproducer(s): $(ls "$fuzz_dir/artifacts/$name-"* 2>/dev/null)" >&2
    return 1
  fi
  grep -E '^(#[0-9]+.*DONE|stat::number_of_executed_units|stat::peak_rss_mb)' "$fuzz_dir/$name.log" \
    | sed "s/^/  $name: /" || true
}

failed=0
running=0
for target in "${targets[@]}"; do
  if [ "$running" -ge "$jobs" ]; then
    wait -n || failed=1
    running=$((running - 1))
  fi
  [ "$failed" -eq 0 ] || break
  fuzz_one "$target" &
  running=$((running + 1))
done
while [ "$running" -gt 0 ]; do
  wait -n || failed=1
  running=$((running - 1))
done
exit "$failed"
