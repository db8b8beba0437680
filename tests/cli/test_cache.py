"""The analysis cache (.padlint_cache, --no-cache, --cache-dir; padlint.cache).

A second run over unchanged files must not analyse again and must report the
same thing; changing a checked file, or a module the analysis read without
checking it, must analyse again; a cache that cannot be written costs one
note; --no-cache reads and writes nothing.
"""

from __future__ import annotations

import json
import os

import padlint.analysis.engine

from .conftest import CANONICAL

# A runner in a package whose metadata builder lives in another module of the package: a
# run over runner.py alone reads attn.py (to follow the call) without checking it.
RUNNER = """\
import torch
from pkg.attn import build


class Runner:
    def __init__(self, n):
        self.seq_lens = torch.zeros(n)

    def execute_model(self, num_reqs, num_reqs_padded):
        return build(self.seq_lens[:num_reqs_padded])
"""
ATTN = """\
from vllm.v1.attention.backend import CommonAttentionMetadata


def build(seq_lens):
    return CommonAttentionMetadata(seq_lens=seq_lens)
"""


def _counting(monkeypatch):
    calls = []
    real = padlint.analysis.engine.check_project

    def counted(sources, profile, **kw):
        calls.append(sorted(s.path for s in sources))
        return real(sources, profile, **kw)

    monkeypatch.setattr(padlint.analysis.engine, "check_project", counted)
    return calls


def _json(run):
    return json.loads(run.out)


def test_second_run_uses_the_cache(project, monkeypatch):
    monkeypatch.delenv("PADLINT_CACHE_DIR")  # the default place
    project.write("bug.py", CANONICAL)
    calls = _counting(monkeypatch)
    first = project.run("check", "--format", "json")
    second = project.run("check", "--format", "json")
    assert first.rc == second.rc == 1
    assert _json(first) == _json(second)
    assert len(_json(first)["findings"]) == 1
    assert len(calls) == 1  # the second run analysed nothing
    assert (project.root / ".padlint_cache" / ".gitignore").read_text().endswith("*\n")


def test_editing_a_checked_file_analyses_again(project, monkeypatch):
    path = project.write("bug.py", CANONICAL)
    calls = _counting(monkeypatch)
    assert project.run("check").rc == 1
    path.write_text(CANONICAL.replace("        return", "        x[num_reqs:] = False\n        return"))
    assert project.run("check").rc == 0  # the reset is there now
    assert len(calls) == 2


def test_editing_a_module_read_but_not_checked_analyses_again(project, monkeypatch):
    project.write("pkg/__init__.py", "")
    project.write("pkg/runner.py", RUNNER)
    attn = project.write("pkg/attn.py", ATTN)
    calls = _counting(monkeypatch)
    first = _json(project.run("check", "pkg/runner.py", "--format", "json"))
    # the sink is in attn.py, which is not checked: no finding is reported in it
    assert first["findings"] == []
    assert len(calls) == 1
    project.run("check", "pkg/runner.py", "--format", "json")
    assert len(calls) == 1  # cached
    attn.write_text(ATTN + "\n# edited\n")
    project.run("check", "pkg/runner.py", "--format", "json")
    assert len(calls) == 2  # attn.py was read by the analysis: its edit invalidates the entry


def test_no_cache_reads_and_writes_nothing(project, monkeypatch):
    monkeypatch.delenv("PADLINT_CACHE_DIR")
    project.write("bug.py", CANONICAL)
    calls = _counting(monkeypatch)
    project.run("check", "--no-cache")
    project.run("check", "--no-cache")
    assert len(calls) == 2
    assert not (project.root / ".padlint_cache").exists()


def test_cache_dir_option_and_unwritable_cache(project, monkeypatch):
    monkeypatch.delenv("PADLINT_CACHE_DIR")
    project.write("bug.py", CANONICAL)
    project.run("check", "--cache-dir", "elsewhere")
    assert any(p.suffix == ".json" for p in (project.root / "elsewhere").iterdir())
    # a cache "directory" that is a regular file cannot be written: one note, same result
    project.write("blocker", "not a directory")
    r = project.run("check", "--cache-dir", "blocker", "--format", "json")
    assert r.rc == 1
    assert len(_json(r)["findings"]) == 1
    assert "cache not written" in r.err and r.err.count("\n") == 1


def test_damaged_cache_entry_is_ignored(project, monkeypatch):
    monkeypatch.delenv("PADLINT_CACHE_DIR")
    project.write("bug.py", CANONICAL)
    project.run("check")
    for p in (project.root / ".padlint_cache").glob("*.json"):
        p.write_text("{not json")
    calls = _counting(monkeypatch)
    r = project.run("check", "--format", "json")
    assert len(_json(r)["findings"]) == 1
    assert len(calls) == 1


def test_env_var_names_the_cache_dir(project, monkeypatch):
    project.write("bug.py", CANONICAL)
    monkeypatch.setenv("PADLINT_CACHE_DIR", os.fspath(project.root / "envcache"))
    project.run("check")
    assert (project.root / "envcache").is_dir()


def test_same_files_reported_under_other_paths_are_not_mixed_up(project, monkeypatch):
    project.write("bug.py", CANONICAL)
    rel = _json(project.run("check", "--format", "json"))
    absolute = _json(project.run("check", str(project.root / "bug.py"), "--format", "json"))
    assert [f["path"] for f in rel["findings"]] == ["bug.py"]
    assert [f["path"] for f in absolute["findings"]] == [str(project.root / "bug.py")]


