#!/usr/bin/env bash
# Prints the N slowest tests of a ctest run from its JUnit report (ctest --output-junit).
#   scripts/slowest-tests.sh BUILD_DIR/ctest-junit.xml [N]      (default N: 10)
set -euo pipefail
report=${1:?usage: slowest-tests.sh REPORT.xml [N]}
count=${2:-10}
[ -f "$report" ] || { echo "slowest-tests.sh: no report at $report" >&2; exit 1; }
/usr/bin/python3 - "$report" "$count" <<'PY'
import sys
import xml.etree.ElementTree as ET
cases = [(float(c.get("time", 0)), c.get("name", "?"), c.get("status", ""))
         for c in ET.parse(sys.argv[1]).getroot().iter("testcase")]
cases.sort(reverse=True)
print(f"slowest {min(int(sys.argv[2]), len(cases))} of {len(cases)} tests "
      f"(sum {sum(t for t, _, _ in cases):.0f}s):")
for seconds, name, status in cases[:int(sys.argv[2])]:
    print(f"  {seconds:7.1f}s  {name}{'' if status in ('run', '') else '  [' + status + ']'}")
PY
