"""--fix must never lie: what it writes makes the sink's value neutral (checked by the runtime
checker on real tensors), its summary counts only findings gone after the write, and it writes
only the file it read (not a read-only one, not a symlink swapped in, keeping mode and owner)."""

from __future__ import annotations

import json
import os
import stat

import pytest

from .conftest import CANONICAL

# Three sink arguments of one constructor, each stale in rows [num_reqs:num_reqs_padded]:
# `is_prefilling` and `seq_lens` are derived inline in the argument, `is_decode` through a name.
INLINE = """\
class Runner:
    def build(self, num_reqs, num_reqs_padded):
        mask = self.b[:num_reqs_padded] < 1
        return CommonAttentionMetadata(is_prefilling=self.a[:num_reqs_padded] < 1,
                                       seq_lens=self.s[:num_reqs_padded] + 1,
                                       is_decode=mask)
"""


def _stale_fields(source: str) -> set[str]:
    """Run ``Runner.build`` of ``source`` on buffers whose padding rows hold 0 (a finished request)
    and return the fields the runtime checker finds stale (neutral: False for masks, 0 for lengths)."""
    torch = pytest.importorskip("torch")
    from padlint.runtime import check_padding

    captured: dict[str, object] = {}

    def sink(**kwargs):
        captured.update(kwargs)

    namespace = {"CommonAttentionMetadata": sink}
    exec(compile(source, "runner.py", "exec"), namespace)  # noqa: S102 - the test's own fixture text
    runner = namespace["Runner"]()
    runner.a = torch.tensor([5, 6, 0, 0])  # rows 2, 3 are padding rows: `0 < 1` is True there
    runner.b = torch.tensor([5, 6, 0, 0])
    runner.s = torch.tensor([5, 6, 0, 0])  # `0 + 1` is 1 there, not 0
    runner.build(2, 4)
    neutral = {"is_prefilling": False, "is_decode": 0, "seq_lens": 0}
    return {name for name, value in captured.items()
            if check_padding(value, 2, neutral[name], name=name, mode="record")}


def test_inline_derived_argument_is_not_fixed_and_not_claimed_fixed(project):
    path = project.write("runner.py", INLINE)
    assert _stale_fields(INLINE) == {"is_prefilling", "seq_lens", "is_decode"}
    r = project.run("check", "--fix", "--unsafe-fixes")
    fixed = path.read_text()
    stale_after = _stale_fields(fixed)
    # the named derived tensor is reset after its derivation: neutral at run time
    assert "mask[num_reqs:] = 0" in fixed and "is_decode" not in stale_after  # not a profile field: 0
    # the inline ones get no fix: resetting `self.a`/`self.s` would leave `a < 1`/`s + 1` non-neutral
    assert "self.a[" not in fixed.replace("self.a[:num_reqs_padded] < 1", "")
    assert "self.s[" not in fixed.replace("self.s[:num_reqs_padded] + 1", "")
    assert stale_after == {"is_prefilling", "seq_lens"}
    # and the summary is true: what is still stale at run time is still reported
    assert "Fixed 1 finding (2 remaining)." in r.out, r.out
    assert r.rc == 1
    after = json.loads(project.run("check", "--format", "json").out)["findings"]
    assert sorted(f["field"] for f in after) == ["is_prefilling", "seq_lens"]
    assert all(f["fix"] is None and "assign it to a variable" in f["message"] for f in after)


def test_summary_counts_a_written_fix_that_did_not_remove_its_finding(project, monkeypatch):
    import padlint.fix

    path = project.write("bug.py", CANONICAL)
    real = padlint.fix.apply_fixes
    # a reset that misses padding row num_reqs: the finding stays.  (This test used to corrupt the
    # written value, `= True`; since PAD002 a reset that covers the rows with a wrong value is no
    # longer the same PAD001 finding but a PAD002 at the reset, so the corruption here is one that
    # keeps the rows stale.)
    monkeypatch.setattr(padlint.fix, "apply_fixes",
                        lambda text, fixes: real(text, fixes).replace("x[num_reqs:] = False",
                                                                      "x[num_reqs + 1:] = False"))
    r = project.run("check", "--fix", "--unsafe-fixes")
    assert "x[num_reqs + 1:] = False" in path.read_text()
    assert "Fixed 0 findings (1 remaining). 1 fix written did not remove its finding." in r.out, r.out
    assert r.rc == 1


