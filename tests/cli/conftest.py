"""Helpers for driving the CLI in-process inside a scratch project directory."""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

from padlint.cli import main
from padlint.model import Finding, Fix

# The canonical bug (vLLM issue 41841): a mask derived from two padded
# slices reaches CommonAttentionMetadata without `x[num_reqs:] = False`.
CANONICAL = """\
from vllm.v1.attention.backend import CommonAttentionMetadata


class Runner:
    def build(self, num_reqs, num_reqs_padded):
        x = self.a[:num_reqs_padded] < self.b[:num_reqs_padded]
        return CommonAttentionMetadata(is_prefilling=x)
"""

# The same with the vLLM 0.22 reset: no finding.
CANONICAL_FIXED = CANONICAL.replace(
    "        return CommonAttentionMetadata",
    "        x[num_reqs:] = False\n        return CommonAttentionMetadata",
)


# A class that mentions a sink call and a padded count but has no finding:
# text that the prefilter sends on to the parser.  Prepend it to a file whose
# parsing a test exercises.
LIVE = """\
class Live:
    def f(self, num_reqs_padded):
        return CommonAttentionMetadata(n=num_reqs_padded)
"""


@dataclass
class Run:
    rc: int
    out: str
    err: str


class Project:
    """A scratch directory (the working directory of the run) and a way to run padlint in it."""

    def __init__(self, root: Path, capsys: pytest.CaptureFixture[str]):
        self.root = root
        self._capsys = capsys

    def write(self, rel: str, text: str = "", *, raw: bytes | None = None) -> Path:
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if raw is not None:
            path.write_bytes(raw)
        else:
            path.write_text(textwrap.dedent(text), encoding="utf-8")
        return path

    def run(self, *argv: str) -> Run:
        self._capsys.readouterr()
        rc = main(list(argv))
        captured = self._capsys.readouterr()
        return Run(rc, captured.out, captured.err)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Project:
    root = tmp_path / "proj"
    root.mkdir()
    monkeypatch.chdir(root)
    for var in ("FORCE_COLOR", "PADLINT_DEBUG", "NO_COLOR"):
        monkeypatch.delenv(var, raising=False)
    # the analysis cache lives outside the project, so that tests see only their own files
    monkeypatch.setenv("PADLINT_CACHE_DIR", str(tmp_path / "padlint-cache"))
    return Project(root, capsys)


# -- a stand-in analysis for tests that need findings at known places ---------

_MARK = re.compile(r'stale\("(?P<buf>[^"]*)"\)')


def fake_check_source(text: str, path: str, profile) -> list[Finding]:
    """One PAD001 per ``stale("BUFFER")`` call in the source, at that call.

    The finding's fix resets ``x`` with ``False`` before the finding's line
    (indentation of that line).
    """
    findings = []
    for i, line in enumerate(re.split(r"\r\n|\r|\n", text), start=1):
        for m in _MARK.finditer(line):
            indent = line[: len(line) - len(line.lstrip())]
            findings.append(Finding(
                code="PAD001", path=path, line=i, column=m.start() + 1, end_line=i, end_column=m.end() + 1,
                message=f"stale rows of `{m.group('buf')}` reach Meta; add `x[num_reqs:] = False`",
                severity="error", sink="Meta", field="x", buffer=m.group("buf"),
                padded="num_reqs_padded", real="num_reqs",
                fix=Fix(path=path, line=i, indent=indent, text="x[num_reqs:] = False",
                        description="reset `x` to False"),
                statement=line.strip(), function="f"))
    return findings


@pytest.fixture
def fake_analysis(monkeypatch: pytest.MonkeyPatch):
    """Replace the analysis with :func:`fake_check_source`.

    The stand-in sources hold no metadata constructor, so the analysis's own
    text test (sink and padded count in one file) is replaced too; the
    pipeline's substring needles still apply.
    """
    import padlint.analysis.engine
    import padlint.analysis.index

    def fake_check_project(sources, profile, *, seeds=None, project=None):
        return {s.path: fake_check_source(s.text, s.path, profile)
                for s in sources if seeds is None or s.path in seeds}

    monkeypatch.setattr(padlint.analysis, "check_source", fake_check_source)
    monkeypatch.setattr(padlint.analysis.engine, "check_project", fake_check_project)
    monkeypatch.setattr(padlint.analysis.index, "may_matter", lambda text, profile, patterns=None: True)
    return fake_check_source


def unprivileged_prefix() -> list[str]:
    """A command prefix under which file permissions apply: as root, ``setpriv`` without the
    capabilities that bypass them (the test is skipped where setpriv is missing)."""
    import os
    import shutil

    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root and no setpriv to drop CAP_DAC_OVERRIDE")
    return [setpriv, "--bounding-set=-dac_override,-dac_read_search", "--inh-caps=-all", "--"]
