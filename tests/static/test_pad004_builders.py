"""PAD004 (b) through metadata builders: which calls count as building one metadata object,
and with which fields (the shapes a review of the builder change found, each written from
scratch as a small package checked as a user would).

Every package has ``Drafter``-like buffers ``seq_lens``, ``block_table`` and ``is_prefilling``
(one row per request) and a sink constructor, ``CommonAttentionMetadata`` (the vLLM profile's).
A finding is expected only where one call hands the same object request fields at the real
count ``num_reqs`` and at its padded partner ``num_reqs_padded``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from .test_project_fixtures import _env

HEAD = """\
import torch
from vllm.v1.attention.backend import CommonAttentionMetadata
"""

BUFFERS = """\
    def __init__(self, max_num_reqs: int):
        self.seq_lens = torch.zeros(max_num_reqs, dtype=torch.int32)
        self.block_table = torch.zeros((max_num_reqs, 16), dtype=torch.int32)
        self.is_prefilling = torch.zeros(max_num_reqs, dtype=torch.bool)
"""


def _check(tmp_path: Path, files: dict[str, str]) -> list[tuple[str, int, str]]:
    (tmp_path / "padlint.toml").write_text('profile = "vllm"\n')
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    for name, text in files.items():
        (tmp_path / "pkg" / name).write_text(textwrap.dedent(text))
    proc = subprocess.run([sys.executable, "-m", "padlint", "check", ".", "--select", "PAD004", "--format",
                           "json", "--no-cache"], cwd=tmp_path, env=_env(), capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode in (0, 1), proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["errors"] == []
    return sorted((f["path"], f["line"], f["field"]) for f in doc["findings"])


def test_unbound_method_call_passes_the_receiver(tmp_path: Path) -> None:
    """``Builder.build(self.b, a, b, c)`` passes the receiver itself: ``a`` is ``seq_lens``.
    ``run`` hands every field at the padded count (nothing); ``run2`` hands ``is_prefilling``
    (line 22) at the real count; ``run3`` hands ``seq_lens`` (line 25) at the real count."""
    src = HEAD + """
class Builder:
    def build(self, seq_lens, block_table, is_prefilling):
        return CommonAttentionMetadata(seq_lens=seq_lens, block_table_tensor=block_table,
                                       is_prefilling=is_prefilling)


class Drafter:
""" + BUFFERS + """        self.b = Builder()

    def run(self, num_reqs, num_reqs_padded):
        return Builder.build(self.b, self.seq_lens[:num_reqs_padded], self.block_table[:num_reqs_padded], self.is_prefilling[:num_reqs_padded])

    def run2(self, num_reqs, num_reqs_padded):
        return Builder.build(self.b, self.seq_lens[:num_reqs_padded], self.block_table[:num_reqs_padded],
                             self.is_prefilling[:num_reqs])

    def run3(self, num_reqs, num_reqs_padded):
        return Builder.build(self.b, self.seq_lens[:num_reqs], self.block_table[:num_reqs_padded],
                             self.is_prefilling[:num_reqs_padded])
"""
    assert _check(tmp_path, {"m.py": src}) == [("pkg/m.py", 22, "is_prefilling"), ("pkg/m.py", 25, "seq_lens")]


def test_a_builder_that_bounds_its_fields_by_a_parameter(tmp_path: Path) -> None:
    """``build(n, s, p)`` passes ``s[:n]`` and ``p[:n]``: both fields have the width of the count
    the caller passes for ``n``, whatever the arguments' own slices.  ``run`` passes
    ``num_reqs``: both fields are ``num_reqs`` wide, nothing to report.  ``run_whole`` passes the
    whole buffers with ``n=num_reqs_padded`` (both fields ``num_reqs_padded`` wide) and a third
    field, ``block_table``, which the builder hands on as itself, at ``[:num_reqs]``: that one
    (line 24) is the odd one."""
    src = HEAD + """
def build(num_reqs, seq_lens, is_prefilling, block_table=None):
    return CommonAttentionMetadata(
        num_reqs=num_reqs,
        seq_lens=seq_lens[:num_reqs],
        is_prefilling=is_prefilling[:num_reqs],
        block_table_tensor=block_table,
    )


class Drafter:
""" + BUFFERS + """
    def run(self, num_reqs, num_reqs_padded):
        return build(num_reqs, self.seq_lens[:num_reqs_padded], self.is_prefilling[:num_reqs])

    def run_whole(self, num_reqs, num_reqs_padded):
        return build(num_reqs_padded, self.seq_lens, self.is_prefilling,
                     block_table=self.block_table[:num_reqs])
