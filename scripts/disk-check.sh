#!/usr/bin/env bash
# Reports the free space where `make test` builds, and warns when it is under what a clean run
# writes. A build that runs out of space fails in whichever compile or link it reached, with an
# error that does not name the cause; this line, printed before the build and again after a
# failure, does.  Usage: disk-check.sh DIR NEEDED_GIB
set -euo pipefail
dir=${1:?directory}
need_gib=${2:?GiB needed}
mkdir -p "$dir"
free_kib=$(df -Pk "$dir" | awk 'NR == 2 { print $4 }')
free_gib=$(awk -v k="$free_kib" 'BEGIN { printf "%.1f", k / 1048576 }')
if (( free_kib < need_gib * 1048576 )); then
  echo "make test: WARNING: only ${free_gib} GiB free in $(cd "$dir" && pwd);" \
       "a clean run writes about ${need_gib} GiB and fails part-way when the disk fills" >&2
else
  echo "make test: ${free_gib} GiB free in $(cd "$dir" && pwd)"
fi
