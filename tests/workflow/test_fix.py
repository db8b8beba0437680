"""padlint.fix: inserting resets with libcst, and writing files back without losing anything."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import libcst as cst
import pytest

from padlint.fix import (
    FileChangedError,
    FixError,
    apply_fixes,
    fix_file,
    insertion_text,
    write_atomic,
    write_fixed,
)
from padlint.model import Fix
from padlint.parse import read_source

from .conftest import BUGGY_PATH, DATA, canonical_finding

BUGGY = (DATA / "runner_buggy.py").read_text(encoding="utf-8")

# data/runner_buggy.py with the fix inserted before line 12: the comment on line 11 stays above
# the reset, the reset takes the block's 8-space indentation.
FIXED = BUGGY.replace(
    "        # Build the metadata the attention backends read.\n"
    "        meta = CommonAttentionMetadata(\n",
    "        # Build the metadata the attention backends read.\n"
    "        is_prefilling[num_reqs:] = False\n"
    "        meta = CommonAttentionMetadata(\n",
)

RESET = canonical_finding().fix


def test_canonical_fix_exact_text():
    assert FIXED != BUGGY
    assert apply_fixes(BUGGY, [RESET]) == FIXED


def test_fixed_text_parses_and_differs_by_one_line():
    out = apply_fixes(BUGGY, [RESET])
    cst.parse_module(out)
    assert len(out.splitlines()) == len(BUGGY.splitlines()) + 1
    assert out.splitlines()[11] == "        is_prefilling[num_reqs:] = False"


def test_idempotent():
    once = apply_fixes(BUGGY, [RESET])
    # The same fix again: line 12 now holds the reset itself.
    assert apply_fixes(once, [RESET]) == once
    # A rerun of the analysis would point the fix at the sink, now line 13: the reset stands
    # immediately before it.
    assert apply_fixes(once, [Fix(BUGGY_PATH, 13, "        ", RESET.text, "")]) == once


def test_idempotence_ignores_spacing_and_comments_of_the_existing_reset():
    src = ("def f(x, num_reqs):\n"
           "    x[num_reqs :] = (False)  # padding rows\n"
           "    g(x)\n")
    assert apply_fixes(src, [Fix("m.py", 3, "    ", "x[num_reqs:] = False", "")]) == src


def test_identical_fixes_are_applied_once():
    assert apply_fixes(BUGGY, [RESET, RESET, Fix(BUGGY_PATH, 12, "        ", "is_prefilling[num_reqs:]=False", "")]) == FIXED


def test_two_fixes_same_line_keep_order():
    src = "def f(a, b, n):\n    g(a, b)\n"
    fixes = [Fix("m.py", 2, "    ", "a[n:] = 0", ""), Fix("m.py", 2, "    ", "b[n:] = -1", "")]
    assert apply_fixes(src, fixes) == "def f(a, b, n):\n    a[n:] = 0\n    b[n:] = -1\n    g(a, b)\n"


def test_fixes_on_several_lines_use_original_line_numbers():
    src = "def f(a, b, n):\n    g(a)\n    h(b)\n"
    fixes = [Fix("m.py", 3, "    ", "b[n:] = 0", ""), Fix("m.py", 2, "    ", "a[n:] = 0", "")]
    assert apply_fixes(src, fixes) == "def f(a, b, n):\n    a[n:] = 0\n    g(a)\n    b[n:] = 0\n    h(b)\n"


def test_no_fixes_returns_source_unchanged():
    assert apply_fixes("x = (1)\n", []) == "x = (1)\n"


def test_nested_block_and_module_level_and_decorated():
    src = ("import torch\n"
           "\n"
           "@decorator\n"
           "def f(x, n, p):\n"
           "    if p > n:\n"
           "        use(x)\n"
           "    else:\n"
           "        use(x)  # keep\n")
    fixes = [Fix("m.py", 6, "        ", "x[n:] = 0", ""),
             Fix("m.py", 8, "        ", "x[n:] = 1", ""),
             Fix("m.py", 3, "", "BUF = None", "")]
    assert apply_fixes(src, fixes) == ("import torch\n"
                                       "\n"
                                       "BUF = None\n"
                                       "@decorator\n"
                                       "def f(x, n, p):\n"
                                       "    if p > n:\n"
                                       "        x[n:] = 0\n"
                                       "        use(x)\n"
                                       "    else:\n"
                                       "        x[n:] = 1\n"
                                       "        use(x)  # keep\n")


def test_tab_indented_block():
    src = "def f(x, n):\n\tuse(x)\n"
    assert apply_fixes(src, [Fix("m.py", 2, "\t", "x[n:] = 0", "")]) == "def f(x, n):\n\tx[n:] = 0\n\tuse(x)\n"


def test_crlf_source_stays_crlf():
    crlf = BUGGY.replace("\n", "\r\n")
    out = apply_fixes(crlf, [RESET])
    assert out == FIXED.replace("\n", "\r\n")
    assert "\n" not in out.replace("\r\n", "")


@pytest.mark.parametrize("fix, message", [
    (Fix(BUGGY_PATH, 14, "            ", "x = 1", ""), "line 14 does not start a statement"),
    (Fix(BUGGY_PATH, 11, "        ", "x = 1", ""), "line 11 does not start a statement"),  # a comment line
    (Fix(BUGGY_PATH, 12, "    ", "x = 1", ""), "expected indentation '    '"),
    (Fix(BUGGY_PATH, 99, "", "x = 1", ""), "line is outside the file"),
    (Fix(BUGGY_PATH, 12, "        ", "x = ", ""), "is not a statement"),
    (Fix(BUGGY_PATH, 12, "        ", "x = 1\ny = 2", ""), "one statement on one line"),
])
def test_bad_fix_raises_with_path_and_line(fix, message):
    with pytest.raises(FixError) as info:
        apply_fixes(BUGGY, [fix])
    assert message in str(info.value)
    assert str(info.value).startswith(f"{BUGGY_PATH}:{fix.line}:")


def test_unparsable_source_raises():
    with pytest.raises(FixError, match="does not parse"):
        apply_fixes("def f(:\n", [Fix("m.py", 1, "", "x = 1", "")])


# -- files ---------------------------------------------------------------------

def _write(path: Path, data: bytes, mode: int = 0o644) -> Path:
    path.write_bytes(data)
    path.chmod(mode)
    return path


def test_fix_file_keeps_mode_and_leaves_no_temp_files(tmp_path):
    target = _write(tmp_path / "runner.py", BUGGY.encode(), 0o640)
    assert fix_file(target, [RESET]) is True
    assert target.read_text(encoding="utf-8") == FIXED
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["runner.py"]
    assert fix_file(target, [RESET]) is False  # idempotent on disk too


def test_fix_file_latin1_cookie_stays_latin1(tmp_path):
    src = "# -*- coding: latin-1 -*-\n" + BUGGY.replace("# Build the metadata", "# Métadonnées: build the metadata")
    target = _write(tmp_path / "runner.py", src.encode("latin-1"))
    source = read_source(str(target))
    assert (source.text, source.encoding) == (src, "iso-8859-1")
    fix = Fix(BUGGY_PATH, RESET.line + 1, RESET.indent, RESET.text, "")
    assert fix_file(target, [fix]) is True
    data = target.read_bytes()
    assert b"# M\xe9tadonn\xe9es" in data  # still one latin-1 byte, not UTF-8's two
    assert data.decode("latin-1") == "# -*- coding: latin-1 -*-\n" + FIXED.replace(
        "# Build the metadata", "# Métadonnées: build the metadata")


def test_fix_file_utf8_bom_kept(tmp_path):
    target = _write(tmp_path / "runner.py", b"\xef\xbb\xbf" + BUGGY.encode())
    assert read_source(str(target)).encoding == "utf-8-sig"
    fix_file(target, [RESET])
    assert target.read_bytes() == b"\xef\xbb\xbf" + FIXED.encode()


def test_fix_file_crlf_bytes(tmp_path):
    target = _write(tmp_path / "runner.py", BUGGY.replace("\n", "\r\n").encode())
    fix_file(target, [RESET])
    assert target.read_bytes() == FIXED.replace("\n", "\r\n").encode()


def test_failed_fix_leaves_file_untouched(tmp_path):
    original = BUGGY.encode()
    target = _write(tmp_path / "runner.py", original)
    before = target.stat().st_mtime_ns
    with pytest.raises(FixError):
        fix_file(target, [RESET, Fix(BUGGY_PATH, 14, "            ", "x = 1", "")])
    assert target.read_bytes() == original
    assert target.stat().st_mtime_ns == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["runner.py"]


def test_unencodable_fix_leaves_file_untouched(tmp_path):
    src = "# -*- coding: ascii -*-\ndef f(x, n):\n    use(x)\n"
    target = _write(tmp_path / "m.py", src.encode("ascii"))
    with pytest.raises(UnicodeEncodeError):
        fix_file(target, [Fix("m.py", 3, "    ", "x[n:] = 'é'", "")])
    assert target.read_bytes() == src.encode("ascii")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.py"]


def test_write_fixed_refuses_a_file_changed_since_it_was_read(tmp_path):
    target = _write(tmp_path / "runner.py", BUGGY.encode())
    source = read_source(str(target))
    target.write_bytes(b"# edited meanwhile\n")  # an editor saved while the run was going
    with pytest.raises(FileChangedError, match="changed during the run"):
        write_fixed(source, FIXED)
    assert target.read_bytes() == b"# edited meanwhile\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["runner.py"]


def test_fix_file_on_a_binary_file_is_a_fix_error(tmp_path):
    target = _write(tmp_path / "blob.py", b"x = 1\n\x00")
    with pytest.raises(FixError, match="binary file"):
        fix_file(target, [RESET])
    assert target.read_bytes() == b"x = 1\n\x00"


def test_write_atomic_failure_before_replace_keeps_original(tmp_path, monkeypatch):
    target = _write(tmp_path / "m.py", b"old\n")

    def boom(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError, match="disk full"):
        write_atomic(target, b"new\n")
    assert target.read_bytes() == b"old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.py"]


def test_write_atomic_follows_symlink(tmp_path):
    real = _write(tmp_path / "real.py", b"old\n", 0o600)
    link = tmp_path / "link.py"
    link.symlink_to(real)
    write_atomic(link, b"new\n")
    assert link.is_symlink()
    assert real.read_bytes() == b"new\n"
    assert stat.S_IMODE(real.stat().st_mode) == 0o600


def test_write_atomic_new_file_respects_umask(tmp_path):
    old = os.umask(0o027)
    try:
        write_atomic(tmp_path / "new.json", b"{}\n")
    finally:
        os.umask(old)
    assert (tmp_path / "new.json").read_bytes() == b"{}\n"
    assert stat.S_IMODE((tmp_path / "new.json").stat().st_mode) == 0o640


# -- end to end: the analysis's own fix ------------------------------------------

def test_fixed_fixture_passes_check():
    from padlint.analysis import check_module
    from padlint.profile import load_profile

    profile = load_profile("vllm")
    findings = check_module(cst.parse_module(BUGGY), BUGGY_PATH, profile)
    fixes = [f.fix for f in findings if f.code == "PAD001" and f.fix is not None]
    assert len(fixes) == 1
    out = apply_fixes(BUGGY, fixes)
    assert "is_prefilling[num_reqs:] = False" in out
    assert check_module(cst.parse_module(out), BUGGY_PATH, profile) == []
    assert apply_fixes(out, fixes) == out


def test_padlint_check_fix_then_check_passes(tmp_path, capsys):
    """End to end through the CLI: --fix --unsafe-fixes writes the reset, a second check is clean."""
    from padlint.cli import main

    target = _write(tmp_path / "runner.py", BUGGY.encode(), 0o640)
    assert main(["check", "--format", "concise", str(target)]) == 1
    assert f"{target}:14:13: PAD001 " in capsys.readouterr().out
    assert main(["check", "--fix", "--unsafe-fixes", str(target)]) == 0
    assert target.read_text(encoding="utf-8") == FIXED
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert sorted(p.name for p in tmp_path.iterdir()) == ["runner.py"]
    assert main(["check", str(target)]) == 0


# -- where a reset goes when the sink's line is not the whole story ------------------

def test_reset_goes_after_an_assignment_on_the_sink_line():
    # `x` is assigned on the sink's line: a reset before the line would run before `x` exists
    src = "def f(a, n, p):\n    x = a[:p] < 1; return M(x)  # noqa: E702\n"
    out = apply_fixes(src, [Fix("m.py", 2, "    ", "x[n:] = False", "")])
    assert out == "def f(a, n, p):\n    x = a[:p] < 1\n    x[n:] = False\n    return M(x)  # noqa: E702\n"
    assert apply_fixes(out, [Fix("m.py", 4, "    ", "x[n:] = False", "")]) == out  # a rerun adds nothing


def test_one_line_if_becomes_a_block_with_the_reset_after_the_assignment():
    src = "def f(a, n, p, c):\n    if c: y = a[:p] < 1; return M(y)\n    return None\n"
    out = apply_fixes(src, [Fix("m.py", 2, "    ", "y[n:] = False", "")])
    assert out == ("def f(a, n, p, c):\n"
                   "    if c:\n"
                   "        y = a[:p] < 1\n"
                   "        y[n:] = False\n"
                   "        return M(y)\n"
                   "    return None\n")


def test_variable_assigned_on_an_earlier_line_keeps_the_plain_insertion():
    src = "def f(a, n, p):\n    x = a[:p] < 1\n    m = M(x); use(m)\n"
    out = apply_fixes(src, [Fix("m.py", 3, "    ", "x[n:] = False", "")])
    assert out == "def f(a, n, p):\n    x = a[:p] < 1\n    x[n:] = False\n    m = M(x); use(m)\n"


def test_one_value_reaching_two_sinks_gets_one_reset():
    src = ("def f(a, n, p):\n"
           "    z = a[:p] < 1\n"
           "    m = M(is_prefilling=z)\n"
           "    m2 = M(is_prefilling=z)\n")
    fixes = [Fix("m.py", 3, "    ", "z[n:] = False", ""), Fix("m.py", 4, "    ", "z[n:] = False", "")]
    assert apply_fixes(src, fixes) == ("def f(a, n, p):\n"
                                       "    z = a[:p] < 1\n"
                                       "    z[n:] = False\n"
                                       "    m = M(is_prefilling=z)\n"
                                       "    m2 = M(is_prefilling=z)\n")


def test_reset_repeated_after_the_variable_is_assigned_again():
    src = ("def f(a, b, n, p):\n"
           "    z = a[:p] < 1\n"
           "    m = M(is_prefilling=z)\n"
           "    z = b[:p] < 1\n"
           "    m2 = M(is_prefilling=z)\n")
    fixes = [Fix("m.py", 3, "    ", "z[n:] = False", ""), Fix("m.py", 5, "    ", "z[n:] = False", "")]
    assert apply_fixes(src, fixes).count("z[n:] = False") == 2


def test_guarded_reset_is_written_on_two_lines():
    src = "def f(w, n):\n    return M(is_prefilling=w)\n"
    fix = Fix("m.py", 2, "    ", "if w is not None: w[n:] = False", "")
    out = apply_fixes(src, [fix])
    assert out == "def f(w, n):\n    if w is not None:\n        w[n:] = False\n    return M(is_prefilling=w)\n"
    assert apply_fixes(out, [Fix("m.py", 4, "    ", fix.text, "")]) == out
    assert insertion_text(Fix("m.py", 2, "    ", fix.text, "")) == "    if w is not None:\n        w[n:] = False\n"
    tabs = apply_fixes("def f(w, n):\n\treturn M(w)\n", [Fix("m.py", 2, "\t", fix.text, "")])
    assert tabs == "def f(w, n):\n\tif w is not None:\n\t\tw[n:] = False\n\treturn M(w)\n"


def test_backslash_continued_line_does_not_start_a_statement():
    src = "def f(x, n):\n    a = 1; \\\n    use(x)\n"
    with pytest.raises(FixError, match="line 3 does not start a statement"):
        apply_fixes(src, [Fix("m.py", 3, "    ", "x[n:] = 0", "")])


def test_elif_line_does_not_start_a_statement():
    # ast makes `elif` an `If` inside the orelse of the first; a reset before it would be a syntax error
    src = "def f(x, n, c, d):\n    if c:\n        use(x)\n    elif d:\n        use(x)\n"
    with pytest.raises(FixError, match="line 4 does not start a statement"):
        apply_fixes(src, [Fix("m.py", 4, "    ", "x[n:] = 0", "")])


def test_comment_ending_in_a_backslash_continues_nothing():
    src = "def f(x, n):\n    # see C:\\\n    use(x)\n"
    assert apply_fixes(src, [Fix("m.py", 3, "    ", "x[n:] = 0", "")]) == \
        "def f(x, n):\n    # see C:\\\n    x[n:] = 0\n    use(x)\n"


# -- Fix.after: a statement right after the one that ends on line - 1 (PAD003's row reset) --------

MOVE = (
    "class B:\n"
    "    def condense(self, e, last):\n"
    "        if self.mask is not None:\n"
    "            self.mask[e] = (\n"
    "                self.mask[last]\n"
    "            )  # moved\n"
    "\n"
    "        last -= 1\n"
)
AFTER = Fix("b.py", 7, "            ", "self.mask[last].fill_(False)", "", after=True)


def test_after_fix_goes_at_the_end_of_the_inner_block():
    # the move is the last statement of the `if` block and spans lines 4-6 (with a trailing
    # comment): the reset becomes line 7, in the `if` block, before the blank line
    out = apply_fixes(MOVE, [AFTER])
    assert out.splitlines()[6] == "            self.mask[last].fill_(False)"
    assert out.splitlines()[7:] == ["", "        last -= 1"]
    assert out == MOVE.replace(")  # moved\n", ")  # moved\n            self.mask[last].fill_(False)\n")
    assert apply_fixes(out, [AFTER]) == out  # the reset already follows the move: nothing changes
    assert AFTER.where == "after line 6"


def test_after_fix_between_two_statements_and_crlf():
    src = "def f(a, i, j):\n    a[i] = a[j]\n    return a\n"
    fix = Fix("f.py", 3, "    ", "a[j] = 0", "", after=True)
    assert apply_fixes(src, [fix]) == "def f(a, i, j):\n    a[i] = a[j]\n    a[j] = 0\n    return a\n"
    crlf = src.replace("\n", "\r\n")
    assert apply_fixes(crlf, [fix]) == "def f(a, i, j):\r\n    a[i] = a[j]\r\n    a[j] = 0\r\n    return a\r\n"


@pytest.mark.parametrize("fix, message", [
    # line 4 follows the `if` header's block, not a simple statement at 8 spaces
    (Fix("b.py", 3, "        ", "x = 0", "", after=True), "no simple statement"),
    # wrong indentation for the statement ending on line 6
    (Fix("b.py", 7, "        ", "x = 0", "", after=True), "no simple statement"),
    # past the end of the file: nothing to insert before
    (Fix("b.py", 9, "        ", "x = 0", "", after=True), "no line after line 8"),
])
def test_after_fix_that_does_not_fit_raises(fix, message):
    with pytest.raises(FixError, match=message):
        apply_fixes(MOVE, [fix])


def test_after_fix_not_after_a_statement_followed_on_its_line():
    src = "def f(a, i, j):\n    a[i] = a[j]; a[j] = 1\n    return a\n"
    with pytest.raises(FixError, match="no simple statement"):
        apply_fixes(src, [Fix("f.py", 3, "    ", "a[j] = 0", "", after=True)])
