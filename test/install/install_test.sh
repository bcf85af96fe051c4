#!/usr/bin/env bash
# install_test.sh CMAKE GENERATOR CXX_COMPILER BUILD_DIR SOURCE_DIR [CXX_FLAGS] [PYTHON_DIR]
# Installs BUILD_DIR into a temporary prefix, builds SOURCE_DIR/examples against it with
# find_package(lens) (with CXX_FLAGS: the sanitizer flags of an instrumented build), runs the
# example and the installed CLI on an example log and checks their output. With PYTHON_DIR (the
# module's directory relative to the prefix), the installed `lens` module must be there and
# import from there. The temporary directory is removed whatever happens.
set -euo pipefail
cmake=$1 generator=$2 cxx=$3 build=$4 src=$5 cxx_flags=${6:-} python_dir=${7:-}
log="$src/examples/logs/primus_llama3_70b.log"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/lens-install-test.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
prefix="$tmp/prefix"

fail() {
  echo "install test: $*" >&2
  exit 1
}
# expect NAME OUTPUT TEXT...: every TEXT must occur in OUTPUT.
expect() {
  local name=$1 output=$2
  shift 2
  for text in "$@"; do
    grep -qF -- "$text" <<<"$output" || fail "$name output lacks '$text'; it was:"$'\n'"$output"
  done
}

"$cmake" --install "$build" --prefix "$prefix" >"$tmp/install.log" ||
  { cat "$tmp/install.log"; fail "cmake --install failed"; }
[ -f "$prefix/include/lens/training.h" ] || fail "public headers not installed"
[ -f "$prefix/lib/cmake/lens/lensConfig.cmake" ] || fail "lensConfig.cmake not installed"
[ -x "$prefix/bin/lens" ] || fail "the lens CLI is not installed"
internal=$(find "$prefix/include" -name '*.h' ! -path "$prefix/include/lens/*")
[ -z "$internal" ] || fail "internal headers installed: $internal"

"$cmake" -S "$src/examples" -B "$tmp/examples" -G "$generator" -DCMAKE_CXX_COMPILER="$cxx" \
  -DCMAKE_CXX_FLAGS="$cxx_flags" -DCMAKE_EXE_LINKER_FLAGS="$cxx_flags" \
  -DCMAKE_PREFIX_PATH="$prefix" >"$tmp/configure.log" 2>&1 ||
  { cat "$tmp/configure.log"; fail "configuring examples/ against the installed lens failed"; }
"$cmake" --build "$tmp/examples" >"$tmp/build.log" 2>&1 ||
  { cat "$tmp/build.log"; fail "building examples/ against the installed lens failed"; }

out=$("$tmp/examples/parse_log" "$log") || fail "parse_log exited with $?"
expect parse_log "$out" "run 1 (primus): 30 iterations, iterations 1..30, ended" \
  "loss 11.9200 -> " "checkpoints 1" "last record: run 1 iteration 30"
out=$("$tmp/examples/parse_log" "$tmp/does-not-exist.log" 2>&1) && fail "parse_log accepted a missing file"
expect "parse_log (missing file)" "$out" "does-not-exist.log"

out=$("$prefix/bin/lens" parse-log "$log") || fail "lens parse-log exited with $?"
expect "lens parse-log" "$out" "30 iterations, 1..30 of 30, ended" "records 30"
# Every other command runs in lens-platform, which the installed `lens` finds
# in libexec/lens.
[ -x "$prefix/libexec/lens/lens-platform" ] || fail "lens-platform is not installed"
out=$("$prefix/bin/lens" parse-log --store "sqlite://$tmp/lens.db" --workload w1 "$log" 2>&1) ||
  fail "lens parse-log --store exited with $?: $out"
expect "lens parse-log --store" "$out" "stored 30 iteration records"
out=$("$prefix/bin/lens" db status --url "sqlite://$tmp/lens.db" 2>&1) ||
  fail "lens db status exited with $?: $out"
out=$("$prefix/bin/lens" --help) || fail "lens --help exited with $?"
expect "lens --help" "$out" "parse-log" "probe" "up"

checked="prefix, find_package(lens), example, CLI and lens-platform"
if [ -n "$python_dir" ]; then
  module=$(ls "$prefix/$python_dir"/lens.*.so 2>/dev/null | head -1)
  [ -n "$module" ] || fail "the Python module is not installed in $prefix/$python_dir"
  # Debian's python3 has <prefix>/lib/python3.X/dist-packages on sys.path for /usr/local (and
  # lib/python3/dist-packages for /usr): the directory must be one of those shapes.
  case "$python_dir" in
    lib/python3/dist-packages | lib/python3.*/dist-packages) ;;
    *) fail "the Python module's directory $python_dir is not one Debian's python3 searches" ;;
  esac
  out=$(cd "$tmp" && env -u PYTHONPATH ${LENS_PYTHON_PRELOAD:+LD_PRELOAD=$LENS_PYTHON_PRELOAD} \
    ${LENS_PYTHON_PRELOAD:+ASAN_OPTIONS=detect_leaks=0} PYTHONDONTWRITEBYTECODE=1 \
    /usr/bin/python3 -c "import site, sys; site.addsitedir('$prefix/$python_dir'); import lens; \
print(lens.__file__); print(len(lens.parse_training_log('$log').records), 'records')" 2>&1) ||
    fail "importing the installed module failed: $out"
  expect "python3 -c 'import lens'" "$out" "$module" "30 records"
  checked="$checked, Python module"
fi
echo "install test: passed ($checked)"
