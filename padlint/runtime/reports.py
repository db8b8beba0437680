"""Reports from engine worker processes to the pytest session (no torch).

An engine (vLLM) runs the model in worker processes that the test process
starts; their violations would otherwise stay on their own stderr.  The
pytest plugin, when checking is on, creates a directory and names it in
``PADLINT_REPORT_DIR`` (workers inherit the environment).  A worker whose
runtime checker was enabled by the engine plugin
(:mod:`padlint.runtime.vllm_plugin`) appends one JSON object per line to
``<dir>/worker-<pid>.jsonl``:

* ``{"kind": "violation", "pid": ..., "test": ..., "field": ..., "owner": ..., "text": ...}``
  as soon as a violation is found (so a worker that is killed later has
  still reported it);
* ``{"kind": "summary", "pid": ..., "line": ..., "warnings": [...], "stats": {...}}``
  at process exit.

The plugin reads the complete lines that appeared at the end of each test
phase (a violation fails that test in strict mode) and at the end of the
session (the summary).  A line is written with one ``write`` call on a file
opened for appending, so lines of concurrent writers do not interleave.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any

#: The environment variable naming the report directory.
ENV = "PADLINT_REPORT_DIR"


def violation_record(v: Any) -> dict[str, Any]:
    """The JSON record of one :class:`padlint.runtime.errors.Violation`."""
    return {"kind": "violation", "pid": os.getpid(), "owner": v.owner, "field": v.field, "rows": list(v.rows),
            "num_bad": v.num_bad, "start": v.start, "stop": v.stop, "counts_from": v.counts_from,
            "text": v.format()}


class ReportWriter:
    """Appends records of this process to ``<directory>/worker-<pid>.jsonl``; never raises
    (a full disk or a removed directory loses the report, not the worker)."""

    def __init__(self, directory: str) -> None:
        self.path = os.path.join(directory, f"worker-{os.getpid()}.jsonl")
        self.failed = ""

    def write(self, record: dict[str, Any]) -> bool:
        line = json.dumps(record, default=repr) + "\n"
        try:
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                os.write(fd, line.encode("utf-8"))
            finally:
                os.close(fd)
            return True
        except OSError as e:
            self.failed = f"{type(e).__name__}: {e}"
            return False


@dataclass
class ReportReader:
    """Reads the complete lines added to the ``*.jsonl`` files of a directory since the last call."""

    directory: str
    offsets: dict[str, int] = field(default_factory=dict)
    bad_lines: int = 0

    def read_new(self) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        try:
            names = sorted(n for n in os.listdir(self.directory) if n.endswith(".jsonl"))
        except OSError:
            return out
        for name in names:
            path = os.path.join(self.directory, name)
            start = self.offsets.get(path, 0)
            try:
                with open(path, "rb") as f:
                    f.seek(start)
                    data = f.read()
            except OSError:
                continue
            end = data.rfind(b"\n")
            if end < 0:
                continue  # no complete line yet
            self.offsets[path] = start + end + 1
            for raw in data[: end + 1].splitlines():
                try:
                    rec = json.loads(raw)
                except ValueError:
                    self.bad_lines += 1
                    continue
                if isinstance(rec, dict):
                    out.append(rec)
        return out
