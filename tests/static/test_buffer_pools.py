"""Buffers taken from a module-level pool the process shares.

SGLang's graph runners build their input buffers fresh (``torch.zeros``) and then call
``self.buffers.share_buffers()``, which replaces each field with ``share_input_buffer(name, buf)``:
the first runner to register a name puts its buffer in a module-level dict, and every later
runner gets a view of that one.  A runner that captures in its constructor then binds rows that
another runner filled with live requests' indices.  The pool used to be an unknown name: the
first branch (``canonical = new_buffer``) won, the fields were the fresh zeros, and the capture
was judged clean.

A module-level mutable container (``{}``, ``[]``, ``dict()``, ``defaultdict(...)``) is now a pool:
each element read from it is a persistent location, holding what other calls put there.

Written from scratch, on the runner of ``test_shape_capture.py``: ``__init__`` builds the buffers
with zeros, shares them, and captures (``capture_one_batch_size`` binds ``[:bs]`` of the index
fields ``req_pool_indices`` and ``out_cache_loc``).  Expected findings come from where the rows
can come from: fresh zeros alone (no finding), or a pool's element (both index fields, at
capture) unless the capture resets them first.
"""

from __future__ import annotations

import pytest

from .project_files import check_files
from .test_shape_capture import ALL, BUFFERS, BUILT, RUNNER

SHARING = '''

_POOL_DECL


def share_input_buffer(name: str, new_buffer: torch.Tensor) -> torch.Tensor:
    canonical = _pool.get(name, None)
    if canonical is None:
        _pool[name] = new_buffer
        canonical = new_buffer
    return canonical.as_strided(new_buffer.size(), new_buffer.stride())


def on_cpu() -> bool:
    return torch.cuda.device_count() == 0


@dataclass
class SharedBuffers(Buffers):
    def share_buffers(self, *, exclude=()) -> None:
_SHARE_BODY
'''


SIMPLE = """\
        for f in fields(self):
            if f.name in exclude:
                continue
            setattr(self, f.name, share_input_buffer(f.name, getattr(self, f.name)))"""

# SGLang's shape: an early way out, and a branch for fields that hold dicts of buffers
EARLY_OUT = """\
        if on_cpu():  # an early way out: nothing is shared there
            return
        for f in fields(self):
            name = f.name
            if name in exclude:
                continue
            buffer = getattr(self, name)
            if buffer is None:
                continue
            if isinstance(buffer, dict):
                for sub_name, sub_buffer in buffer.items():
                    buffer[sub_name] = share_input_buffer(f"{name}.{sub_name}", sub_buffer)
            else:
                assert isinstance(buffer, torch.Tensor), name
                setattr(self, name, share_input_buffer(name, buffer))"""


def _found(tmp_path, *, pool: str = "_pool: dict = {}", share: str = "self.buffers.share_buffers()",
           reset: str = "pass", body: str = SIMPLE, sharing: str = SHARING) -> list[tuple[str, str]]:
    buffers = BUFFERS + sharing.replace("_POOL_DECL", pool).replace("_SHARE_BODY", body)
    runner = RUNNER.replace("from pkg.buffers import Buffers", "from pkg.buffers import SharedBuffers as Buffers")
    files = {"pkg/__init__.py": "", "pkg/buffers.py": buffers, "pkg/runner.py": runner}
    got = check_files(tmp_path, files, ["pkg/runner.py"],
                      {"RESET": reset, "ITER": "fields(self)", "TEST": "if f.name not in _INDEX: continue",
                       "CAPTURE": "capture_one_batch_size",
                       "INIT_CAPTURE": f"{share}\n        self.capture()", "RECAPTURE": "pass",
                       "BUILD": BUILT}, profile="sglang")
    return sorted((f.field, "capture" if "at capture" in f.message else f.message) for f in got)


def test_fresh_buffers_captured_in_the_constructor_hold_construction_values(tmp_path):
    # not shared: the rows the capture binds are the zeros `__init__` allocated
    assert _found(tmp_path, share="pass") == []


