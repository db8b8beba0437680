"""Branches on a literal argument: a callee's test of a parameter the caller passed ``True`` or
``False`` (or left at a literal default) has one outcome on that call.

Engines thread a flag through their runners: vLLM's ``_dummy_run`` calls ``execute_model(...,
dummy_run=True)`` and ``execute_model`` prepares real inputs only ``if not dummy_run:``.  Both
branches used to be paths of every call, so a path that no call takes (the real-input branch
under a dummy run) could report a padded slice, and a reset made under the flag the caller sets
was joined with the branch that skips it.

Written from scratch.  ``execute_model`` writes the real rows ``self.seq_lens[:num_reqs]`` and
calls ``_build``, which hands ``self.seq_lens[:num_reqs_padded]`` to ``CommonAttentionMetadata``
after ``BODY``; ``BODY`` resets the padding rows ``[num_reqs:num_reqs_padded]`` under a test of
its parameter ``reset`` (default ``False``).  Expected findings come from which branch each call
takes: a reset on the branch taken leaves none; a reset skipped (``reset=False``, the default, a
value not known, or a name rebound on some path) leaves one PAD001 ``seq_lens`` at the sink.
"""

from __future__ import annotations

import pytest

from .project_files import check_text

RUNNER = '''\
import torch
from vllm.v1.attention.backend import CommonAttentionMetadata


class ModelRunner:
    def __init__(self, max_num_reqs: int) -> None:
        self.seq_lens = torch.zeros(max_num_reqs, dtype=torch.int32)

    def execute_model(self, scheduler_output):
        num_reqs = scheduler_output.num_reqs
        num_reqs_padded = self.cudagraph_dispatcher.pad(num_reqs)
        self.seq_lens[:num_reqs] = torch.as_tensor(scheduler_output.seq_lens)
        return CALL

    def _build(self, num_reqs, num_reqs_padded, reset=False):
        BODY
        return CommonAttentionMetadata(
            seq_lens=self.seq_lens[:num_reqs_padded],
            num_reqs=num_reqs_padded,
        )
'''
SINK = "            seq_lens=self.seq_lens[:num_reqs_padded],"
RESET = "self.seq_lens[num_reqs:num_reqs_padded] = 0"
IF_RESET = f"if reset:\n            {RESET}"
STALE = [("PAD001", "sink", "seq_lens")]


def _findings(tmp_path, call: str, body: str) -> list[tuple[str, str, str]]:
    text = RUNNER.replace("CALL", f"self._build({call})").replace("BODY", body)
    sink = text.splitlines().index(SINK) + 1
    out = check_text(tmp_path, text, "runner.py", "vllm")
    return [(f.code, "sink" if f.line == sink else str(f.line), f.field) for f in out]


@pytest.mark.parametrize("call, body", [
    # the flag passed by keyword and by position: the branch that resets is the path
    ("num_reqs, num_reqs_padded, reset=True", IF_RESET),
    ("num_reqs, num_reqs_padded, True", IF_RESET),
    # `not`: the early return is not taken, the reset after it runs
    ("num_reqs, num_reqs_padded, reset=True", f"if not reset:\n            return None\n        {RESET}"),
    # `and` / `or` with an unknown operand: `True and c` is `c` (the test of the padded count
    # guards the reset), `True or c` is true
    ("num_reqs, num_reqs_padded, reset=True", f"if reset and num_reqs_padded > num_reqs:\n            {RESET}"),
    ("num_reqs, num_reqs_padded, reset=True", f"if reset or self.other:\n            {RESET}"),
    # a name bound to `not reset`: False, so the else branch (the reset) is the path
    ("num_reqs, num_reqs_padded, reset=True", f"keep = not reset\n        if keep:\n            pass\n"
                                               f"        else:\n            {RESET}"),
    # a conditional expression on the flag picks its branch: the reset through `tail`
    ("num_reqs, num_reqs_padded, reset=True",
     f"tail = self.seq_lens[num_reqs:num_reqs_padded] if reset else None\n"
     f"        if tail is not None:\n            tail.zero_()"),
])
def test_the_branch_a_literal_argument_takes_is_the_only_path(tmp_path, call, body):
    assert _findings(tmp_path, call, body) == []


