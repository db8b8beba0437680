"""The paths of dummy runs and those of real steps to one sink argument are two findings.

A dummy run calls the code that builds metadata with its padded count bound to the callee's
real count (``_build_attention_metadata(num_reqs_padded, num_reqs_padded)``): the engine judges
the callee in the caller's counts (the rows the dummy run did not write keep an earlier step's
values), and the call-path step says so.  A reset at the sink from the callee's real count fixes
a real step's path and writes no row on a dummy run's (there the real count is the padded one), so
the two are reported apart: a reset deleted from a real step's path is a new finding even where a
dummy run's finding at the same argument was there before (vLLM 0.21.0's ``is_prefilling``: the
real step's finding is gone in 0.22.0, the dummy run's stays; it is true, docs/triage-vllm-0.33.0.md).
A summary of a callee reused on another path records the callee's sinks on that path too, so every
stale path is counted.
"""

from __future__ import annotations

from padlint.analysis import check_source
from padlint.profile import load_profile

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
        RESET
        return self._build_attention_metadata(num_reqs, num_reqs_padded)

    def execute_dummy_batch(self, num_tokens: int):
        num_reqs = min(num_tokens, 8)
        num_reqs_padded = self.cudagraph_dispatcher.pad(num_reqs)
        self.seq_lens[:num_reqs] = 1
        return self._build_attention_metadata(num_reqs_padded, num_reqs_padded)

    def _build_attention_metadata(self, num_reqs: int, num_reqs_padded: int):
        return CommonAttentionMetadata(
            seq_lens=self.seq_lens[:num_reqs_padded],
            num_reqs=num_reqs_padded,
        )
