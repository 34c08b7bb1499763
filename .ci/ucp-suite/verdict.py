#!/usr/bin/env python3
"""Grades one run of the UCP conformance suite against the expected-failures list.

Reads the JUnit XML each test program wrote (RESULTS/<program>.xml) and EXPECTED
(`<program>.<test>: reason` a line, `#` comments). Fails when a test outside the list fails,
when a listed test passes (the list must be trimmed), when a listed test is not run at all, or
when a program wrote no results (it crashed before its tests). Writes OUT/summary.json.

usage: verdict.py RESULTS EXPECTED OUT
"""
import json
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path

results_dir, expected_path, out_dir = (Path(arg) for arg in sys.argv[1:4])


def read_expected(path):
    expected = {}
    for number, line in enumerate(path.read_text().splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        test, _, reason = line.partition(":")
        if not reason.strip():
            sys.exit(f"{path}:{number}: an expected failure needs its reason")
        expected[test.strip()] = reason.strip()
    return expected


def outcome(case):
    for child in case:
        if child.tag in ("failure", "error"):
            return "failed", (child.get("message") or child.text or "").strip()
        if child.tag == "skipped":
            return "skipped", (child.get("message") or "").strip()
    if case.get("result") in ("skipped", "suppressed"):
        return "skipped", ""
    return "passed", ""


expected = read_expected(expected_path)
tests = {}
problems = []
for program in sorted(out_dir.glob("*_test.log")):
    name = program.stem
    xml = results_dir / f"{name}.xml"
    if not xml.exists():
        problems.append(f"{name}: wrote no results (see {program})")
        continue
    for case in ElementTree.parse(xml).iter("testcase"):
        tests[f"{name}.{case.get('name')}"] = outcome(case)

counts = {"passed": 0, "failed": 0, "skipped": 0}
for test, (status, message) in sorted(tests.items()):
    counts[status] += 1
    listed = test in expected
    mark = " (expected)" if listed and status == "failed" else ""
    print(f"{status:8} {test}{mark}")
    if status == "failed" and not listed:
        problems.append(f"{test} failed: {message[:2000]}")
    if status != "failed" and listed:
        problems.append(f"{test} is listed as an expected failure but {status}: trim the list")
for test in sorted(set(expected) - set(tests)):
    problems.append(f"{test} is listed as an expected failure but was not run")

summary = {
    "counts": counts,
    "expected_failures": {test: expected[test] for test in sorted(expected) if test in tests},
    "tests": {test: status for test, (status, _) in sorted(tests.items())},
}
(out_dir / "summary.json").write_text(json.dumps(summary, indent=1))
print(
    f"ucp conformance suite: {len(tests)} tests, {counts['passed']} passed, "
    f"{counts['failed']} failed ({len(summary['expected_failures'])} expected), "
    f"{counts['skipped']} skipped by the suite"
)
if problems:
    print("\n".join(["", "UCP conformance suite FAILED:"] + problems))
    sys.exit(1)