def test_unexpected_fix_error_is_one_short_line(project, monkeypatch):
    import padlint.fix

    project.write("bug.py", CANONICAL)

    def boom(text, fixes):
        raise RuntimeError("Module(body=[" + "x" * 100_000 + "\n" + "y" * 100_000)

    monkeypatch.setattr(padlint.fix, "apply_fixes", boom)
    r = project.run("check", "--fix", "--unsafe-fixes")
    line = next(line for line in r.out.splitlines() if "fix not applied" in line)
    assert line.startswith("bug.py: error: fix not applied: RuntimeError: Module(body=[xxx")
    assert len(line) < 300 and "yyy" not in line
    assert len(r.out) < 2000


def test_read_only_file_is_refused_and_kept(project):
    path = project.write("bug.py", CANONICAL)
    path.chmod(0o444)
    r = project.run("check", "--fix", "--unsafe-fixes")
    assert r.rc == 1
    assert "bug.py: error: fix not applied: read-only file (mode 0444), not written" in r.out
    assert path.read_text() == CANONICAL
    assert stat.S_IMODE(path.stat().st_mode) == 0o444
    assert sorted(p.name for p in project.root.iterdir()) == ["bug.py"]


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="changing a file's owner needs root")
def test_owner_and_group_are_kept(project):
    path = project.write("bug.py", CANONICAL)
    os.chown(path, 4321, 4322)
    path.chmod(0o664)
    r = project.run("check", "--fix", "--unsafe-fixes")
    assert "Fixed 1 finding (0 remaining)." in r.out, r.out
    st = path.stat()
    assert (st.st_uid, st.st_gid, stat.S_IMODE(st.st_mode)) == (4321, 4322, 0o664)


def test_symlink_swapped_in_between_check_and_write_is_not_followed(project, tmp_path, monkeypatch):
    """bug.py is a plain file when it is read; before the fix is written it is replaced by a
    link to a file elsewhere with the same bytes.  Following the link would rewrite that file."""
    import padlint.fix

    path = project.write("bug.py", CANONICAL)
    victim = tmp_path / "elsewhere" / "victim.py"
    victim.parent.mkdir()
    victim.write_text(CANONICAL)
    real = padlint.fix.apply_fixes

    def swap_then_apply(text, fixes):
        path.unlink()
        path.symlink_to(victim)
        return real(text, fixes)

    monkeypatch.setattr(padlint.fix, "apply_fixes", swap_then_apply)
    r = project.run("check", "--fix", "--unsafe-fixes")
    assert r.rc == 1
    assert "bug.py: error: fix not applied: replaced by a symbolic link during the run, not written" in r.out
    assert victim.read_text() == CANONICAL
    assert path.is_symlink()
    assert sorted(p.name for p in victim.parent.iterdir()) == ["victim.py"]


def test_file_replaced_by_another_between_check_and_write_is_left_alone(project, monkeypatch):
    import padlint.fix

    path = project.write("bug.py", CANONICAL)
    real = padlint.fix.apply_fixes

    def replace_then_apply(text, fixes):
        other = project.write("other.tmp", CANONICAL)
        os.replace(other, path)  # same bytes, another inode (e.g. `git checkout` rewrote it)
        return real(text, fixes)

    monkeypatch.setattr(padlint.fix, "apply_fixes", replace_then_apply)
    r = project.run("check", "--fix", "--unsafe-fixes")
    assert "bug.py: error: fix not applied: replaced by another file during the run, not written" in r.out
    assert path.read_text() == CANONICAL


def test_symlink_present_when_read_is_followed(project, tmp_path):
    real_file = tmp_path / "real" / "bug.py"
    real_file.parent.mkdir()
    real_file.write_text(CANONICAL)
    link = project.root / "bug.py"
    link.symlink_to(real_file)
    r = project.run("check", "--fix", "--unsafe-fixes", "bug.py")
    assert "Fixed 1 finding (0 remaining)." in r.out, r.out
    assert link.is_symlink() and "x[num_reqs:] = False" in real_file.read_text()


def test_ctrl_c_while_writing_stops_at_once_and_leaves_files_whole(project, monkeypatch):
    a = project.write("a.py", CANONICAL)
    b = project.write("b.py", CANONICAL)
    real_replace = os.replace
    calls = []

    def interrupted(src, dst):
        calls.append(dst)
        raise KeyboardInterrupt

    import padlint.cli

    monkeypatch.setattr(padlint.cli, "_exit_now_if_threads", lambda code: None)  # another test's thread
    monkeypatch.setattr(os, "replace", interrupted)
    r = project.run("check", "--fix", "--unsafe-fixes")
    monkeypatch.setattr(os, "replace", real_replace)
    assert r.rc == 130
    assert r.err == "padlint: interrupted\n" and r.out == ""
    assert len(calls) == 1  # b.py was not attempted after the interrupt
    assert a.read_text() == CANONICAL and b.read_text() == CANONICAL
    assert sorted(p.name for p in project.root.iterdir()) == ["a.py", "b.py"]