'''


def _messages(reset: str) -> list[str]:
    src = RUNNER.replace("RESET", reset)
    return [f.message for f in check_source(src, "runner.py", load_profile("vllm"))]


def test_a_real_step_and_a_dummy_run_both_stale():
    # execute_model writes [:num_reqs] and resets nothing: rows [num_reqs:num_reqs_padded] are
    # stale; execute_dummy_batch writes its [:num_reqs] and passes its padded count as the
    # callee's real one: rows [num_reqs:num_reqs_padded] of its own counts are stale too.  Two
    # findings: the real step's, with the reset at the sink, and the dummy run's, without one
    src = RUNNER.replace("RESET", "pass")
    found = sorted(check_source(src, "runner.py", load_profile("vllm")), key=lambda f: "dummy" in f.message)
    assert len(found) == 2
    assert found[0].trace[0].note == "entry point `execute_model`"
    assert found[1].trace[0].note == "entry point `execute_dummy_batch`"
    real, dummy = (f.message for f in found)
    assert "dummy" not in real
    assert "add `self.seq_lens[num_reqs:num_reqs_padded] = 0` before line" in real
    assert "on the path execute_dummy_batch -> _build_attention_metadata, a dummy run" in dummy
    assert "a reset here from `num_reqs` writes no row on this path (the call of `_build_attention_metadata` " \
        "at line 20 passes the padded count as `num_reqs`)" in dummy
    assert "add `" not in dummy


def test_the_real_step_fixed_leaves_the_dummy_run():
    # the reset fixes the real step's path; the dummy run's path is left, and the message says
    # it is a dummy run (the message of the unfixed runner above said "1 of them")
    (msg,) = _messages("self.seq_lens[num_reqs:].fill_(0)")
    assert "on the path execute_dummy_batch -> _build_attention_metadata, a dummy run" in msg
    assert "execute_model" not in msg


def test_no_dummy_run_no_mention():
    src = RUNNER.replace("RESET", "pass")
    src = src[:src.index("    def execute_dummy_batch")] + src[src.index("    def _build_attention_metadata"):]
    (f,) = check_source(src, "runner.py", load_profile("vllm"))
    assert "dummy" not in f.message


def test_rows_a_dummy_run_did_not_write_are_named_with_the_dummy_run_and_no_fix():
    # fixtures/static/dummy_run_indices_buggy.py: `_dummy_run` resets only the padding rows of the
    # slot mapping, whose rows [0:num_tokens] the last real step wrote (live KV slots).  The
    # finding names every row of the slice as written there, the dummy run, and proposes no
    # statement at the sink: the sink is shared with the real step, whose rows must not be reset.
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "fixtures" / "static" / "dummy_run_indices_buggy.py"
    [f] = check_source(path.read_text(), "runner.py", load_profile("vllm"))
    assert (f.field, f.sink) == ("slot_mapping", "CommonAttentionMetadata")
    assert "rows [0:num_tokens_padded] were written by no step of the dummy run `_dummy_run`" in f.message
    assert "is the padded slice" not in f.message and "reset them to -1 in the dummy run" in f.message
    assert f.fix is None
    assert any("in the dummy run `_dummy_run`" in step.note for step in f.trace)


def test_the_two_findings_have_their_own_identity():
    # a baseline, SARIF and `--fix` tell the real step's finding from the dummy runs' one
    from padlint.baseline import fingerprint
    src = RUNNER.replace("RESET", "pass")
    found = check_source(src, "runner.py", load_profile("vllm"))
    assert sorted(f.dummy_run for f in found) == [False, True]
    assert len({fingerprint(f) for f in found}) == 2


def test_a_call_binding_two_padded_counts_as_real_ones_is_a_dummy_run_for_each():
    # the dummy run binds both `num_reqs` and, after it, `num_tokens` to padded counts: its path
    # is a dummy run for the request rows (the call's step names both bindings)
    src = (RUNNER.replace("RESET", "pass")
           .replace("return self._build_attention_metadata(num_reqs_padded, num_reqs_padded)",
                    "num_tokens_padded = num_reqs_padded\n"
                    "        return self._build_attention_metadata(num_reqs_padded, num_reqs_padded, "
                    "num_tokens_padded, num_tokens_padded)")
           .replace("return self._build_attention_metadata(num_reqs, num_reqs_padded)",
                    "return self._build_attention_metadata(num_reqs, num_reqs_padded, num_reqs, num_reqs)")
           .replace("def _build_attention_metadata(self, num_reqs: int, num_reqs_padded: int):",
                    "def _build_attention_metadata(self, num_reqs: int, num_reqs_padded: int, "
                    "num_tokens: int, num_tokens_padded: int):"))
    found = check_source(src, "runner.py", load_profile("vllm"))
    assert sorted(f.dummy_run for f in found) == [False, True], [f.message for f in found]
    dummy = next(f for f in found if f.dummy_run)
    step = next(t.note for t in dummy.trace if "as its real count" in t.note)
    # (the canonical name of `num_tokens_padded` is the count it was assigned, `num_reqs_padded`)
    assert "as its real count `num_reqs`" in step and "as its real count `num_tokens`" in step, step


DEEP = '''\
import torch
from vllm.v1.attention.backend import CommonAttentionMetadata


class ModelRunner:
    def __init__(self, n):
        self.seq_lens = torch.zeros(n, dtype=torch.int32)

    def execute_model(self, so):
        num_reqs = so.num_reqs
        num_reqs_padded = self.cudagraph_dispatcher.pad(num_reqs)
        self.seq_lens[:num_reqs] = so.seq_lens
        return self.f0(num_reqs, num_reqs_padded)
'''


def test_paths_through_reused_summaries_are_counted_once_per_call_site():
    # f_i calls f_{i+1} three times, 9 levels: 3**9 paths reach the sink; the summaries replay
    # the most direct of them, so what is recorded grows with the call sites, not the paths
    src = DEEP + "".join(
        f"\n    def f{i}(self, num_reqs, num_reqs_padded):\n"
        + "".join(f"        self.f{i + 1}(num_reqs, num_reqs_padded)\n" for _ in range(3))
        for i in range(9)) + (
        "\n    def f9(self, num_reqs, num_reqs_padded):\n"
        "        return CommonAttentionMetadata(seq_lens=self.seq_lens[:num_reqs_padded], num_reqs=num_reqs_padded)\n")
    (f,) = check_source(src, "runner.py", load_profile("vllm"))
    n = int(f.message.split(" on ", 1)[1].split(" paths", 1)[0])
    assert 9 <= n <= 3 * 9 + 1, f.message
