"""PAD004 (b) for fields whose rows were made away from the metadata call: gathers, copies,
allocations and fields of an object built elsewhere (:mod:`padlint.analysis.widths`).

Each package is written from scratch and checked as a user would (``padlint check .``).  The
sink constructor is the vllm profile's ``CommonAttentionMetadata``; ``num_reqs`` and
``num_reqs_padded`` are the profile's real/padded request pair.  A finding is expected only
where one object gets a field with one row per real request beside fields (or a count field)
at the padded request count.
"""

from __future__ import annotations

from pathlib import Path

from .test_pad004_builders import _check

HEAD = """\
import numpy as np
import torch
from vllm.v1.attention.backend import CommonAttentionMetadata
"""

RUNNER = """
class Runner:
    def __init__(self, max_num_reqs: int):
        self.seq_lens = torch.zeros(max_num_reqs, dtype=torch.int32)
        self.prompt_len = torch.zeros(max_num_reqs, dtype=torch.int32)
"""


def test_a_local_gather_beside_padded_slices(tmp_path: Path) -> None:
    """``idx = np.arange(num_reqs)`` has ``num_reqs`` rows (real); ``self.prompt_len[idx]`` one
    row per row of ``idx``; ``torch.from_numpy``/``.to`` keep rows.  ``run`` hands it beside
    ``seq_lens[:num_reqs_padded]`` and ``num_reqs=num_reqs_padded``: reported on line 14.
    ``run_padded`` gathers with ``np.arange(num_reqs_padded)``: every field padded, nothing."""
    src = HEAD + RUNNER + """
    def run(self, num_reqs, num_reqs_padded):
        idx = torch.from_numpy(np.arange(num_reqs)).to("cuda")
        prompt = self.prompt_len[idx]
        return CommonAttentionMetadata(num_reqs=num_reqs_padded, seq_lens=self.seq_lens[:num_reqs_padded],
                                       rswa_prefix_lens=prompt)

    def run_padded(self, num_reqs, num_reqs_padded):
        idx = torch.from_numpy(np.arange(num_reqs_padded)).to("cuda")
        prompt = self.prompt_len[idx]
        return CommonAttentionMetadata(num_reqs=num_reqs_padded, seq_lens=self.seq_lens[:num_reqs_padded],
                                       rswa_prefix_lens=prompt)
"""
    assert _check(tmp_path, {"m.py": src}) == [("pkg/m.py", 14, "rswa_prefix_lens")]


def test_allocations_and_out_copies(tmp_path: Path) -> None:
    """``np.zeros(num_reqs)`` has ``num_reqs`` rows (line 15 reported beside the padded
    ``seq_lens``); ``np.zeros((num_reqs_padded, 4))`` has the padded rows (nothing, line 19);
    a copy helper named in ``[axes] row_copies`` called with ``out=`` returns ``out`` (a whole
    buffer: width unknown, nothing on line 23)."""
    src = HEAD + """
def async_tensor_h2d(data, device=None, out=None):
    return torch.from_numpy(data).to(device)
""" + RUNNER + """
    def run(self, num_reqs, num_reqs_padded):
        lens = np.zeros(num_reqs, dtype=np.int32)
        return CommonAttentionMetadata(seq_lens=self.seq_lens[:num_reqs_padded], rswa_prefix_lens=lens)

    def run2(self, num_reqs, num_reqs_padded):
        lens = np.zeros((num_reqs_padded, 4), dtype=np.int32)
        return CommonAttentionMetadata(seq_lens=self.seq_lens[:num_reqs_padded], rswa_prefix_lens=lens)

    def run3(self, num_reqs, num_reqs_padded):
        lens = async_tensor_h2d(np.zeros(num_reqs, dtype=np.int32), out=self.prompt_len)
        return CommonAttentionMetadata(seq_lens=self.seq_lens[:num_reqs_padded], rswa_prefix_lens=lens)
"""
    assert _check(tmp_path, {"m.py": src}) == [("pkg/m.py", 15, "rswa_prefix_lens")]