@pytest.mark.parametrize("pool", [
    "_pool: dict = {}",
    "_pool = dict()",
    "_pool = collections.defaultdict(lambda: None)",
])
def test_buffers_from_a_module_level_pool_hold_another_runners_rows(tmp_path, pool):
    # `share_input_buffer` may hand back the buffer another runner registered first: the index
    # fields the capture binds hold that runner's live rows
    if "collections" in pool:
        pool = "import collections\n" + pool
    assert _found(tmp_path, pool=pool) == ALL


def test_a_reset_before_the_capture_covers_the_pooled_rows(tmp_path):
    assert _found(tmp_path, reset="self.buffers.reset_index_buffers()") == []


def test_each_name_is_its_own_pooled_buffer(tmp_path):
    # the pool is keyed by the field's name (`share_input_buffer(f.name, ...)`): zeroing the
    # pooled `out_cache_loc` says nothing of the pooled `req_pool_indices`
    assert _found(tmp_path, reset="self.buffers.out_cache_loc.zero_()") == [("req_pool_indices", "capture")]


@pytest.mark.parametrize("pool", [
    # assigned twice at module level: not one container the analysis can name
    "_pool: dict = {}\n_pool = {}",
    # a module-level tuple is no pool: nothing can be put in it
    "_pool = ()",
])
def test_what_is_not_one_mutable_container_is_not_a_pool(tmp_path, pool):
    # `_pool.get(...)` is then an unknown value, and the fresh buffer wins the join
    assert _found(tmp_path, pool=pool) == []


def test_a_pool_read_by_subscript(tmp_path):
    # `if name not in _pool: _pool[name] = new_buffer` then `return _pool[name]`
    sharing = SHARING.replace(
        "    canonical = _pool.get(name, None)\n    if canonical is None:\n"
        "        _pool[name] = new_buffer\n        canonical = new_buffer\n"
        "    return canonical.as_strided(new_buffer.size(), new_buffer.stride())",
        "    if name not in _pool:\n        _pool[name] = new_buffer\n    return _pool[name]")
    assert "return _pool[name]" in sharing
    assert _found(tmp_path, sharing=sharing) == ALL


def test_a_memo_of_tensors_the_module_builds_is_no_pool(tmp_path):
    # `_cache[name] = torch.zeros(...)`: the container holds what this module allocated (its
    # zeros), not buffers other runners hand in and fill: not a pool of stale rows
    memo = SHARING.replace("        _pool[name] = new_buffer\n", "        _pool[name] = torch.zeros_like(new_buffer)\n")
    assert "torch.zeros_like(new_buffer)" in memo
    assert _found(tmp_path, sharing=memo) == []


@pytest.mark.parametrize("store", [
    # a setter helper the module calls with tensors it builds: it never hands out a pooled buffer
    # in place of what it is given
    "_remember(name, torch.zeros_like(new_buffer))",
    # the parameter rebound to a tensor built here before it is stored
    "new_buffer = torch.zeros_like(new_buffer)\n        _pool[name] = new_buffer",
])
def test_what_the_module_builds_itself_is_no_pool(tmp_path, store):
    sharing = SHARING.replace("        _pool[name] = new_buffer\n", f"        {store}\n") + (
        "\n\ndef _remember(name, t):\n    _pool[name] = t\n")
    assert store in sharing
    assert _found(tmp_path, sharing=sharing) == []


def test_sglang_share_buffers_with_an_early_way_out(tmp_path):
    # the early return joined at the function's exit with the loop's end: the loop's rounds are
    # copies of the path, and the fields stored in all but the last round were not compared, so
    # the exit kept the early return's values (the fresh buffers) and the pool was lost (an xfail
    # until 2026-12-06: the ways out of a function now join every key that differs)
    assert _found(tmp_path, body=EARLY_OUT) == ALL


# SGLang 0.5.16's shape: the pool is reached through a method of the buffers class
# (`self._share_one_buffer(name, buffer)`, which returns `share_input_buffer(name, buffer)`), its
# result bound to a local before `setattr`
THROUGH_A_METHOD = EARLY_OUT.replace(
    "                setattr(self, name, share_input_buffer(name, buffer))",
    "                new_buffer = self._share_one_buffer(name, buffer)\n"
    "                setattr(self, name, new_buffer)")


