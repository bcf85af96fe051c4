#!/usr/bin/env bash
# Summarises a ctest run of this build: how many test cases ran in how many ctest tests, the N
# slowest test cases, and every test case that was skipped, with its reason. GoogleTest programs
# run as one ctest test each (test/CMakeLists.txt, lens_gtest) and write their test cases to
# BUILD_DIR/test-results/<ctest test>/*.xml; the other ctest tests (scripts, the Python suite,
# fuzzers' seed runs) come from ctest's JUnit report.
#   scripts/test-report.sh BUILD_DIR [N]      (default N: 10)
set -euo pipefail
build=${1:?usage: test-report.sh BUILD_DIR [N]}
count=${2:-10}
[ -f "$build/ctest-junit.xml" ] || { echo "test-report.sh: no $build/ctest-junit.xml" >&2; exit 1; }
/usr/bin/python3 - "$build" "$count" <<'PY'
import glob
import os
import sys
import xml.etree.ElementTree as ET

build, count = sys.argv[1], int(sys.argv[2])
results = os.path.join(build, "test-results")
cases = []    # (seconds, name, outcome)
skipped = []  # (name, reason)
programs = set()
# One directory per ctest test; a run that found its directory in use (ctest run again without
# `make test` clearing it) wrote a file beside the old one: the newest is this run's.
latest = {}
for path in glob.glob(os.path.join(results, "*", "*.xml")):
    entry = os.path.basename(os.path.dirname(path))
    if entry not in latest or os.path.getmtime(path) > os.path.getmtime(latest[entry]):
        latest[entry] = path
for entry, path in sorted(latest.items()):
    programs.add(entry)
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as e:  # a program that died mid-write; ctest reports it failed
        print(f"test-report.sh: {path}: {e}", file=sys.stderr)
        continue
    for case in root.iter("testcase"):
        name = f"{case.get('classname', '?')}.{case.get('name', '?')}"
        outcome = case.get("result", "completed")
        if case.find("failure") is not None:
            outcome = "failed"
        cases.append((float(case.get("time", 0)), name, outcome))
        if outcome == "skipped":
            node = case.find("skipped")
            reason = node.get("message", "") if node is not None else ""
            # GoogleTest puts the file:line first; the reason is what follows.
            reason = reason.split("\n", 1)[-1].strip() or "(no reason given)"
            skipped.append((name, reason))

ctest_tests = 0
for case in ET.parse(os.path.join(build, "ctest-junit.xml")).getroot().iter("testcase"):
    ctest_tests += 1
    name = case.get("name", "?")
    if name.replace("/", ".") in programs:
        continue  # a GoogleTest program: its cases are counted above
    cases.append((float(case.get("time", 0)), name, case.get("status", "")))
    if case.get("status") == "notrun" or case.find("skipped") is not None:
        skipped.append((name, "skipped by ctest"))

cases.sort(reverse=True)
print(f"{len(cases)} test cases in {ctest_tests} ctest tests "
      f"(sum of their times {sum(t for t, _, _ in cases):.0f}s); slowest {min(count, len(cases))}:")
for seconds, name, outcome in cases[:count]:
    mark = "" if outcome in ("completed", "run", "") else f"  [{outcome}]"
    print(f"  {seconds:7.1f}s  {name}{mark}")
print(f"skipped: {len(skipped)}" + (":" if skipped else ""))
for name, reason in skipped:
    print(f"  {name}: {reason}")
PY