@pytest.mark.parametrize("call, body", [
    # the other literal, and the literal default (`reset=False`) when nothing is passed
    ("num_reqs, num_reqs_padded, reset=False", IF_RESET),
    ("num_reqs, num_reqs_padded", IF_RESET),
    # a value the analysis does not know: both branches are paths
    ("num_reqs, num_reqs_padded, reset=scheduler_output.flag", IF_RESET),
    # rebound on one path: after the join the name may be False
    ("num_reqs, num_reqs_padded, reset=True",
     f"if self.other:\n            reset = False\n        {IF_RESET}"),
    # rebound in a loop that may run: the loop head joins True with False
    ("num_reqs, num_reqs_padded, reset=True",
     f"while self.other:\n            reset = False\n        {IF_RESET}"),
    # `*args` / `**opts` may give the parameter: its default is not known to hold
    ("*(num_reqs, num_reqs_padded)", IF_RESET.replace("if reset:", "if not reset:")),
    ("num_reqs, num_reqs_padded, **scheduler_output.opts", IF_RESET.replace("if reset:", "if not reset:")),
    # a positional argument after `*args` binds a parameter the analysis cannot tell
    ("*scheduler_output.counts, num_reqs, num_reqs_padded, True", IF_RESET),
    # `False and c` is false whatever `c` is
    ("num_reqs, num_reqs_padded, reset=False", f"if reset and num_reqs_padded > num_reqs:\n            {RESET}"),
])
def test_a_skipped_or_unknown_branch_leaves_the_finding(tmp_path, call, body):
    assert _findings(tmp_path, call, body) == STALE


def test_a_flag_stored_in_a_field_on_some_paths_is_not_a_literal(tmp_path):
    # `self.flag = True` on one path only: on the other, `self.flag` holds what an earlier step
    # stored (False, maybe), so both branches of the test stay paths
    body = f"if self.other:\n            self.flag = reset\n        if self.flag:\n            {RESET}"
    assert _findings(tmp_path, "num_reqs, num_reqs_padded, reset=True", body) == STALE


def test_a_literal_default_left_unpassed_holds(tmp_path):
    # `reset=True` as the default, the call passing nothing for it: the reset runs
    text_default = RUNNER.replace("reset=False", "reset=True")
    text = text_default.replace("CALL", "self._build(num_reqs, num_reqs_padded)").replace("BODY", IF_RESET)
    assert check_text(tmp_path, text, "runner.py", "vllm") == []


@pytest.mark.parametrize("body, expected", [
    # `True or x` is True whatever x is (short-circuit), held by a name and tested later
    (f"keep = reset or self.other\n        if keep:\n            {RESET}", []),
    (f"skip = (not reset) and self.other\n        if not skip:\n            {RESET}", []),
    # rebound where the interpreter does not bind: the literal is not trusted
    (f"reset &= self.other\n        {IF_RESET}", STALE),
    (f"def off():\n            nonlocal reset\n            reset = False\n        off()\n        {IF_RESET}", STALE),
    # a walrus in a comprehension binds the function's name (comprehensions are evaluated apart)
    (f"xs = [(reset := x) for x in self.items]\n        {IF_RESET}", STALE),
    # a handler may start where the try body left `reset` False (it starts from before or after)
    (f"try:\n            reset = False\n            self.risky()\n            reset = True\n"
     f"        except Exception:\n            pass\n        {IF_RESET}", STALE),
    # a closure taken as a value sees the name when it is called, not when it was defined
    (f"def fin():\n            if reset:\n                {RESET}\n        cb = fin\n        reset = self.other\n"
     f"        cb()", STALE),
    # a flag a loop turns off: at the head of a later round it may be False
])
def test_literals_through_names(tmp_path, body, expected):
    assert _findings(tmp_path, "num_reqs, num_reqs_padded, reset=True", body) == expected


@pytest.mark.parametrize("setup", [
    # a dict whose keys the code may add to: the default is not known to hold
    "kw = {}\n        kw.update(scheduler_output.opts)",
    # a key set on one path only
    "kw = {}\n        if scheduler_output.flag:\n            kw['reset'] = False",
])
def test_keyword_dicts_do_not_fix_a_default(tmp_path, setup):
    # `if not reset:` with the default False: a default taken to hold would run the reset and hide
    # the finding
    text = RUNNER.replace("        return CALL", f"        {setup}\n        return self._build(num_reqs, num_reqs_padded, **kw)")
    text = text.replace("BODY", IF_RESET.replace("if reset:", "if not reset:"))
    sink = text.splitlines().index(SINK) + 1
    got = [(f.code, "sink" if f.line == sink else str(f.line), f.field) for f in check_text(tmp_path, text)]
    assert got == STALE


def test_a_flag_a_loop_turns_off_late_is_not_a_literal_at_the_head(tmp_path):
    # the flag reaches False only in the loop's fourth round, after the rounds the interpreter
    # runs (LOOP_ROUNDS): a name the body rebinds holds no literal at the loop's head, so the
    # early return with the padded slice (no reset before it) is a path
    body = ("f0 = f1 = f2 = reset\n        for x in self.items:\n            if not f0:\n"
            "                return CommonAttentionMetadata(seq_lens=self.seq_lens[:num_reqs_padded],\n"
            "                                               num_reqs=num_reqs_padded)\n"
            "            f0 = f1\n            f1 = f2\n            f2 = False\n"
            f"        {RESET}")
    got = _findings(tmp_path, "num_reqs, num_reqs_padded, reset=True", body)
    assert [(code, where == "sink", fld) for code, where, fld in got] == [("PAD001", False, "seq_lens")]