DATA = """\
from dataclasses import dataclass

import torch


@dataclass
class Batch:
    num_reqs: int
    num_reqs_padded: int
    seq_lens: torch.Tensor
    prompt_lens: torch.Tensor
"""


def test_a_field_built_in_two_places(tmp_path: Path) -> None:
    """``Batch.prompt_lens`` is built with ``num_reqs`` rows in ``a.py`` and, in ``b.py``, with
    ``num_reqs_padded`` rows: constructions disagree, the field's width is unknown, nothing is
    reported where ``use.py`` hands it beside the padded ``seq_lens``.  Without ``b.py`` (second
    package) the one known construction gives it ``num_reqs`` rows: reported on line 9.  With
    ``c.py`` instead of ``b.py`` (a construction from a value of unknown width, as SGLang builds
    ``ForwardBatch.out_cache_loc`` from the scheduler's batch) or ``d.py`` (a construction by
    position), the field may have any width: nothing.  ``e.py`` passes ``prompt_lens=None``: no
    rows, no say: reported as with ``a.py`` alone."""
    a = HEAD + """
from pkg.data import Batch


def make(prompt_len, seq_lens, num_reqs, num_reqs_padded):
    return Batch(num_reqs=num_reqs, num_reqs_padded=num_reqs_padded, seq_lens=seq_lens[:num_reqs_padded],
                 prompt_lens=prompt_len[:num_reqs])
"""
    b = a.replace("prompt_len[:num_reqs]", "prompt_len[:num_reqs_padded]")
    use = HEAD + """from pkg.data import Batch


def use(batch: Batch):
    return CommonAttentionMetadata(num_reqs=batch.num_reqs_padded, seq_lens=batch.seq_lens,
                                   rswa_prefix_lens=batch.prompt_lens)
"""
    (tmp_path / "two").mkdir()
    (tmp_path / "one").mkdir()
    assert _check(tmp_path / "two", {"data.py": DATA, "a.py": a, "b.py": b, "use.py": use}) == []
    assert _check(tmp_path / "one", {"data.py": DATA, "a.py": a, "use.py": use}) == [
        ("pkg/use.py", 9, "rswa_prefix_lens")]
    c = a.replace("prompt_len[:num_reqs]", "prompt_len")
    d = HEAD + """
from pkg.data import Batch


def make(prompt_len, seq_lens, n, p):
    return Batch(n, p, seq_lens[:p], prompt_len[:p])
"""
    e = a.replace("prompt_len[:num_reqs]", "None")
    for name, other in (("c", c), ("d", d), ("e", e)):
        (tmp_path / name).mkdir()
        got = _check(tmp_path / name, {"data.py": DATA, "a.py": a, f"{name}.py": other, "use.py": use})
        assert got == ([("pkg/use.py", 9, "rswa_prefix_lens")] if name == "e" else []), name


def test_counts_chosen_by_a_branch(tmp_path: Path) -> None:
    """``n`` is the padded count on one branch and the real one on the other.  ``run`` hands
    ``num_reqs=n`` and ``seq_lens[:n]`` (both follow ``n``) beside ``prompt``, made with the
    real count: narrower on the padded branch, reported once (line 17).  ``run_same`` makes
    ``prompt`` with ``[:n]`` too: it follows ``n`` on both branches, nothing."""
    src = HEAD + RUNNER + """
    def run(self, num_reqs, num_reqs_padded, full):
        if full:
            n = num_reqs_padded
        else:
            n = num_reqs
        prompt = self.prompt_len[torch.arange(num_reqs)]
        return CommonAttentionMetadata(num_reqs=n, seq_lens=self.seq_lens[:n],
                                       rswa_prefix_lens=prompt)

    def run_same(self, num_reqs, num_reqs_padded, full):
        if full:
            n = num_reqs_padded
        else:
            n = num_reqs
        return CommonAttentionMetadata(num_reqs=n, seq_lens=self.seq_lens[:n],
                                       rswa_prefix_lens=self.prompt_len[:n])
"""
    assert _check(tmp_path, {"m.py": src}) == [("pkg/m.py", 17, "rswa_prefix_lens")]


