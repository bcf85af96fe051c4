#!/usr/bin/env bash
# abi_check.sh LIBLENS_SO SOURCE_DIR             compare liblens.so's ABI with the baseline
# abi_check.sh --update LIBLENS_SO SOURCE_DIR    write the baseline from LIBLENS_SO
#
# The baseline (test/install/liblens.abi.gz, abidw's XML) is the ABI of the SDK as released: the
# functions and variables liblens.so exports and the types of include/lens/ they use. A change
# that breaks a program built against it (a function removed, a struct's size or layout, a virtual
# table, a signature) fails; with a new version (CMake makes the SONAME from include/lens/
# version.h), write the new baseline with --update in the same change. Additions pass.
set -euo pipefail
update=0
if [ "${1:-}" = "--update" ]; then
  update=1
  shift
fi
so=$1 src=$2
baseline="$src/test/install/liblens.abi.gz"  # gzip of abidw's XML
headers="$src/include/lens"
# Types from the C++ library and liblens's own internals are not the SDK's ABI.
opts=(--headers-dir "$headers" --drop-private-types --drop-undefined-syms --no-show-locs
      --no-corpus-path --suppressions "$src/test/install/liblens.abignore")

if [ "$update" = 1 ]; then
  abidw "${opts[@]}" "$so" | gzip -9n >"$baseline"
  echo "abi check: wrote $baseline from $so"
  exit 0
fi
[ -f "$baseline" ] || { echo "abi check: no baseline $baseline (run $0 --update $so $src)" >&2; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/lens-abi.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
gunzip -c "$baseline" >"$tmp/baseline.abi"
abidw "${opts[@]}" --out-file "$tmp/current.abi" "$so"
old_soname=$(sed -n 's/.*<abi-corpus [^>]*soname=.\([^"'"'"']*\).*/\1/p' "$tmp/baseline.abi" | head -1)
new_soname=$(sed -n 's/.*<abi-corpus [^>]*soname=.\([^"'"'"']*\).*/\1/p' "$tmp/current.abi" | head -1)
if [ "$old_soname" != "$new_soname" ]; then
  echo "abi check: the SONAME changed ($old_soname -> $new_soname), so may the ABI: write the" \
       "new baseline with $0 --update $so $src" >&2
  exit 1
fi
set +e
abidiff --no-added-syms "$tmp/baseline.abi" "$tmp/current.abi" >"$tmp/report" 2>&1
rc=$?
set -e
# abidiff's exit status is a bit field: 1 error, 2 usage, 4 an ABI change, 8 an incompatible one.
if (( rc & 3 )); then
  cat "$tmp/report" >&2
  echo "abi check: abidiff failed (status $rc)" >&2
  exit 1
fi
# With --no-added-syms an addition is not a change; anything else (a function removed, a type's
# size or layout, a virtual table, a signature) breaks programs built against the baseline.
if (( rc & 12 )); then
  cat "$tmp/report" >&2
  echo "abi check: liblens.so's ABI changed under SONAME $new_soname; restore it, or raise the" \
       "version in include/lens/version.h and write the new baseline with $0 --update $so $src" >&2
  exit 1
fi
echo "abi check: liblens.so ($new_soname) keeps the ABI of $baseline"