def test_sglang_share_buffers_through_a_method_of_its_own(tmp_path):
    sharing = SHARING.replace(
        "    def share_buffers(self, *, exclude=()) -> None:",
        "    def _share_one_buffer(self, name: str, new_buffer: torch.Tensor) -> torch.Tensor:\n"
        "        return share_input_buffer(name, new_buffer)\n\n"
        "    def share_buffers(self, *, exclude=()) -> None:")
    assert "new_buffer = self._share_one_buffer(name, buffer)" in THROUGH_A_METHOD
    assert _found(tmp_path, body=THROUGH_A_METHOD, sharing=sharing) == ALL


# SGLang 0.5.16 keys its pool by `(name, numel, dtype, device)`, and its capture refills one pooled
# buffer (`self.buffers.seq_lens.fill_(...)`) before it captures.  A tuple key whose parts are not
# all known used to name no element: every field was the pool's one element, and the refill of one
# field reset them all (the first capture's findings were lost).  A tuple that differs in a known
# part (the field's name) is another key: another element.
TUPLE_KEY = SHARING.replace(
    "    canonical = _pool.get(name, None)\n",
    "    key = (name, new_buffer.numel(), new_buffer.dtype)\n    canonical = _pool.get(key, None)\n").replace(
    "        _pool[name] = new_buffer\n", "        _pool[key] = new_buffer\n")


@pytest.mark.parametrize("sharing", [
    TUPLE_KEY,
    # the tuple written at the call
    SHARING.replace("_pool.get(name, None)", "_pool.get((name, new_buffer.numel()), None)").replace(
        "_pool[name] = new_buffer", "_pool[(name, new_buffer.numel())] = new_buffer"),
])
def test_a_pool_keyed_by_a_tuple_with_the_name_in_it(tmp_path, sharing):
    assert "_pool.get(name, None)" not in sharing
    # refilling the pooled `input_ids` says nothing of the pooled index fields
    assert _found(tmp_path, sharing=sharing, reset="self.buffers.input_ids.fill_(1)") == ALL
    # and a reset of the index fields still covers them (`reset_index_buffers` zeroes both)
    assert _found(tmp_path, sharing=sharing, reset="self.buffers.reset_index_buffers()") == []
    # one field's reset is that field's alone
    assert _found(tmp_path, sharing=sharing, reset="self.buffers.out_cache_loc.zero_()") == [
        ("req_pool_indices", "capture")]


def test_a_pool_keyed_by_nothing_known_is_one_element(tmp_path):
    # `key = (new_buffer.numel(), new_buffer.dtype)`: no part the analysis knows; the pool's any
    # element stands for every field.  Without a refill the fields are the pool's (reported)
    sharing = TUPLE_KEY.replace("key = (name, new_buffer.numel(), new_buffer.dtype)",
                                "key = (new_buffer.numel(), new_buffer.dtype)")
    assert "key = (new_buffer.numel()" in sharing
    assert _found(tmp_path, sharing=sharing) == ALL
    # a refill of one field through that element is a write of one of the pooled buffers, not of
    # each: the index fields may still hold another runner's rows
    assert _found(tmp_path, sharing=sharing, reset="self.buffers.input_ids.fill_(1)") == ALL


@pytest.mark.parametrize("write", [
    "self.buffers.input_ids.copy_(torch.zeros(8, dtype=torch.int64))",
    "self.buffers.input_ids[:] = 1",
    "self.buffers.input_ids *= 0",
])
def test_every_write_through_the_any_element_is_weak(tmp_path, write):
    # a copy or an item store into one pooled buffer, through the pool's any element, is no
    # reset of the others either (the weak update is the heap's, whatever statement writes)
    sharing = TUPLE_KEY.replace("key = (name, new_buffer.numel(), new_buffer.dtype)",
                                "key = (new_buffer.numel(), new_buffer.dtype)")
    assert _found(tmp_path, sharing=sharing, reset=write) == ALL