"""
    assert _check(tmp_path, {"m.py": src}) == [("pkg/m.py", 24, "block_table_tensor")]


def test_names_the_caller_binds_itself_are_not_the_builder(tmp_path: Path) -> None:
    """A nested ``def build`` and a parameter ``build=print`` shadow the module builder; a method
    of a class nested in another calls its own ``self.build``, not the outer class's: nothing."""
    src = HEAD + """
def build(seq_lens, is_prefilling):
    return CommonAttentionMetadata(seq_lens=seq_lens, is_prefilling=is_prefilling)


class Drafter:
""" + BUFFERS + """
    def log(self, num_reqs, num_reqs_padded):
        def build(a, b):
            return a.sum() + b.sum()
        return build(self.seq_lens[:num_reqs_padded], self.is_prefilling[:num_reqs])

    def cb(self, num_reqs, num_reqs_padded, build=print):
        build(self.seq_lens[:num_reqs_padded], self.is_prefilling[:num_reqs])

    def build(self, seq_lens, is_prefilling):
        return CommonAttentionMetadata(seq_lens=seq_lens, is_prefilling=is_prefilling)

    class Stats:
        def build(self, a, b):
            return a.sum() + b.sum()

        def report(self, owner, num_reqs, num_reqs_padded):
            return self.build(owner.seq_lens[:num_reqs_padded], owner.is_prefilling[:num_reqs])
"""
    assert _check(tmp_path, {"m.py": src}) == []


def test_parameters_rebound_or_indexed_are_not_the_fields(tmp_path: Path) -> None:
    """``build`` rebinds ``is_prefilling`` to a lookup and ``seq_lens`` to a concatenation;
    ``build2`` hands ``seq_lens[0]`` (one row) and ``block_table[1:]`` (not a prefix): the
    arguments' widths are not the fields'.  Nothing."""
    src = HEAD + """
def build(num_reqs, seq_lens, is_prefilling, cache):
    is_prefilling = cache.lookup(is_prefilling, num_reqs)
    seq_lens = torch.cat([seq_lens, seq_lens])
    return CommonAttentionMetadata(seq_lens=seq_lens, is_prefilling=is_prefilling)


def build2(seq_lens, block_table, is_prefilling):
    return CommonAttentionMetadata(seq_lens=seq_lens[0], block_table_tensor=block_table[1:],
                                   is_prefilling=is_prefilling)


class Drafter:
""" + BUFFERS + """
    def run(self, num_reqs, num_reqs_padded):
        return build(num_reqs, self.seq_lens[:num_reqs_padded], self.is_prefilling[:num_reqs], None)

    def run2(self, num_reqs, num_reqs_padded):
        return build2(self.seq_lens[:num_reqs_padded], self.block_table[:num_reqs], self.is_prefilling[:num_reqs])
"""
    assert _check(tmp_path, {"m.py": src}) == []


CHAIN = HEAD + """
def b0(seq_lens, is_prefilling):
    return CommonAttentionMetadata(seq_lens=seq_lens, is_prefilling=is_prefilling)


def h3(seq_lens, is_prefilling):
    return b0(seq_lens=seq_lens, is_prefilling=is_prefilling)


def h2(seq_lens, is_prefilling):
    return h3(seq_lens=seq_lens, is_prefilling=is_prefilling)


def h1(seq_lens, is_prefilling):
    return h2(seq_lens=seq_lens, is_prefilling=is_prefilling)


def h0(seq_lens, is_prefilling):
    return h1(seq_lens=seq_lens, is_prefilling=is_prefilling)


def fa(seq_lens, is_prefilling, retry=False):
    if retry:
        return fb(seq_lens, is_prefilling)
    return CommonAttentionMetadata(seq_lens=seq_lens, is_prefilling=is_prefilling)


def fb(seq_lens, is_prefilling):
    return fa(seq_lens, is_prefilling)
"""


def _callers(first: str, second: str) -> str:
    return "import torch\nfrom pkg.lib import fa, fb, h0, h3\n\n\nclass Drafter:\n" + BUFFERS + f"""
    def a(self, num_reqs, num_reqs_padded):
        return {first}

    def b(self, num_reqs, num_reqs_padded):
        return {second}
"""


