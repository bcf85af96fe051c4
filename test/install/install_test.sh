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
# The shared library: named by its SONAME, the SONAME's link, and only the public API exported.
soname=$(objdump -p "$prefix/lib/liblens.so" | awk '$1 == "SONAME" {print $2}')
[[ "$soname" =~ ^liblens\.so\.[0-9]+(\.[0-9]+)?$ ]] || fail "liblens.so has SONAME '$soname'"
[ -e "$prefix/lib/$soname" ] || fail "$soname is not installed"
leaked=$(nm -DC --defined-only "$prefix/lib/liblens.so" | grep -E ' lens::(store|insights|agent|api|http)::' | head -3 || true)
[ -z "$leaked" ] || fail "liblens.so exports internals: $leaked"
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
out=$("$tmp/examples/parse_log_static" "$log") || fail "parse_log_static exited with $?"
expect parse_log_static "$out" "run 1 (primus): 30 iterations, iterations 1..30, ended"
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
# docs/sdk.md shows the tour's programs whole: each block marked
# "<!-- file: examples/sdk/X.cc -->" must be that file, and every file must be shown.
/usr/bin/python3 - "$src" <<'PY' || fail "docs/sdk.md and examples/sdk/ differ"
import pathlib, re, sys
src = pathlib.Path(sys.argv[1])
doc = (src / "docs/sdk.md").read_text()
blocks = dict(re.findall(r"<!-- file: (\S+) -->\n```cpp\n(.*?)```\n", doc, re.S))
files = {str(p.relative_to(src)) for p in (src / "examples/sdk").glob("*.cc")}
bad = [f for f in sorted(files | set(blocks))
       if f not in blocks or f not in files or (src / f).read_text() != blocks[f]]
for f in bad:
    print(f"docs/sdk.md: {f}: " + ("not shown" if f not in blocks else
          "no such file" if f not in files else "differs from the file"), file=sys.stderr)
sys.exit(1 if bad else 0)
PY

# The tour, in its order, on a fixture host (8x MI300X + 8x ConnectX-7) and a new store.
host="$src/test/fixtures/hosts/mi300x-8x-mlx5"
store="sqlite://$tmp/tour.db"
out=$("$tmp/examples/node_gpus" "$host") || fail "node_gpus exited with $?: $out"
expect node_gpus "$out" "8 GPUs, 8 RDMA devices" "gpu 0  AMD Instinct MI300X" "  healthy" \
  "root pci0000:" "rdma mlx5_0/1  ACTIVE"
out=$("$tmp/examples/example_cluster" "$store" "$host") || fail "example_cluster exited with $?: $out"
expect example_cluster "$out" "stored node gpu-node-1 with 8 GPUs"
out=$("$tmp/examples/follow_log" "$store" pretrain-8b "$src/examples/logs/megatron_lm_gpt_8b_resume.log") ||
  fail "follow_log exited with $?: $out"
expect follow_log "$out" "of 2 runs for pretrain-8b" "latest: run 2 iteration 500"
out=$("$tmp/examples/device_holders" "$store" gpu-node-1 3) || fail "device_holders exited with $?: $out"
expect device_holders "$out" "1 holder(s)" "container 3f2a9c1e (pytorch) of pod research/pretrain-8b-worker-0"
out=$("$tmp/examples/workload_report" "$store" pretrain-8b) || fail "workload_report exited with $?: $out"
expect workload_report "$out" "PyTorchJob pretrain-8b: goodput" "1 restart(s)" \
  "gpu-node-1 gpu 3: healthy -> degraded" "gpu-node-1 gpu 3: degraded -> healthy"
checked="$checked, docs/sdk.md's tour"
if [ -n "$python_dir" ]; then
  out=$(env PYTHONPATH="$prefix/$python_dir" ${LENS_PYTHON_PRELOAD:+LD_PRELOAD=$LENS_PYTHON_PRELOAD} \
    ${LENS_PYTHON_PRELOAD:+ASAN_OPTIONS=detect_leaks=0} PYTHONDONTWRITEBYTECODE=1 \
    /usr/bin/python3 "$src/examples/python/goodput_report.py" "$store" 2>&1) ||
    fail "goodput_report.py exited with $?: $out"
  expect goodput_report.py "$out" "workload" "lost_gpu_hours" "research/pretrain-8b" "PyTorchJob"
  checked="$checked, the pandas goodput report"
fi

# The scheduler extender (examples/scheduler-extender): its own project on the installed SDK,
# its tests on recorded requests, then the real binary serving the seeded store.
ext_src="$src/examples/scheduler-extender"
"$cmake" -S "$ext_src" -B "$tmp/extender" -G "$generator" -DCMAKE_CXX_COMPILER="$cxx" \
  -DCMAKE_CXX_FLAGS="$cxx_flags" -DCMAKE_EXE_LINKER_FLAGS="$cxx_flags" \
  -DCMAKE_PREFIX_PATH="$prefix" >"$tmp/ext-configure.log" 2>&1 ||
  { cat "$tmp/ext-configure.log"; fail "configuring the scheduler extender failed"; }
"$cmake" --build "$tmp/extender" >"$tmp/ext-build.log" 2>&1 ||
  { cat "$tmp/ext-build.log"; fail "building the scheduler extender failed"; }
EXTENDER_TEST_STORE="$tmp/extender.db" "$tmp/extender/extender_test" >"$tmp/ext-test.log" 2>&1 ||
  { cat "$tmp/ext-test.log"; fail "extender_test failed"; }
"$tmp/extender/lens-scheduler-extender" --store "sqlite://$tmp/extender.db" \
  --listen 127.0.0.1:0 >"$tmp/ext-serve.log" 2>&1 &
ext_pid=$!
trap 'kill $ext_pid 2>/dev/null || true; rm -rf "$tmp"' EXIT
for _ in $(seq 600); do  # until it reports its port, or exits
  grep -q "^listening on" "$tmp/ext-serve.log" && break
  kill -0 $ext_pid 2>/dev/null || { cat "$tmp/ext-serve.log"; fail "the extender exited"; }
  sleep 0.1
done
ext_addr=$(sed -n 's/^listening on //p' "$tmp/ext-serve.log")
[ -n "$ext_addr" ] || fail "the extender did not report its address"
for verb in filter prioritize; do
  args=$ext_src/testdata/${verb}_args.json want=$ext_src/testdata/${verb}_result.json
  got=$(curl -sS --fail-with-body -H 'Content-Type: application/json' --data-binary "@$args" \
    "http://$ext_addr/$verb") || fail "POST /$verb: $got"
  /usr/bin/python3 -c 'import json,sys; sys.exit(json.loads(sys.argv[1]) != json.load(open(sys.argv[2])))' \
    "$got" "$want" || fail "POST /$verb answered $got, not $(cat "$want")"
done
out=$(curl -sS -o /dev/null -w '%{http_code}' --data-binary 'not json' "http://$ext_addr/filter")
[ "$out" = 400 ] || fail "POST /filter with a body that is not JSON answered $out, not 400"
kill $ext_pid
wait $ext_pid 2>/dev/null || true
checked="$checked, the scheduler extender (tests and the served binary)"

echo "install test: passed ($checked)"