def test_the_key_changes_with_padlints_own_code(monkeypatch):
    """An engine change in a development checkout (same version number) is not answered from an
    entry an older engine wrote: the key hashes padlint's own files."""
    from padlint import cache

    before = cache.run_key("profile", [("a.py", "x = 1\n")], {"a.py"})
    cache.code_digest.cache_clear()
    monkeypatch.setattr(cache, "code_digest", lambda: "another engine")
    assert cache.run_key("profile", [("a.py", "x = 1\n")], {"a.py"}) != before


def _runner_project(project):
    project.write("pkg/__init__.py", "")
    project.write("pkg/runner.py", RUNNER)
    return project.write("pkg/attn.py", ATTN)


def _trusting_stats(project, monkeypatch):
    """The runner project checked once with stats stored for every dependency (files written
    less than RACY_NS before the entry keep a bare digest: set to 0 here, the files are new);
    returns attn.py (a dependency, read and not checked) and the analyses counted from the start."""
    from padlint import cache

    monkeypatch.setattr(cache, "RACY_NS", 0)
    attn = _runner_project(project)
    calls = _counting(monkeypatch)
    project.run("check", "pkg/runner.py", "--format", "json")
    return attn, calls


def _hashing(monkeypatch) -> list:
    """The types of what padlint.cache hashes from now on (bytes: a file read from disk)."""
    from padlint import cache

    hashed: list = []
    real = cache.digest
    monkeypatch.setattr(cache, "digest", lambda t: hashed.append(type(t)) or real(t))
    return hashed


def test_an_unchanged_module_is_not_read_again(project, monkeypatch):
    # attn.py is a dependency of the entry (read, not checked); its stat is stored with its
    # digest, so the cached run compares the stat and hashes no file's bytes
    _attn, calls = _trusting_stats(project, monkeypatch)
    hashed = _hashing(monkeypatch)
    project.run("check", "pkg/runner.py", "--format", "json")
    assert len(calls) == 1       # the second run was answered from the cache
    assert bytes not in hashed   # no dependency's bytes were read and hashed (texts of the key only)


def test_a_same_size_edit_of_a_module_analyses_again(project, monkeypatch):
    # the edit keeps the size; the new mtime sends the load to the digest, which differs
    attn, calls = _trusting_stats(project, monkeypatch)
    edited = ATTN.replace("seq_lens=seq_lens", "seq_lens=seq_lenz")
    assert len(edited) == len(ATTN)
    st = attn.stat()
    attn.write_text(edited)
    os.utime(attn, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))
    project.run("check", "pkg/runner.py", "--format", "json")
    assert len(calls) == 2


def test_a_touched_but_unchanged_module_still_hits(project, monkeypatch):
    # a new mtime, the same bytes: the digest decides, and it agrees; the entry then keeps the
    # new stat, so the run after it hashes nothing
    attn, calls = _trusting_stats(project, monkeypatch)
    st = attn.stat()
    os.utime(attn, ns=(st.st_atime_ns, st.st_mtime_ns - 5_000_000_000))
    project.run("check", "pkg/runner.py", "--format", "json")
    assert len(calls) == 1
    hashed = _hashing(monkeypatch)
    project.run("check", "pkg/runner.py", "--format", "json")
    assert len(calls) == 1 and bytes not in hashed


def test_a_same_size_edit_with_its_mtime_restored_analyses_again(project, monkeypatch):
    # `cp -p` / `rsync -t` / os.utime restore the mtime of an edited file; its ctime (and, for a
    # copy, its inode) still changes, so the load hashes it and sees the edit
    attn, calls = _trusting_stats(project, monkeypatch)
    st = attn.stat()
    attn.write_text(ATTN.replace("seq_lens=seq_lens", "seq_lens=seq_lenz"))
    os.utime(attn, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert attn.stat().st_size == st.st_size and attn.stat().st_mtime_ns == st.st_mtime_ns
    project.run("check", "pkg/runner.py", "--format", "json")
    assert len(calls) == 2


def test_a_module_changed_just_before_the_entry_keeps_only_its_digest(project, monkeypatch):
    # with the default RACY_NS, files written a moment ago get no stat: the next run hashes them
    # (an edit in the same timestamp tick would otherwise go unseen)
    _runner_project(project)
    project.run("check", "pkg/runner.py", "--format", "json", "--cache-dir", "cc")
    (entry,) = [json.loads(p.read_text()) for p in (project.root / "cc").glob("*.json")]
    assert entry["deps"] and all(isinstance(v, str) for v in entry["deps"].values())


def test_a_module_edited_during_the_analysis_keeps_only_its_digest(tmp_path):
    # the entry is written after the analysis: a file whose bytes no longer have the digest the
    # analysis read gets no stat, so a later load hashes it (never trusts the newer stat)
    from padlint import cache

    dep = tmp_path / "dep.py"
    dep.write_text("x = 2\n")
    analysed = cache.digest("x = 1\n")   # what the analysis read before the edit
    assert cache.store(str(tmp_path / "c"), "k", {}, {str(dep): analysed}) is None
    entry = json.loads((tmp_path / "c" / "k.json").read_text())
    assert entry["deps"] == {str(dep): analysed}
    assert cache.load(str(tmp_path / "c"), "k") is None   # the file is not what was analysed
    dep.write_text("x = 1\n")                             # back to what was analysed
    assert cache.load(str(tmp_path / "c"), "k") == {}