def test_elementwise_operations_keep_the_rows(tmp_path: Path) -> None:
    """``done < total`` of two gathers with the real index has its rows (vLLM Model Runner V2's
    ``is_prefilling_np = num_computed_prefill_tokens_np < prefill_len_np``), and so have ``~m`` and
    ``m & (x > 0)``: ``run`` (line 14) and ``run_not`` (line 19) are reported beside the padded
    ``seq_lens``.  ``run_mixed`` compares a real-width gather with a padded slice: operands that
    disagree give no width (the operation would not broadcast), nothing on line 24; ``x is not
    None`` and ``x in y`` are one bool each, not rows: nothing on line 29."""
    src = HEAD + RUNNER + """
    def run(self, num_reqs, num_reqs_padded, done_all, total_all):
        idx = np.arange(num_reqs)
        prefilling = done_all[idx] < total_all[idx]
        return CommonAttentionMetadata(num_reqs=num_reqs_padded, seq_lens=self.seq_lens[:num_reqs_padded],
                                       is_prefilling=torch.from_numpy(prefilling))

    def run_not(self, num_reqs, num_reqs_padded, done_all):
        m = done_all[np.arange(num_reqs)] > 0
        return CommonAttentionMetadata(num_reqs=num_reqs_padded, seq_lens=self.seq_lens[:num_reqs_padded],
                                       is_prefilling=~m & (m > 0))

    def run_mixed(self, num_reqs, num_reqs_padded, done_all):
        m = done_all[np.arange(num_reqs)] > self.seq_lens[:num_reqs_padded]
        return CommonAttentionMetadata(num_reqs=num_reqs_padded, seq_lens=self.seq_lens[:num_reqs_padded],
                                       is_prefilling=m)

    def run_is(self, num_reqs, num_reqs_padded, done_all):
        m = done_all[np.arange(num_reqs)] > 0
        return CommonAttentionMetadata(num_reqs=num_reqs_padded, seq_lens=self.seq_lens[:num_reqs_padded],
                                       is_prefilling=m is not None, causal=m in done_all)
"""
    assert _check(tmp_path, {"m.py": src}) == [("pkg/m.py", 14, "is_prefilling"), ("pkg/m.py", 19, "is_prefilling")]


def test_the_padded_path_follows_control_flow(tmp_path: Path) -> None:
    """The object is judged on the padded path only where the padded assignment reaches it.
    ``sibling`` pads ``prompt`` in the FULL branch and hands it as it is only in the other
    branch (where ``n`` is real): nothing.  ``early`` returns in the real branch before the
    padded assignment: nothing.  ``ifexp`` picks ``n = num_reqs_padded if full else num_reqs``
    and hands ``prompt`` (real rows) beside ``seq_lens[:n]``: reported on line 34."""
    src = HEAD + RUNNER + """
    def sibling(self, num_reqs, num_reqs_padded, full):
        prompt = self.prompt_len[torch.arange(num_reqs)]
        if full:
            n = num_reqs_padded
            md = CommonAttentionMetadata(num_reqs=n, seq_lens=self.seq_lens[:n],
                                         rswa_prefix_lens=torch.nn.functional.pad(prompt, (0, n - num_reqs)))
        else:
            n = num_reqs
            md = CommonAttentionMetadata(num_reqs=n, seq_lens=self.seq_lens[:n], rswa_prefix_lens=prompt)
        return md

    def early(self, num_reqs, num_reqs_padded, full):
        prompt = self.prompt_len[torch.arange(num_reqs)]
        if not full:
            n = num_reqs
            return CommonAttentionMetadata(num_reqs=n, seq_lens=self.seq_lens[:n], rswa_prefix_lens=prompt)
        n = num_reqs_padded
        return CommonAttentionMetadata(num_reqs=n, seq_lens=self.seq_lens[:n],
                                       rswa_prefix_lens=torch.nn.functional.pad(prompt, (0, n - num_reqs)))

    def ifexp(self, num_reqs, num_reqs_padded, full):
        prompt = self.prompt_len[torch.arange(num_reqs)]
        n = num_reqs_padded if full else num_reqs
        return CommonAttentionMetadata(num_reqs=n, seq_lens=self.seq_lens[:n],
                                       rswa_prefix_lens=prompt)
"""
    assert _check(tmp_path, {"m.py": src}) == [("pkg/m.py", 34, "rswa_prefix_lens")]