def test_builders_found_whatever_the_order_calls_are_read(tmp_path: Path) -> None:
    """``h3`` reaches the constructor one builder down, ``h0`` four (past the limit of three);
    ``fb`` hands its parameters to ``fa`` and ``fa`` back to ``fb``.  A buggy call of ``h3`` or
    ``fb`` (``is_prefilling`` at the real count) is reported whether a call of ``h0`` or ``fa``
    was read first (line 12) or after (line 15): the answer for a function does not depend on
    where the reading started."""
    ok_h0 = "h0(self.seq_lens[:num_reqs_padded], self.is_prefilling[:num_reqs_padded])"
    bad_h3 = "h3(self.seq_lens[:num_reqs_padded], self.is_prefilling[:num_reqs])"
    ok_fa = "fa(self.seq_lens[:num_reqs_padded], self.is_prefilling[:num_reqs_padded])"
    bad_fb = "fb(self.seq_lens[:num_reqs_padded], self.is_prefilling[:num_reqs])"
    for i, (first, second, line) in enumerate([(ok_h0, bad_h3, 15), (bad_h3, ok_h0, 12),
                                               (ok_fa, bad_fb, 15), (bad_fb, ok_fa, 12)]):
        root = tmp_path / str(i)
        root.mkdir()
        got = _check(root, {"lib.py": CHAIN, "caller.py": _callers(first, second)})
        assert got == [("pkg/caller.py", line, "is_prefilling")], (first, second, got)


# two modules defining `build`: a metadata builder (`attn.py`) and a function that builds nothing
IMPORTED_BUILDERS = {
    "attn.py": HEAD + """
def build(seq_lens, block_table, is_prefilling):
    return CommonAttentionMetadata(seq_lens=seq_lens, block_table_tensor=block_table,
                                   is_prefilling=is_prefilling)
""",
    "other.py": """
def build(seq_lens, block_table, is_prefilling):
    return (seq_lens, block_table, is_prefilling)
""",
}


def _drafter(*methods: str) -> str:
    """A drafter whose methods each bind ``build`` their own way (``from .attn import build``,
    ``from .other import build``, ``build = make``) and hand it ``is_prefilling`` at the real count
    beside the other request fields at the padded count (each method 4 lines and a blank)."""
    body = {
        "run": "from .attn import build",
        "run_shadowed": "from .other import build",
        "run_local": "build = make",
    }
    out = "import torch\n\n\nclass Drafter:\n" + BUFFERS
    for name in methods:
        extra = ", make" if name == "run_local" else ""
        out += f"""
    def {name}(self, num_reqs, num_reqs_padded{extra}):
        {body[name]}
        return build(self.seq_lens[:num_reqs_padded], self.block_table[:num_reqs_padded],
                     self.is_prefilling[:num_reqs])
"""
    return out


def test_a_builder_imported_inside_the_calling_function(tmp_path: Path) -> None:
    """vLLM imports lazily in function bodies: ``from .attn import build`` inside ``run`` binds
    ``build`` to the module-level builder of ``attn.py``, so ``run`` hands ``is_prefilling`` at
    the real count beside request fields at the padded count (line 13).  In ``run_shadowed``
    the same name is imported from another module (``other.build``, no builder): nothing to
    report; ``run_local`` assigns the name itself (a local, not the builder): nothing."""
    files = {**IMPORTED_BUILDERS, "drafter.py": _drafter("run", "run_shadowed", "run_local")}
    assert _check(tmp_path, files) == [("pkg/drafter.py", 13, "is_prefilling")]


def test_a_builder_imported_in_a_body_does_not_depend_on_the_order_of_methods(tmp_path: Path) -> None:
    """As above with ``run_shadowed`` (importing ``build`` from ``other``) first: the module's
    index keeps the first import of a name, but each function's own import decides for its
    calls.  ``run`` is now at line 15: its ``is_prefilling`` field at line 18."""
    files = {**IMPORTED_BUILDERS, "drafter.py": _drafter("run_shadowed", "run")}
    assert _check(tmp_path, files) == [("pkg/drafter.py", 18, "is_prefilling")]


def test_a_parameter_fed_by_keyword_and_by_position_reports_the_keyword_field(tmp_path: Path) -> None:
    """``wrap(a, b)`` hands ``a`` to ``build`` twice, as ``seq_lens`` (by position) and as
    ``is_prefilling`` (by keyword): the builder's parameter ``a`` is reported as the keyword's
    field, whatever the binding's internal order (a baseline keys findings on the field).  The
    caller hands ``a`` at the real count beside ``b`` at the padded count (line 16)."""
    src = HEAD + """
def build(seq_lens, block_table, is_prefilling):
    return CommonAttentionMetadata(seq_lens=seq_lens, block_table_tensor=block_table,
                                   is_prefilling=is_prefilling)


def wrap(a, b):
    return build(a, b, is_prefilling=a)


class Drafter:
""" + BUFFERS + """
    def run(self, num_reqs, num_reqs_padded):
        return wrap(self.seq_lens[:num_reqs], self.block_table[:num_reqs_padded])
"""
    got = _check(tmp_path, {"m.py": src})
    assert [f for _p, _l, f in got] == ["is_prefilling"], got
