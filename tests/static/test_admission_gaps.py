"""A row that admission writes on some paths only (PAD003, the admission half of the row
lifecycle).

A class keeps one row per request in persistent buffers and reuses rows: the row a finished
request held is handed to the next request admitted.  When the admitting method writes a
buffer's row only under a condition on the request (``if params.bad_words: ... n`` with no
``else``, or an early ``return`` before the write) and no other method of the class writes that
row (no removal resets it, no step refreshes it), a request admitted on the other path keeps
the value the row's previous request left, and the class's consumer reads it as the new
request's.  The shape is vLLM Model Runner V2's sampling states (``BadWordsState``,
``LogitBiasState``, ``LoraState``: each writes ``num_*[req_idx] = 0`` on the path without the
feature, and deleting that write is the bug), and the v1 ``InputBatch``, whose
``remove_request`` resets the conditionally admitted ``allowed_token_ids`` mask row.  Written
from scratch.

Each expectation is read off the source below: the write's line, the condition it runs under,
and the consumer that reads the row.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

from padlint.analysis.lifecycle import module_lifecycles
from padlint.analysis.project import Project

from .project_files import check_files
from .test_project_fixtures import _env

STATE = '''\
import numpy as np
import torch


class BadWordsState:
    def __init__(self, max_num_reqs: int) -> None:
        self.num_bad_words = np.zeros(max_num_reqs, dtype=np.int32)
        self.enabled = True

    def add_request(self, req_idx: int, params) -> bool:
        words = params.bad_words
        if not words:
            {EARLY}
            return False
        self.num_bad_words[req_idx] = len(words)
        return True

    {OTHER}

    def apply(self, logits, idx_mapping):
        return apply_bad_words(logits, self.num_bad_words, idx_mapping)
'''


def _found(tmp_path: Path, early: str = "pass", other: str = "pass") -> list:
    got = check_files(tmp_path, {"pkg/__init__.py": "", "pkg/state.py": STATE}, ["pkg/state.py"],
                      {"EARLY": early, "OTHER": other})
    return [f for f in got if f.code == "PAD003"]


def test_an_early_return_without_the_write_is_a_gap(tmp_path):
    # `if not words: return False` admits the request without writing its row: the row keeps the
    # previous request's count, which `apply` hands to the kernel
    (f,) = _found(tmp_path)
    assert (f.line, f.field, f.function) == (15, "num_bad_words", "BadWordsState.add_request")
    assert "writes row `req_idx` of `num_bad_words` only when `words`" in f.message
    assert "keeps the value the row's previous request left, which `apply` reads (line 21)" in f.message
    # the buffer is allocated with zeros: the fix writes that value first thing in admission
    assert f.fix is not None and f.fix.text == "self.num_bad_words[req_idx] = 0"
    assert f.fix.line == 11 and f.fix.indent == " " * 8 and not f.fix.after and not f.fix.safe
    assert [t.line for t in f.trace] == [15, 21]


def test_the_write_on_the_early_path_closes_it(tmp_path):
    # vLLM MRV2 0.33.0's BadWordsState: `self.num_bad_words.np[req_idx] = 0` before the return
    assert _found(tmp_path, early="self.num_bad_words[req_idx] = 0") == []


def test_a_removal_that_resets_the_row_closes_it(tmp_path):
    other = "def remove_request(self, req_idx: int) -> None:\n        self.num_bad_words[req_idx] = 0"
    assert _found(tmp_path, other=other) == []


def test_a_row_moved_or_copied_is_no_reset_and_no_read(tmp_path):
    # a method that only copies rows of the buffer into other rows (a move, a permutation) neither
    # resets the freed row nor consumes it: the gap stays, with `apply` as its reader
    other = ("def swap(self, a: int, b: int) -> None:\n"
             "        self.num_bad_words[[a, b]] = self.num_bad_words[[b, a]]")
    (f,) = _found(tmp_path, other=other)
    assert "which `apply` reads" in f.message


def test_a_setting_of_the_object_is_no_condition_on_the_request(tmp_path):
    # `if self.enabled:` is the same for every request (assigned in __init__ only): every request
    # writes the row, or none does
    src = STATE.replace("words = params.bad_words\n        if not words:", "words = params.bad_words\n"
                        "        if not self.enabled:")
    got = check_files(tmp_path, {"pkg/__init__.py": "", "pkg/state.py": src}, ["pkg/state.py"],
                      {"EARLY": "pass", "OTHER": "pass"})
    assert [f for f in got if f.code == "PAD003"] == []
    # ... but an attribute another method assigns is state, not a setting: the gap is back
    toggled = src.replace("{OTHER}", "def toggle(self) -> None:\n        self.enabled = False")
    got = check_files(tmp_path, {"pkg/__init__.py": "", "pkg/state.py": toggled}, ["pkg/state.py"],
                      {"EARLY": "pass"})
    assert [f.field for f in got if f.code == "PAD003"] == ["num_bad_words"]


def _life(src: str):
    pr = Project()
    key = pr.add_source("m.py", textwrap.dedent(src), "m.py")
    lives = module_lifecycles(pr, key)
    return lives[0] if lives else None


def test_a_write_unless_equal_covers_the_row():
    # `if buf[i] != v: buf[i] = v` leaves `v` in the row on both paths (MRV2 ThinkingBudgetState)
    life = _life("""
        import numpy as np

        class S:
            def __init__(self, n):
                self.budget = np.zeros(n, dtype=np.int64)

            def add_request(self, idx, params):
                budget = params.budget if params.budget is not None else -1
                if self.budget[idx] != budget:
                    self.budget[idx] = budget

            def apply(self, x):
                return kernel(x, self.budget)
    """)
    assert life is None or not life.gaps


def test_a_buffer_no_other_method_reads_is_not_reported():
    life = _life("""
        import numpy as np

        class S:
            def __init__(self, n):
                self.lens = np.zeros(n, dtype=np.int32)

            def add_request(self, idx, params):
                if params.lens:
                    self.lens[idx] = params.lens
    """)
    assert life is None or not life.gaps


def test_a_tensor_container_given_a_dtype_is_a_buffer():
    # MRV2's `UvaBackedTensor(n, dtype=...)`: rows of `.np` are the buffer's rows
    life = _life("""
        import torch

        class LoraState:
            def __init__(self, n):
                self.lora_ids = UvaBackedTensor(n, dtype=torch.int32)

            def add_request(self, req_index, lora_request):
                if lora_request is not None:
                    self.lora_ids.np[req_index] = lora_request.lora_int_id

            def make_lora_inputs(self, idx_mapping):
                return self.lora_ids.np[idx_mapping]
    """)
    (g,) = life.gaps
    assert (g.attr, g.written, g.row, g.conditions) == ("lora_ids", "self.lora_ids.np", "req_index",
                                                          ("lora_request is not None",))
    assert (g.reader, g.line) == ("make_lora_inputs", 10)


def test_an_early_return_makes_admission_conditional_for_a_move_too():
    # before, `return` in a branch fell through to the write after the `if`: admission was taken
    # to write the row on every path, and the vacated row of a move was accepted
    life = _life("""
        import numpy as np

        class S:
            def __init__(self, n):
                self.bias = np.zeros(n, dtype=np.float32)

            def add_request(self, idx, params):
                if params.bias is None:
                    return
                self.bias[idx] = params.bias

            def condense(self, empty, last):
                self.bias[empty] = self.bias[last]
    """)
    cov = life.coverage("bias")
    assert (cov.status, cov.conditions, cov.line) == ("conditional", ("params.bias is not None",), 11)


def test_the_profile_names_a_consumer_that_ignores_the_row(tmp_path):
    # vLLM's profile exempts `embeds_ptrs`: its kernel returns before loading the pointer of a
    # request whose `embeds_lens` row admission set to 0
    src = STATE.replace("num_bad_words", "embeds_ptrs")
    got = check_files(tmp_path, {"pkg/__init__.py": "", "pkg/state.py": src}, ["pkg/state.py"],
                      {"EARLY": "pass", "OTHER": "pass"})
    assert [f for f in got if f.code == "PAD003"] == []


def test_the_fix_writes_the_row_on_every_admission(tmp_path):
    work = tmp_path / "w"
    (work / "pkg").mkdir(parents=True)
    (work / "pkg" / "__init__.py").write_text("")
    (work / "pkg" / "state.py").write_text(STATE.replace("{EARLY}", "pass").replace("{OTHER}", "pass"))

    def run(*extra: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "padlint", "check", ".", "--select", "PAD003", "--no-cache",
                               "--profile", "vllm", *extra], cwd=work, env=_env(), capture_output=True,
                              text=True, check=False, timeout=300)

    before = json.loads(run("--format", "json").stdout)
    assert [f["line"] for f in before["findings"]] == [15]
    assert run("--fix", "--unsafe-fixes").returncode == 0
    text = (work / "pkg" / "state.py").read_text()
    assert "        self.num_bad_words[req_idx] = 0\n        words = params.bad_words\n" in text
    after = json.loads(run("--format", "json").stdout)
    assert after["findings"] == []


LENGTH_PREFIXED = '''\
import torch


class StopTokensState:
    def __init__(self, max_num_reqs: int, max_ids: int) -> None:
        self.stop_ids = torch.zeros((max_num_reqs, max_ids), dtype=torch.int32)
        self.num_stop_ids = torch.zeros(max_num_reqs, dtype=torch.int32)
        self.num_stop_ids_np = self.num_stop_ids.numpy()

    def add_request(self, req_idx: int, params) -> None:
        ids = params.stop_token_ids
        if ids:
            n = len(ids)
            self.num_stop_ids_np[req_idx] = n
            self.stop_ids{COLS} = torch.tensor(ids, dtype=torch.int32)
        else:
            {ELSE}

    def apply(self, logits, idx_mapping):
        return apply_stop_tokens(logits, idx_mapping, self.num_stop_ids, self.stop_ids)
'''


def _prefixed(tmp_path: Path, cols: str = "[req_idx, :n]", other: str = "self.num_stop_ids_np[req_idx] = 0") -> list:
    got = check_files(tmp_path, {"pkg/__init__.py": "", "pkg/state.py": LENGTH_PREFIXED}, ["pkg/state.py"],
                      {"COLS": cols, "ELSE": other})
    return [f for f in got if f.code == "PAD003"]


def test_a_row_whose_length_admission_writes_on_every_path_is_no_gap(tmp_path):
    # vLLM 0.34.0's CPU `CPULogitBiasState`: the id row is written up to `n` when the request has
    # stop tokens, and the count row is `n` there and 0 otherwise. The write's own columns past
    # `n` keep the previous request's ids on both paths, so the row's valid part is `[:count]`,
    # and admission writes that part on every path (nothing on the path where the count is 0)
    assert _prefixed(tmp_path) == []
    assert _prefixed(tmp_path, cols="[req_idx][:n]") == []


def test_the_count_written_on_one_path_only_leaves_both_rows_stale(tmp_path):
    # without the `else` write the count row keeps the previous request's length too: both rows
    # are reported (the count first: it decides how much of the id row the consumer reads)
    got = _prefixed(tmp_path, other="pass")
    assert sorted((f.line, f.field) for f in got) == [(14, "num_stop_ids"), (15, "stop_ids")]


def test_a_row_filled_to_another_bound_is_not_length_prefixed(tmp_path):
    # the id row is written up to a fixed width, not the stored count: the count does not bound it
    (f,) = _prefixed(tmp_path, cols="[req_idx, :4]")
    assert (f.line, f.field) == (15, "stop_ids")
