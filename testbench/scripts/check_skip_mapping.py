#!/usr/bin/python3
"""Every test that can print "NAA_SKIP:" maps it to Skipped (issue 26 item 6).

A Catch2 test case that could not run a part for want of a tool prints "NAA_SKIP: <reason>"
(testbench/CMakeLists.txt, naa_add_test); CTest reports it "Skipped" only if the test has the
skip regular expression. A rerun of a suite registered without it (the sim_integration_model
run once was) reports a tshark-less run "Passed". This reads every registered test from
`ctest --show-only=json-v1` in the build folder and fails for each one whose program (the
first word of its command: a test executable, or a script that prints it) can print
"NAA_SKIP:" but whose SKIP_REGULAR_EXPRESSION does not name it.

Usage: check_skip_mapping.py CTEST BUILD_DIR
"""
import json
import re
import subprocess
import sys


# A script line that prints the marker itself (a script that only looks for it in another
# program's output, as tool_skips.sh does, is not one).
SCRIPT_PRINTS_SKIP = re.compile(rb"^[^#\n]*\b(echo|printf|print)\b[^\n]*NAA_SKIP:", re.MULTILINE)


def can_print_skip(path, cache):
    if path not in cache:
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError:
            data = b""
        if data.startswith(b"\x7fELF"):
            cache[path] = b"NAA_SKIP:" in data
        else:
            cache[path] = SCRIPT_PRINTS_SKIP.search(data) is not None
    return cache[path]


def main():
    ctest, build = sys.argv[1], sys.argv[2]
    out = subprocess.run([ctest, "--show-only=json-v1"], cwd=build, check=True,
                         capture_output=True, text=True).stdout
    tests = json.loads(out)["tests"]
    cache = {}
    checked, bad = 0, []
    for t in tests:
        command = t.get("command") or []
        if not command or not can_print_skip(command[0], cache):
            continue
        checked += 1
        props = {p["name"]: p["value"] for p in t.get("properties", [])}
        skip = props.get("SKIP_REGULAR_EXPRESSION", [])
        if isinstance(skip, str):
            skip = [skip]
        if not any("NAA_SKIP" in s for s in skip):
            bad.append(t["name"])
    print(f"{len(tests)} tests, {checked} run a program that can print NAA_SKIP")
    for name in bad:
        print(f"FAIL: '{name}' can print NAA_SKIP but has no SKIP_REGULAR_EXPRESSION for it")
    if checked == 0:
        print("FAIL: no test can print NAA_SKIP: the check found nothing to check")
        return 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