USE = HEAD + """from pkg.data import Batch


def use(batch: Batch):
    return CommonAttentionMetadata(num_reqs=batch.num_reqs_padded, seq_lens=batch.seq_lens,
                                   rswa_prefix_lens=batch.prompt_lens)
"""

MAKE = HEAD + """
from pkg.data import Batch


def make(prompt_len, seq_lens, num_reqs, num_reqs_padded):
    return Batch(num_reqs=num_reqs, num_reqs_padded=num_reqs_padded, seq_lens=seq_lens[:num_reqs_padded],
                 prompt_lens=prompt_len[:num_reqs])
"""


def test_fields_the_code_may_change_after_construction(tmp_path: Path) -> None:
    """``make`` builds ``Batch.prompt_lens`` with ``num_reqs`` rows (alone: reported, as in
    :func:`test_a_field_built_in_two_places`).  Each variant lets the field hold other rows, so
    nothing is reported: ``__post_init__`` pads it; a class with its own ``__init__`` (not a
    dataclass) pads it; the consumer stores ``batch.prompt_lens = F.pad(...)`` before the sink; a
    construction through an import alias (``Batch as PaddedBatch``) gives it the padded rows;
    a class method's ``cls(...)`` gives it the padded rows."""
    post = DATA + """
    def __post_init__(self):
        self.prompt_lens = torch.nn.functional.pad(self.prompt_lens, (0, self.num_reqs_padded - self.num_reqs))
"""
    plain = DATA.replace("@dataclass\n", "") + """
    def __init__(self, num_reqs, num_reqs_padded, seq_lens, prompt_lens):
        self.num_reqs = num_reqs
        self.num_reqs_padded = num_reqs_padded
        self.seq_lens = seq_lens
        self.prompt_lens = torch.nn.functional.pad(prompt_lens, (0, num_reqs_padded - num_reqs))
"""
    stored = USE.replace("    return Common", "    batch.prompt_lens = torch.nn.functional.pad(batch.prompt_lens, (0, 1))\n"
                                             "    return Common")
    alias = """from pkg.data import Batch as PaddedBatch


def make_padded(prompt_len, seq_lens, num_reqs, num_reqs_padded):
    return PaddedBatch(num_reqs=num_reqs, num_reqs_padded=num_reqs_padded, seq_lens=seq_lens[:num_reqs_padded],
                       prompt_lens=prompt_len[:num_reqs_padded])
"""
    dummy = DATA + """
    @classmethod
    def make_dummy(cls, prompt_len, seq_lens, num_reqs_padded):
        return cls(num_reqs=num_reqs_padded, num_reqs_padded=num_reqs_padded,
                   seq_lens=seq_lens[:num_reqs_padded], prompt_lens=prompt_len[:num_reqs_padded])
"""
    cases = {
        "alone": {"data.py": DATA, "a.py": MAKE, "use.py": USE},
        "post": {"data.py": post, "a.py": MAKE, "use.py": USE},
        "plain": {"data.py": plain, "a.py": MAKE, "use.py": USE},
        "stored": {"data.py": DATA, "a.py": MAKE, "use.py": stored},
        "alias": {"data.py": DATA, "a.py": MAKE, "b.py": alias, "use.py": USE},
        "dummy": {"data.py": dummy, "a.py": MAKE, "use.py": USE},
    }
    got = {}
    for name, files in cases.items():
        (tmp_path / name).mkdir()
        got[name] = _check(tmp_path / name, files)
    assert got == {"alone": [("pkg/use.py", 9, "rswa_prefix_lens")], "post": [], "plain": [], "stored": [],
                   "alias": [], "dummy": []}


