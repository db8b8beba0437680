"""A nested function that calls itself is followed once, as a recursive method is.

SGLang 0.5.23's ``prepare_hicache_staging`` (``mem_cache/kv_cache_builder.py``) defines
``def prepare(pool, ...)`` in its body, which walks composite KV pools by calling itself two
or three times per level (``prepare(pool.full_kv_pool)``, ``prepare(pool.swa_kv_pool, ...)``).
The interpreter cut recursion by the name of the function in the call path, and a nested
function's name there is its caller's plus its own (``prepare_hicache_staging.prepare.prepare``):
it grew at each level, so the recursion was never seen and was followed to the depth bound, 3
calls a level, 64 levels (a tree run of SGLang that reached it did not finish).  A recursive call
of a function already on the call path is not followed (its arguments are handed to code the
analysis does not read), whatever the function.

Written from scratch in that shape.  ``{BODY}`` is the nested functions, ``{RESET}`` the reset of
the padding rows of ``seq_lens`` before the metadata is built.
"""

from __future__ import annotations

import pytest

from .project_files import check_text, count_bodies

RUNNER = '''\
import torch


class CommonAttentionMetadata:
    def __init__(self, seq_lens, num_reqs):
        self.seq_lens = seq_lens
        self.num_reqs = num_reqs


class Runner:
    def __init__(self, max_num_reqs: int) -> None:
        self.seq_lens = torch.zeros(max_num_reqs, dtype=torch.int32)

    def execute_model(self, pool, num_reqs: int, num_reqs_padded: int):
{BODY}
        walk(pool)
        {RESET}
        return CommonAttentionMetadata(seq_lens=self.seq_lens[:num_reqs_padded], num_reqs=num_reqs_padded)
'''

# three recursive calls a level, each under its own test (paths multiply at every level)
SELF = '''\
        def walk(p, drafts=()):
            if isinstance(p, tuple):
                walk(p[0])
                walk(p[1], drafts)
            elif isinstance(p, list):
                walk(p[0], drafts)
            else:
                p.prepare(len(drafts))
'''
# two nested functions calling each other
MUTUAL = '''\
        def walk(p, flag=False):
            if isinstance(p, tuple):
                visit(p[0])
                visit(p[1], True)
            else:
                p.prepare(flag)

        def visit(p, flag=False):
            if isinstance(p, list):
                walk(p[0])
                walk(p[1], flag)
            walk(p, True)
'''
RESET = "self.seq_lens[num_reqs:num_reqs_padded].zero_()"
#: function bodies the interpreter may run for one check of the fixture before the test stops it
#: (with the fix: 4, the entry point and the nested functions; before it, thousands and more)
MAX_BODIES = 200


@pytest.fixture
def runs(monkeypatch):
    """The function bodies the interpreter runs, by name (the check fails past :data:`MAX_BODIES`)."""
    return count_bodies(monkeypatch, MAX_BODIES)


@pytest.mark.parametrize("body", [SELF, MUTUAL], ids=["calls itself", "two call each other"])
@pytest.mark.parametrize("reset, expected", [
    # rows [num_reqs:num_reqs_padded] of `seq_lens` hold an earlier step's lengths
    ("pass", [("PAD001", "seq_lens")]),
    (RESET, []),
])
def test_recursive_nested_functions_are_followed_once(tmp_path, runs, body, reset, expected):
    got = check_text(tmp_path, RUNNER.replace("{BODY}", body.rstrip("\n")).replace("{RESET}", reset))
    assert sorted((f.code, f.field) for f in got) == expected
    # each nested function ran, and none inside itself (`execute_model.walk.visit.walk`)
    nested = [q.split("Runner.execute_model", 1)[1].split(".")[1:] for q in runs if "execute_model." in q]
    assert {"walk"} <= {n[0] for n in nested}
    assert all(len(n) == len(set(n)) for n in nested), runs
