"""Resets made by code in a module that names no count: a helper imported by name, a class
holding the runner's buffers, a static method called on its class.

A module is read to resolve a name imported from it only when its text may matter.  That test
looked for the profile's count names and sinks, so a helper written with counts of its own names
(``def zero_tail(buf, n, p): buf[n:p].zero_()``) or a buffer holder whose ``fill`` resets
``self.seq_lens[n:p]`` was never read: the reset was lost (a false alarm at the runner's sink)
and deleting it changed nothing.  ``from pkg import utils; utils.zero_tail(...)`` was read
(module attributes were not filtered), ``from pkg.utils import zero_tail`` was not.  A module
that writes rows of a tensor in place (a store into a slice, an in-place fill) is now read too.
A static method called on its class (``ModelRunner._zero(buf, n, p)``) was not followed at all,
and a method of another object whose text sliced no ``self.x`` with a count was not followed
either, although it wrote a tail of rows through a local (``t = self.seq_lens; t[n:p] = 0``).

Written from scratch: each case is a package whose ``pkg/runner.py``, checked alone (as
pre-commit passes one changed file), writes rows ``[:num_reqs]`` of ``seq_lens`` and hands
``seq_lens[:num_reqs_padded]`` to ``CommonAttentionMetadata``; the other modules are read as
context.  The expected findings: one PAD001 ``seq_lens`` when the code called writes no
padding row (``noop`` / ``_nopad``), none when it writes all of them.
"""

from __future__ import annotations

import pytest

from .project_files import check_files

HDR = "import torch\nfrom vllm.v1.attention.backend import CommonAttentionMetadata\n"
STEP = '''
    def execute_model(self, so):
        num_reqs = so.num_reqs
        num_reqs_padded = self.cudagraph_dispatcher.pad(num_reqs)
        {WRITE}
        {CALL}
        return CommonAttentionMetadata(seq_lens={VIEW}[:num_reqs_padded], num_reqs=num_reqs_padded)
'''
UTILS = '''\
def zero_tail(buf, n, p):
    buf[n:p].zero_()


def total(buf, n, p):
    return buf[n:p].sum()
'''

