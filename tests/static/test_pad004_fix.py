"""PAD004's fix: the count put on the request axis (unsafe, like every padlint fix).

The base input is the ``gdn_buggy`` fixture (``fixtures/rules/PAD004/gdn_buggy``):
three request buffers sliced with ``batch_size = m.num_actual_tokens`` (line 39),
a token count; the profile's ``[axes.counterparts]`` pairs ``num_actual_tokens``
with ``num_reqs``.  Variants are made by editing a copy of that package:

- as shipped, every read of ``batch_size`` in ``build`` is one of the three
  reported slices, so the fix rewrites the definition (vLLM 0.24.0's own fix),
  and the fixed file has no PAD004 finding left;
- with one more read of ``batch_size`` that is not a reported slice, rewriting the
  definition would change that read too: no fix (the message still says what to do);
- with the count written in the slice itself (``[:m.num_actual_tokens]``), the fix
  rewrites that slice only.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from .test_project_fixtures import _env

ROOT = Path(__file__).resolve().parents[2]
GDN = ROOT / "fixtures" / "rules" / "PAD004" / "gdn_buggy"


def _copy(tmp_path: Path, edit=None) -> Path:
    dst = tmp_path / "gdn"
    shutil.copytree(GDN, dst)
    if edit is not None:
        b = dst / "pkg" / "builder.py"
        b.write_text(edit(b.read_text(encoding="utf-8")), encoding="utf-8")
    return dst


def _padlint(where: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "padlint", "check", ".", "--select", "PAD004", "--no-cache", *args],
                          cwd=where, env=_env(), capture_output=True, text=True, timeout=300)


def _findings(where: Path) -> list[dict]:
    proc = _padlint(where, "--format", "json")
    assert proc.returncode in (0, 1), proc.stderr
    return json.loads(proc.stdout)["findings"]


def test_fix_rewrites_the_definition_and_leaves_nothing(tmp_path: Path) -> None:
    pkg = _copy(tmp_path)
    found = _findings(pkg)
    assert len(found) == 3
    for f in found:
        fix = f["fix"]
        assert fix is not None and fix["safe"] is False, f
    edits = {(f["fix"]["line"], f["fix"]["column"], f["fix"]["old"], f["fix"]["text"]) for f in found}
    assert edits == {(39, 22, "m.num_actual_tokens", "m.num_reqs")}  # one definition, the same edit thrice
    proc = _padlint(pkg, "--fix", "--unsafe-fixes")
    assert proc.returncode == 0, proc.stdout + proc.stderr  # nothing left after the fix
    text = (pkg / "pkg" / "builder.py").read_text(encoding="utf-8")
    assert "batch_size = m.num_reqs\n" in text and "m.num_actual_tokens" not in text.split('"""', 2)[2]
    assert _findings(pkg) == []


def test_no_fix_when_the_local_is_read_elsewhere(tmp_path: Path) -> None:
    def edit(text: str) -> str:
        return text.replace("        return GDNAttentionMetadata(",
                            "        self.last_batch = batch_size\n        return GDNAttentionMetadata(")

    found = _findings(_copy(tmp_path, edit))
    assert len(found) == 3
    assert all(f["fix"] is None for f in found)
    assert all("replace `m.num_actual_tokens` with `m.num_reqs`" in f["message"] for f in found)


def test_fix_in_the_slice_when_the_count_is_written_there(tmp_path: Path) -> None:
    def edit(text: str) -> str:
        return text.replace("self.num_accepted_tokens[:batch_size]", "self.num_accepted_tokens[:m.num_actual_tokens]")

    pkg = _copy(tmp_path, edit)
    found = {f["line"]: f for f in _findings(pkg)}
    fix = found[51]["fix"]
    assert (fix["line"], fix["column"], fix["text"]) == (51, 31, "self.num_accepted_tokens[:m.num_reqs]")
    assert fix["old"] == "self.num_accepted_tokens[:m.num_actual_tokens]"
    # the two other slices still read `batch_size`, and only they do: their fix is the definition's
    assert {f["fix"]["text"] for line, f in found.items() if line != 51} == {"m.num_reqs"}
    proc = _padlint(pkg, "--fix", "--unsafe-fixes")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    text = (pkg / "pkg" / "builder.py").read_text(encoding="utf-8")
    assert "self.num_accepted_tokens[:m.num_reqs]" in text and "batch_size = m.num_reqs" in text