def test_field_chains_do_not_depend_on_the_order_they_are_read(tmp_path: Path) -> None:
    """``A.x`` <- ``B.y`` <- ``C.z`` <- ``D.w`` = ``np.zeros(num_reqs)``: every field has
    ``num_reqs`` rows; a sink reads ``c.z`` and another ``a.x`` (line 8 of each).  Both are
    reported whichever module is read first (the modules' names decide the order)."""
    data = "from dataclasses import dataclass\n\nimport torch\n" + "".join(
        f"\n\n@dataclass\nclass {c}:\n    {f}: torch.Tensor\n" for c, f in (("D", "w"), ("C", "z"), ("B", "y"), ("A", "x")))
    make = """import numpy as np
from pkg.data import A, B, C, D


def mk_d(num_reqs):
    return D(w=np.zeros(num_reqs))


def mk_c(d: D):
    return C(z=d.w)


def mk_b(c: C):
    return B(y=c.z)


def mk_a(b: B):
    return A(x=b.y)
"""
    def use(cls: str, attr: str) -> str:
        return HEAD + f"""from pkg.data import {cls}


def use(o: {cls}, seq_lens, num_reqs_padded):
    return CommonAttentionMetadata(num_reqs=num_reqs_padded, seq_lens=seq_lens[:num_reqs_padded],
                                   rswa_prefix_lens=o.{attr})
"""
    for first, last in (("aa", "zz"), ("zz", "aa")):
        d = tmp_path / first
        d.mkdir()
        got = _check(d, {"data.py": data, "make.py": make, f"{first}_use_a.py": use("A", "x"),
                         f"{last}_use_c.py": use("C", "z")})
        assert sorted(got) == sorted([(f"pkg/{first}_use_a.py", 9, "rswa_prefix_lens"),
                                      (f"pkg/{last}_use_c.py", 9, "rswa_prefix_lens")]), first


def test_a_boolean_mask_is_no_gather_of_its_rows(tmp_path: Path) -> None:
    """``self.prompt_len[keep]`` with ``keep = np.ones(num_reqs_padded, dtype=bool)`` selects the
    rows where ``keep`` is True, not ``num_reqs_padded`` of them; nor does ``x[a > 0]`` have
    ``a``'s rows.  Beside ``seq_lens[:num_reqs]`` neither is reported (a gather with the padded
    index ``np.arange(num_reqs_padded)`` is, line 16)."""
    src = HEAD + RUNNER + """
    def run(self, num_reqs, num_reqs_padded, done):
        keep = np.ones(num_reqs_padded, dtype=bool)
        keep[done] = False
        a = self.prompt_len[np.arange(num_reqs_padded)]
        return CommonAttentionMetadata(seq_lens=self.seq_lens[:num_reqs], block_table_tensor=self.prompt_len[:num_reqs],
                                       rswa_prefix_lens=self.prompt_len[keep], is_prefilling=self.prompt_len[a > 0],
                                       dcp_local_seq_lens=a)
"""
    assert _check(tmp_path, {"m.py": src}) == [("pkg/m.py", 16, "dcp_local_seq_lens")]