CASES = {
    # a module function imported by name, counts under the helper's own names
    "helper imported by name": ({
        "pkg/utils.py": UTILS,
        "pkg/runner.py": HDR + "from pkg.utils import zero_tail, total\n\n\nclass ModelRunner:\n"
        "    def __init__(self, m):\n        self.seq_lens = torch.zeros(m, dtype=torch.int32)\n" + STEP.replace(
            "{WRITE}", "self.seq_lens[:num_reqs] = so.lens").replace(
            "{CALL}", "{F}(self.seq_lens, num_reqs, num_reqs_padded)").replace("{VIEW}", "self.seq_lens"),
    }, ("total", "zero_tail")),
    # the same through the module, which was always read
    "helper through its module": ({
        "pkg/utils.py": UTILS,
        "pkg/runner.py": HDR + "from pkg import utils\n\n\nclass ModelRunner:\n"
        "    def __init__(self, m):\n        self.seq_lens = torch.zeros(m, dtype=torch.int32)\n" + STEP.replace(
            "{WRITE}", "self.seq_lens[:num_reqs] = so.lens").replace(
            "{CALL}", "utils.{F}(self.seq_lens, num_reqs, num_reqs_padded)").replace("{VIEW}", "self.seq_lens"),
    }, ("total", "zero_tail")),
    # the package re-exports the helper (`pkg/__init__.py`), the runner imports it from there
    "helper re-exported by the package": ({
        "pkg/__init__.py": "from pkg.utils import total, zero_tail\n",
        "pkg/utils.py": UTILS,
        "pkg/runner.py": HDR + "from pkg import zero_tail, total\n\n\nclass ModelRunner:\n"
        "    def __init__(self, m):\n        self.seq_lens = torch.zeros(m, dtype=torch.int32)\n" + STEP.replace(
            "{WRITE}", "self.seq_lens[:num_reqs] = so.lens").replace(
            "{CALL}", "{F}(self.seq_lens, num_reqs, num_reqs_padded)").replace("{VIEW}", "self.seq_lens"),
    }, ("total", "zero_tail")),
    # a class holding the buffers, in a module that names no count, writes and resets them
    "buffer holder": ({
        "pkg/bufs.py": "import torch\n\n\nclass InputBuffers:\n    def __init__(self, m):\n"
        "        self.seq_lens = torch.zeros(m, dtype=torch.int32)\n\n"
        "    def fill(self, lens, n, p):\n        self.seq_lens[:n] = lens\n\n"
        "    def fill_and_pad(self, lens, n, p):\n        self.seq_lens[:n] = lens\n        self.seq_lens[n:p].fill_(0)\n",
        "pkg/runner.py": HDR + "from pkg.bufs import InputBuffers\n\n\nclass ModelRunner:\n"
        "    def __init__(self, m):\n        self.bufs = InputBuffers(m)\n" + STEP.replace("{WRITE}", "pass").replace(
            "{CALL}", "self.bufs.{F}(so.lens, num_reqs, num_reqs_padded)").replace("{VIEW}", "self.bufs.seq_lens"),
    }, ("fill", "fill_and_pad")),
    # the holder's method resets the rows through a local that names the buffer: a method of
    # another object is followed only where its text may touch padding rows, which a slice of
    # `self.x` with a count showed and a tail written through a local did not
    "holder resets through a local": ({
        "pkg/bufs.py": "import torch\n\n\nclass InputBuffers:\n    def __init__(self, m):\n"
        "        self.seq_lens = torch.zeros(m, dtype=torch.int32)\n        self.other = torch.zeros(m)\n\n"
        "    def pad_other(self, n, p):\n        t = self.other\n        t[n:p] = 0\n\n"
        "    def pad(self, n, p):\n        t = self.seq_lens\n        t[n:p] = 0\n",
        "pkg/runner.py": HDR + "from pkg.bufs import InputBuffers\n\n\nclass ModelRunner:\n"
        "    def __init__(self, m):\n        self.bufs = InputBuffers(m)\n" + STEP.replace(
            "{WRITE}", "self.bufs.seq_lens[:num_reqs] = so.lens").replace(
            "{CALL}", "self.bufs.{F}(num_reqs, num_reqs_padded)").replace("{VIEW}", "self.bufs.seq_lens"),
    }, ("pad_other", "pad")),
    "holder resets in a loop": ({
        "pkg/bufs.py": "import torch\n\n\nclass InputBuffers:\n    def __init__(self, m):\n"
        "        self.seq_lens = torch.zeros(m, dtype=torch.int32)\n        self.other = torch.zeros(m)\n\n"
        "    def pad_other(self, n, p):\n        for b in (self.other,):\n            b[n:].zero_()\n\n"
        "    def pad(self, n, p):\n        for b in (self.other, self.seq_lens):\n            b[n:].zero_()\n",
        "pkg/runner.py": HDR + "from pkg.bufs import InputBuffers\n\n\nclass ModelRunner:\n"
        "    def __init__(self, m):\n        self.bufs = InputBuffers(m)\n" + STEP.replace(
            "{WRITE}", "self.bufs.seq_lens[:num_reqs] = so.lens").replace(
            "{CALL}", "self.bufs.{F}(num_reqs, num_reqs_padded)").replace("{VIEW}", "self.bufs.seq_lens"),
    }, ("pad_other", "pad")),
    # a static method called on its class
    "static method": ({
        "pkg/runner.py": HDR + "\n\nclass ModelRunner:\n"
        "    def __init__(self, m):\n        self.seq_lens = torch.zeros(m, dtype=torch.int32)\n\n"
        "    @staticmethod\n    def _zero(buf, n, p):\n        buf[n:p].zero_()\n\n"
        "    @staticmethod\n    def _total(buf, n, p):\n        return buf[n:p].sum()\n" + STEP.replace(
            "{WRITE}", "self.seq_lens[:num_reqs] = so.lens").replace(
            "{CALL}", "ModelRunner.{F}(self.seq_lens, num_reqs, num_reqs_padded)").replace("{VIEW}", "self.seq_lens"),
    }, ("_total", "_zero")),
    # class methods (2026-12-06): `cls` is bound by the call, the caller's arguments fill the
    # parameters after it (they filled `cls` and the rest one place off: the reset was lost)
    "class method on its class": ({
        "pkg/runner.py": HDR + "\n\nclass ModelRunner:\n"
        "    def __init__(self, m):\n        self.seq_lens = torch.zeros(m, dtype=torch.int32)\n\n"
        "    @classmethod\n    def _zero(cls, buf, n, p):\n        buf[n:p].zero_()\n\n"
        "    @classmethod\n    def _total(cls, buf, n, p):\n        return buf[n:p].sum()\n" + STEP.replace(
            "{WRITE}", "self.seq_lens[:num_reqs] = so.lens").replace(
            "{CALL}", "ModelRunner.{F}(self.seq_lens, num_reqs, num_reqs_padded)").replace("{VIEW}", "self.seq_lens"),
    }, ("_total", "_zero")),
    "class method through self": ({
        "pkg/runner.py": HDR + "\n\nclass ModelRunner:\n"
        "    def __init__(self, m):\n        self.seq_lens = torch.zeros(m, dtype=torch.int32)\n\n"
        "    @classmethod\n    def _zero(cls, buf, n, p):\n        buf[n:p].zero_()\n\n"
        "    @classmethod\n    def _total(cls, buf, n, p):\n        return buf[n:p].sum()\n" + STEP.replace(
            "{WRITE}", "self.seq_lens[:num_reqs] = so.lens").replace(
            "{CALL}", "self.{F}(self.seq_lens, num_reqs, num_reqs_padded)").replace("{VIEW}", "self.seq_lens"),
    }, ("_total", "_zero")),
    # a class method that calls a static method of its class through `cls`
    "class method calling cls": ({
        "pkg/runner.py": HDR + "\n\nclass ModelRunner:\n"
        "    def __init__(self, m):\n        self.seq_lens = torch.zeros(m, dtype=torch.int32)\n\n"
        "    @staticmethod\n    def _zero_rows(buf, n, p):\n        buf[n:p].zero_()\n\n"
        "    @staticmethod\n    def _sum_rows(buf, n, p):\n        return buf[n:p].sum()\n\n"
        "    @classmethod\n    def _zero(cls, buf, n, p):\n        cls._zero_rows(buf, n, p)\n\n"
        "    @classmethod\n    def _total(cls, buf, n, p):\n        return cls._sum_rows(buf, n, p)\n" + STEP.replace(
            "{WRITE}", "self.seq_lens[:num_reqs] = so.lens").replace(
            "{CALL}", "self.{F}(self.seq_lens, num_reqs, num_reqs_padded)").replace("{VIEW}", "self.seq_lens"),
    }, ("_total", "_zero")),
}


def _run(tmp_path, case: str, which: int):
    files, names = CASES[case]
    files = {"pkg/__init__.py": "", **files}
    out = check_files(tmp_path, files, ["pkg/runner.py"], {"F": names[which]})
    text = files["pkg/runner.py"].replace("{F}", names[which])
    sink = next(i for i, line in enumerate(text.splitlines(), 1) if "CommonAttentionMetadata(seq_lens=" in line)
    return [(f.code, f.field, f.line == sink) for f in out]


@pytest.mark.parametrize("case", sorted(CASES))
def test_code_that_writes_no_padding_row_leaves_the_finding(tmp_path, case):
    assert _run(tmp_path, case, 0) == [("PAD001", "seq_lens", True)]


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_reset_in_a_module_that_names_no_count_is_seen(tmp_path, case):
    assert _run(tmp_path, case, 1) == []