def test_shared_buffer_fix_says_so(project):
    project.write("runner.py", """\
        class Runner:
            def build(self, num_reqs, num_reqs_padded):
                computed = self.input_batch.num_computed_tokens_cpu_tensor[:num_reqs_padded]
                return CommonAttentionMetadata(seq_lens=computed, slot_mapping=self.slots[:num_reqs_padded])
        """)
    findings = {f["field"]: f for f in json.loads(project.run("check", "--format", "json").out)["findings"]}
    shared, own = findings["seq_lens"], findings["slot_mapping"]
    assert shared["fix"]["text"] == "computed[num_reqs:] = 0"
    note = "`self.input_batch.num_computed_tokens_cpu_tensor`, a buffer of `self.input_batch`"
    assert note in shared["message"] and note in shared["fix"]["description"]
    assert own["fix"]["text"] == "self.slots[num_reqs:num_reqs_padded] = -1"
    assert "a buffer of" not in own["message"] and "a buffer of" not in own["fix"]["description"]


def test_baseline_survives_an_argument_added_to_the_sink_call(project):
    path = project.write("bug.py", CANONICAL)
    assert project.run("check", "--write-baseline", "base.json").rc == 0
    # vLLM adds fields to CommonAttentionMetadata(...) in most releases
    path.write_text(CANONICAL.replace("(is_prefilling=x)", "(\n            num_reqs=num_reqs,\n"
                                                           "            is_prefilling=x,\n        )"))
    r = project.run("check", "--baseline", "base.json")
    assert (r.rc, r.err) == (0, ""), r.out + r.err
    # another buffer reaching the same field is a new finding
    path.write_text(CANONICAL.replace("self.a[:num_reqs_padded]", "self.c[:num_reqs_padded]"))
    r = project.run("check", "--baseline", "base.json", "--format", "json")
    assert [f["field"] for f in json.loads(r.out)["findings"]] == ["is_prefilling"]


def test_ctrl_c_while_a_parse_thread_runs_exits_130_at_once(project, monkeypatch):
    """Ctrl-C while libcst parses on its thread (``padlint.parse.with_big_stack``): returning
    normally would make interpreter shutdown abort (SIGABRT) on that daemon thread, and on
    Python 3.11 an interrupted join() marks it stopped although it runs.  main leaves with
    os._exit(130) then; here os._exit is replaced to see that."""
    import threading

    import padlint.pipeline

    project.write("bug.py", CANONICAL)
    release = threading.Event()
    parse = threading.Thread(target=release.wait, name="padlint-parse", daemon=True)
    parse.start()

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    exits = []

    def fake_exit(code):
        exits.append(code)
        raise SystemExit(code)

    monkeypatch.setattr(padlint.pipeline, "run", interrupted)
    monkeypatch.setattr(os, "_exit", fake_exit)
    try:
        with pytest.raises(SystemExit):
            project.run("check", "--fix", "--unsafe-fixes")
    finally:
        release.set()
        parse.join()
    assert exits == [130]


def test_fix_checks_again_only_the_files_it_wrote(project, monkeypatch):
    import padlint.pipeline

    project.write("a.py", CANONICAL)
    # two findings without a fix: b.py is not written
    project.write("b.py", INLINE.replace(",\n                                       is_decode=mask)", ")"))
    calls = []
    real = padlint.pipeline.run

    def recording(paths, *args, **kwargs):
        calls.append(list(paths))
        return real(paths, *args, **kwargs)

    monkeypatch.setattr(padlint.pipeline, "run", recording)
    r = project.run("check", "--fix", "--unsafe-fixes", "--format", "json")
    assert calls == [["."], ["a.py"]]  # the whole run, then only what was written
    doc = json.loads(r.out)
    assert sorted((f["path"], f["field"]) for f in doc["findings"]) == [
        ("b.py", "is_prefilling"), ("b.py", "seq_lens")]
    assert doc["files_checked"] == 2


def test_write_baseline_never_replaces_a_device_or_fifo(project):
    project.write("bug.py", CANONICAL)
    fifo = project.root / "pipe"
    os.mkfifo(fifo)
    r = project.run("check", "--write-baseline", "pipe")
    assert r.rc == 2
    assert r.err == "padlint: error: pipe: not a regular file, not written\n"
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
