"""JUnit XML output (``--format junit``), shaped like ruff's.

One ``<testsuite>`` per file with findings or errors (``name`` = the path),
one ``<testcase name="padlint.CODE" classname="PATH" line="L">`` per finding
holding a ``<failure message="MESSAGE">line L, col C, MESSAGE</failure>``;
a file that could not be checked is a testcase ``padlint.file-error`` with
an ``<error>``.  With nothing to report, one suite ``padlint`` with one
passing testcase ``No errors found``.  CI systems (GitLab, Jenkins) show
each finding as a failed test.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections import defaultdict

from padlint.model import CheckResult, FileError, Finding


def render(result: CheckResult) -> str:
    """The XML document (UTF-8 declaration, trailing newline)."""
    findings = sorted(result.findings, key=Finding.sort_key)
    errors = sorted(result.errors, key=FileError.sort_key)
    # a clean run is one passing test case (the suite below), as the counts of its suite say
    root = ET.Element("testsuites", name="padlint", tests=str(len(findings) + len(errors) or 1),
                      failures=str(len(findings)), errors=str(len(errors)))
    by_path: dict[str, list[Finding | FileError]] = defaultdict(list)
    for item in [*findings, *errors]:
        by_path[item.path].append(item)
    if not by_path:
        suite = ET.SubElement(root, "testsuite", name="padlint", tests="1", failures="0", errors="0")
        ET.SubElement(suite, "testcase", name="No errors found", classname="padlint")
    for path in sorted(by_path):
        items = by_path[path]
        n_fail = sum(isinstance(i, Finding) for i in items)
        suite = ET.SubElement(root, "testsuite", name=path, tests=str(len(items)), failures=str(n_fail),
                              errors=str(len(items) - n_fail))
        for item in items:
            message = " ".join(item.message.split())
            if isinstance(item, Finding):
                case = ET.SubElement(suite, "testcase", name=f"padlint.{item.code}", classname=path,
                                     line=str(item.line), column=str(item.column))
                failure = ET.SubElement(case, "failure", message=message, type=item.code)
                failure.text = f"line {item.line}, col {item.column}, {message}"
            else:
                case = ET.SubElement(suite, "testcase", name="padlint.file-error", classname=path,
                                     **({"line": str(item.line)} if item.line else {}))
                error = ET.SubElement(case, "error", message=message)
                error.text = message
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