def test_a_real_count_parameter_reassigned_the_padded_one(tmp_path: Path) -> None:
    """``num_reqs`` (a parameter named as the real count) becomes ``num_reqs_padded`` under a
    test: on that path ``seq_lens[:num_reqs]`` and ``num_reqs=`` are padded while
    ``batch.prompt_lens`` keeps the real rows ``make`` gave it: reported (line 11).  ``keep``
    reassigns nothing: every count is the real one, nothing."""
    use = HEAD + """from pkg.data import Batch


def use(batch: Batch, num_reqs, num_reqs_padded, full):
    if full:
        num_reqs = num_reqs_padded
    return CommonAttentionMetadata(num_reqs=num_reqs, seq_lens=batch.seq_lens[:num_reqs],
                                   rswa_prefix_lens=batch.prompt_lens)


def keep(batch: Batch, num_reqs):
    return CommonAttentionMetadata(num_reqs=num_reqs, seq_lens=batch.seq_lens[:num_reqs],
                                   rswa_prefix_lens=batch.prompt_lens)
"""
    assert _check(tmp_path, {"data.py": DATA, "a.py": MAKE, "use.py": use}) == [("pkg/use.py", 11, "rswa_prefix_lens")]


def test_a_name_rebound_to_a_conversion_of_itself(tmp_path: Path) -> None:
    """``idx = np.arange(num_reqs)`` then ``idx = torch.from_numpy(idx).cuda()``: the second value
    reads the name itself and keeps its rows, so ``idx`` has ``num_reqs`` rows and the gather
    with it too: reported beside the padded ``seq_lens`` (line 15).  ``shrink`` rebinds
    ``idx = idx[:num_reqs_padded]``, a slice to another count: the values disagree, nothing
    (line 21)."""
    src = HEAD + RUNNER + """
    def run(self, num_reqs, num_reqs_padded):
        idx = np.arange(num_reqs)
        idx = torch.from_numpy(idx).cuda()
        prompt = self.prompt_len[idx]
        return CommonAttentionMetadata(num_reqs=num_reqs_padded, seq_lens=self.seq_lens[:num_reqs_padded],
                                       rswa_prefix_lens=prompt)

    def shrink(self, num_reqs, num_reqs_padded):
        idx = np.arange(num_reqs)
        idx = idx[:num_reqs_padded]
        return CommonAttentionMetadata(num_reqs=num_reqs_padded, seq_lens=self.seq_lens[:num_reqs_padded],
                                       rswa_prefix_lens=self.prompt_len[idx])
"""
    assert _check(tmp_path, {"m.py": src}) == [("pkg/m.py", 15, "rswa_prefix_lens")]


def test_a_same_named_field_of_another_class_does_not_unsettle_the_field(tmp_path: Path) -> None:
    """``Batch.prompt_lens`` built with ``num_reqs`` rows (:func:`test_fields_the_code_may_change_after_construction`,
    "alone": reported).  Another class that stores ``self.prompt_lens = ...`` on its own objects
    (vLLM 0.32.0's watermarking draft state beside the input batch) does not change a ``Batch``'s
    field: still reported.  A subclass of ``Batch`` that stores it does: nothing."""
    other = """import torch


class DraftState:
    def __init__(self, max_num_reqs):
        self.prompt_lens = torch.zeros(max_num_reqs, dtype=torch.int32)

    def update(self, lens):
        self.prompt_lens = lens
"""
    sub = """import torch
from pkg.data import Batch


class PaddedBatch(Batch):
    def pad(self):
        self.prompt_lens = torch.nn.functional.pad(self.prompt_lens, (0, 1))
"""
    got = {}
    for name, extra in (("other", other), ("sub", sub)):
        (tmp_path / name).mkdir()
        got[name] = _check(tmp_path / name, {"data.py": DATA, "a.py": MAKE, "use.py": USE, "extra.py": extra})
    assert got == {"other": [("pkg/use.py", 9, "rswa_prefix_lens")], "sub": []}
